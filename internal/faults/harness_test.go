//go:build faults

package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// waitLimit bounds every wait of the suite.
const waitLimit = 90 * time.Second

// redisProc is a redis-server with an append-only file fsynced on every
// write (as the compose file runs it), which a test can kill -9, shut down
// and start again on the same port and directory.
type redisProc struct {
	t    testing.TB
	port int
	dir  string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// startRedis starts a durable redis-server for t, stopped when t ends.
func startRedis(t testing.TB) *redisProc {
	t.Helper()
	p := &redisProc{t: t, port: freePort(t), dir: t.TempDir()}
	p.start()
	t.Cleanup(p.kill)
	return p
}

// Addr is host:port of the server.
func (p *redisProc) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// start launches the server and waits for its "Ready" line.
func (p *redisProc) start() {
	p.t.Helper()
	cmd := exec.Command("redis-server", "--port", strconv.Itoa(p.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "yes", "--appendfsync", "always", "--dir", p.dir, "--logfile", "")
	out, err := cmd.StdoutPipe()
	if err != nil {
		p.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("start redis-server: %v", err)
	}
	ready := make(chan string, 1)
	done := make(chan struct{})
	go func() { // owner: this server; ends when it exits
		defer close(done)
		sc := bufio.NewScanner(out)
		var last string
		for sc.Scan() {
			last = sc.Text()
			if strings.Contains(last, "Ready to accept connections") {
				ready <- ""
				_, _ = io.Copy(io.Discard, out)
				_ = cmd.Wait()
				return
			}
		}
		ready <- last
		_ = cmd.Wait()
	}()
	select {
	case last := <-ready:
		if last != "" {
			p.t.Fatalf("redis-server exited before it was ready: %s", last)
		}
	case <-time.After(30 * time.Second):
		p.t.Fatal("redis-server was not ready in 30 s")
	}
	p.mu.Lock()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *redisProc) kill() {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-done
}

// shutdown is a graceful restart's first half: SHUTDOWN, as systemd or
// docker stop would ask.
func (p *redisProc) shutdown() {
	p.t.Helper()
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	p.cmd = nil
	p.mu.Unlock()
	_ = cmd.Process.Signal(sigterm)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		p.t.Fatal("redis-server did not shut down in 30 s")
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proxy is a toxiproxy TCP proxy in front of the Redis server: latency,
// a withheld reply or an outage are real TCP behaviour, not mocks.
type proxy struct {
	t *testing.T
	p *toxiproxy.Proxy
}

// newProxy starts a proxy to upstream, stopped when t ends.
func newProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, t.Name(), net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t))), upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return &proxy{t: t, p: p}
}

// URL is the REDIS_URL of a client behind the proxy.
func (x *proxy) URL() string { return "redis://" + x.p.Listen + "/0" }

// add adds a toxic, e.g. add("latency", "downstream", map[string]any{"latency": 2000}).
func (x *proxy) add(name, typ, stream string, attrs map[string]any) {
	x.t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "type": typ, "stream": stream, "attributes": attrs})
	if _, err := x.p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		x.t.Fatalf("add toxic %s: %v", name, err)
	}
}

// remove removes a toxic.
func (x *proxy) remove(name string) {
	if err := x.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		x.t.Errorf("remove toxic %s: %v", name, err)
	}
}

// down cuts every connection and refuses new ones; up lets them in again.
func (x *proxy) down() { x.p.Stop() }

func (x *proxy) up() {
	x.t.Helper()
	if err := x.p.Start(); err != nil && !errors.Is(err, toxiproxy.ErrProxyAlreadyStarted) {
		x.t.Fatal(err)
	}
}

// runTag marks a run's question in the soak ("soak-17"), so the model's
// gate counts calls in flight per run.
var runTag = regexp.MustCompile(`soak-\d+`)

// model is the fake OpenAI endpoint behind a gate that counts the calls in
// flight per schema (a call ends when its reply is sent or its client goes
// away), so a test sees two workers running one step at once.
type model struct {
	*llmtest.Server
	url string

	mu       sync.Mutex
	inFlight map[string]int
	peak     map[string]int
	started  map[string][]time.Time
	ended    map[string][]time.Time
}

func newModel(t testing.TB, r llmtest.Responder) *model {
	t.Helper()
	m := &model{Server: llmtest.NewServer(t, r), inFlight: map[string]int{}, peak: map[string]int{},
		started: map[string][]time.Time{}, ended: map[string][]time.Time{}}
	target, _ := url.Parse(strings.TrimSuffix(m.Server.URL(), "/v1"))
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ErrorLog = log.New(io.Discard, "", 0) // a cancelled call is the point, not news
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var wr struct {
			ResponseFormat struct {
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		_ = json.Unmarshal(body, &wr)
		schema := wr.ResponseFormat.JSONSchema.Name
		if tag := runTag.Find(body); tag != nil {
			schema += "|" + string(tag) // the soak's runs, told apart by their questions
		}
		m.mu.Lock()
		m.inFlight[schema]++
		m.peak[schema] = max(m.peak[schema], m.inFlight[schema])
		m.started[schema] = append(m.started[schema], time.Now())
		m.mu.Unlock()
		defer func() {
			m.mu.Lock()
			m.inFlight[schema]--
			m.ended[schema] = append(m.ended[schema], time.Now())
			m.mu.Unlock()
		}()
		rp.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	m.url = srv.URL + "/v1"
	return m
}

// URL is the OPENAI_BASE_URL of the gated endpoint.
func (m *model) URL() string { return m.url }

// stats returns, for a schema, the calls in flight now, the most ever in
// flight at once, and when calls started and ended.
func (m *model) stats(schema string) (now, peak int, started, ended []time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.inFlight[schema], m.peak[schema], append([]time.Time(nil), m.started[schema]...), append([]time.Time(nil), m.ended[schema]...)
}

// recorder is a Presenter that hands checkpoints and finished runs to the test.
type recorder struct {
	offers chan checkpoints.Instance
	done   chan *pipeline.Run
	mu     sync.Mutex
	shown  map[string]int // run id → finished presentations
}

func newRecorder() *recorder {
	return &recorder{offers: make(chan checkpoints.Instance, 1024), done: make(chan *pipeline.Run, 1024), shown: map[string]int{}}
}

func (r *recorder) Offer(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	r.offers <- *inst
	return nil
}

func (r *recorder) Decided(context.Context, *pipeline.Run, *checkpoints.Instance) error { return nil }
func (r *recorder) Progress(context.Context, *pipeline.Run)                             {}
func (r *recorder) Notice(context.Context, *pipeline.Run, string)                       {}
func (r *recorder) Stranded(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}
func (r *recorder) BreakerTripped(context.Context, checkpoints.Definition, int) error { return nil }
func (r *recorder) RemindersStopped(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}

func (r *recorder) Finished(_ context.Context, run *pipeline.Run) error {
	r.mu.Lock()
	r.shown[run.ID]++
	r.mu.Unlock()
	r.done <- run
	return nil
}

// next waits for the next checkpoint offered.
func (r *recorder) next(t testing.TB) checkpoints.Instance {
	t.Helper()
	select {
	case inst := <-r.offers:
		return inst
	case run := <-r.done:
		t.Fatalf("run finished (%s: %s%s) while a checkpoint was expected", run.Status, run.FallbackReason, run.Failure)
	case <-time.After(waitLimit):
		t.Fatal("no checkpoint offered in time")
	}
	return checkpoints.Instance{}
}

// finish waits for a run to finish.
func (r *recorder) finish(t testing.TB) *pipeline.Run {
	t.Helper()
	select {
	case run := <-r.done:
		return run
	case inst := <-r.offers:
		t.Fatalf("unexpected checkpoint %s while waiting for the end", inst.DefinitionID)
	case <-time.After(waitLimit):
		t.Fatal("run did not finish in time")
	}
	return nil
}

// world is one Redis, the fake model and web, and a recorder shared by
// every replica (as Slack is shared by every replica of the bot).
type world struct {
	t     *testing.T
	redis string // REDIS_URL of the real server
	model *model
	res   *researchtest.Researcher
	web   *researchtest.Web
	rec   *recorder
	env   map[string]string
}

func newWorld(t *testing.T, redisURL string, res *researchtest.Researcher, env map[string]string) *world {
	t.Helper()
	return &world{t: t, redis: redisURL, res: res, model: newModel(t, res.Respond),
		web: researchtest.NewWeb(t, researchtest.DefaultPages()...), rec: newRecorder(), env: env}
}

// config is the configuration of a replica reaching Redis at redisURL.
func (w *world) config(redisURL string) config.Config {
	w.t.Helper()
	vars := map[string]string{
		"OPENAI_API_KEY": "sk-test-secret", "OPENAI_BASE_URL": w.model.URL(), "SEARXNG_URL": w.web.URL(),
		"FETCH_ALLOW_PRIVATE_NETWORKS": "true", "REDIS_URL": redisURL, "LLM_MAX_RETRIES": "1",
		"WORKER_CONCURRENCY": "4", "RUN_LEASE": "2s", "LLM_PRICES": "gpt-4o-mini=0.15/0.6",
	}
	for k, v := range w.env {
		vars[k] = v
	}
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		w.t.Fatal(err)
	}
	return cfg
}

// logger logs to the test when FAULTS_DEBUG is set, else nowhere.
func (w *world) logger() *slog.Logger {
	if os.Getenv("FAULTS_DEBUG") == "" {
		return nil
	}
	return slog.New(slog.NewTextHandler(tlog{w.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tlog struct{ t testing.TB }

func (l tlog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// replica is one researchbot process: its own Redis connections (through
// redisURL, possibly a proxy) and, when it works, its own worker.
type replica struct {
	*app.App
	stop func()
	// http is its client of the model and search APIs.
	http *http.Client
}

// replica assembles a researchbot on redisURL; with work, it advances runs
// of the "test" queue. Everything stops when the test ends.
func (w *world) replica(redisURL string, work bool) *replica {
	w.t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	a, err := app.New(context.Background(), w.config(redisURL), app.Options{
		Presenters: map[string]pipeline.Presenter{"test": w.rec}, DefaultQueue: "test", HTTPClient: hc,
		RetryDelay: func(int, error) time.Duration { return suiteRetryDelay }, ShutdownTimeout: time.Second,
		Logger: w.logger(),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = a.Close() })
	r := &replica{App: a, stop: func() {}, http: hc}
	if work {
		stop, err := a.StartWorker([]string{"test"})
		if err != nil {
			w.t.Fatal(err)
		}
		r.stop = stop
		w.t.Cleanup(stop)
	}
	return r
}

// start starts a run on replica a.
func (w *world) start(a *replica, mode, question string) *pipeline.Run {
	w.t.Helper()
	if question == "" {
		question = "How well do heat pumps work in cold climates?"
	}
	r, err := a.Engine.Start(context.Background(), pipeline.Request{
		Question: question, Mode: mode, RequestedBy: "U1", Origin: pipeline.Origin{Kind: "test", Queue: "test"},
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// eventually polls cond (for state owned by other processes: Redis, the
// fake servers) until it holds or limit passes.
func eventually(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// analysisAfter waits for the first analysis call started after since (the
// step after the plan's approval) and for the draft review it leads to; it
// returns how long after since that call started and the most analysis
// calls in flight at once.
func (w *world) analysisAfter(t *testing.T, since time.Time) (took time.Duration, peak int) {
	t.Helper()
	eventually(t, waitLimit, "a worker calling the model for the next step", func() bool {
		_, _, started, _ := w.model.stats("analysis")
		for _, s := range started {
			if s.After(since) {
				took = s.Sub(since)
				return true
			}
		}
		return false
	})
	if draft := w.rec.next(t); draft.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("next checkpoint %s", draft.DefinitionID)
	}
	_, peak, _, _ = w.model.stats("analysis")
	return took, peak
}
