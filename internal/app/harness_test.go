package app

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// recorder is a Presenter that hands checkpoints and finished runs to the test.
type recorder struct {
	offers   chan checkpoints.Instance
	stopped  chan checkpoints.Instance // checkpoints whose reminders stopped (escalated)
	done     chan *pipeline.Run
	mu       sync.Mutex
	decided  []checkpoints.Instance
	progress int
	notices  []string
}

func newRecorder() *recorder {
	return &recorder{offers: make(chan checkpoints.Instance, 32), stopped: make(chan checkpoints.Instance, 4), done: make(chan *pipeline.Run, 4)}
}

func (r *recorder) Offer(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	r.offers <- *inst
	return nil
}

func (r *recorder) RemindersStopped(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	r.stopped <- *inst
	return nil
}

func (r *recorder) Decided(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decided = append(r.decided, *inst)
	return nil
}

func (r *recorder) Progress(context.Context, *pipeline.Run) {
	r.mu.Lock()
	r.progress++
	r.mu.Unlock()
}

// Notice records a passing note (pipeline.Presenter).
func (r *recorder) Notice(_ context.Context, _ *pipeline.Run, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, text)
}

func (r *recorder) Stranded(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}

func (r *recorder) BreakerTripped(context.Context, checkpoints.Definition, int) error { return nil }

func (r *recorder) Finished(_ context.Context, run *pipeline.Run) error {
	r.done <- run
	return nil
}

type harness struct {
	t     testing.TB
	app   *App
	web   *researchtest.Web
	llm   *llmtest.Server
	res   *researchtest.Researcher
	rec   *recorder
	clock *researchtest.Clock
}

// newHarness assembles researchbot against a real redis-server, the fake web
// and the scripted model, with env overriding the defaults.
func newHarness(t testing.TB, res *researchtest.Researcher, env map[string]string) *harness {
	t.Helper()
	srv, _ := redistest.Start(t)
	return newHarnessAt(t, srv.URL, res, env)
}

// newHarnessAt is newHarness against the Redis at redisURL.
func newHarnessAt(t testing.TB, redisURL string, res *researchtest.Researcher, env map[string]string) *harness {
	t.Helper()
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	model := llmtest.NewServer(t, res.Respond)
	env = mergeEnv(map[string]string{"LLM_PRICES": "gpt-4o-mini=0.15/0.6"}, env)
	h := &harness{t: t, web: web, llm: model, res: res, rec: newRecorder(), clock: &researchtest.Clock{}}
	h.app = startApp(t, testConfig(t, redisURL, model.URL(), web.URL(), env), Options{
		Presenters:   map[string]pipeline.Presenter{"test": h.rec},
		DefaultQueue: "test",
		Clock:        h.clock,
	})
	return h
}

func mergeEnv(base, over map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{base, over} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// testConfig is the configuration of a test: real Redis, the fake model and
// the fake web (as SearXNG), with env overriding the defaults.
func testConfig(t testing.TB, redisURL, modelURL, webURL string, env map[string]string) config.Config {
	t.Helper()
	vars := mergeEnv(map[string]string{
		"OPENAI_API_KEY":               "sk-test-secret",
		"OPENAI_BASE_URL":              modelURL,
		"SEARXNG_URL":                  webURL,
		"FETCH_ALLOW_PRIVATE_NETWORKS": "true",
		"REDIS_URL":                    redisURL,
		"LLM_MAX_RETRIES":              "2",
		"WORKER_CONCURRENCY":           "4",
	}, env)
	cfg, err := config.Load(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// startApp assembles researchbot and starts workers on opts.DefaultQueue,
// all stopped when the test ends.
func startApp(t testing.TB, cfg config.Config, opts Options) *App {
	t.Helper()
	opts.RetryDelay = func(int, error) time.Duration { return 50 * time.Millisecond }
	a, err := New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	stop, err := a.StartWorker([]string{opts.DefaultQueue})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return a
}

func (h *harness) start(mode string, limits pipeline.Limits) *pipeline.Run {
	h.t.Helper()
	r, err := h.app.Engine.Start(context.Background(), pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: mode, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "test"}, Limits: limits,
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

const waitLimit = 60 * time.Second

// next waits for the next checkpoint offered, or fails if the run finishes.
func (h *harness) next() checkpoints.Instance {
	h.t.Helper()
	select {
	case inst := <-h.rec.offers:
		return inst
	case r := <-h.rec.done:
		h.t.Fatalf("run finished (%s: %s %s) while a checkpoint was expected", r.Status, r.FallbackReason, r.Failure)
	case <-time.After(waitLimit):
		h.t.Fatal("no checkpoint offered in time")
	}
	return checkpoints.Instance{}
}

// finish waits for the run to finish, failing on an unexpected checkpoint.
func (h *harness) finish() *pipeline.Run {
	h.t.Helper()
	select {
	case r := <-h.rec.done:
		return r
	case inst := <-h.rec.offers:
		h.t.Fatalf("unexpected checkpoint %s while waiting for the end", inst.DefinitionID)
	case <-time.After(waitLimit):
		h.t.Fatal("run did not finish in time")
	}
	return nil
}

func (h *harness) decide(inst checkpoints.Instance, d checkpoints.Decision) *pipeline.Run {
	h.t.Helper()
	if d.By == "" {
		d.By = "U1"
	}
	r, err := h.app.Engine.Decide(context.Background(), inst.ID, d)
	if err != nil {
		h.t.Fatalf("decide %s %s: %v", inst.DefinitionID, d.Action, err)
	}
	return r
}

// assertCitationsFetched checks invariant 8 on a finished run.
func assertCitationsFetched(t *testing.T, r *pipeline.Run) {
	t.Helper()
	fetched := map[string]bool{}
	for _, p := range r.Pages {
		fetched[p.URL] = true
	}
	if r.Report == nil {
		t.Fatal("no report")
	}
	for _, ref := range r.Report.References {
		if !fetched[ref.URL] {
			t.Errorf("reference [%d] %s was never fetched", ref.N, ref.URL)
		}
	}
	for _, s := range r.Report.Sections {
		for _, n := range s.Citations {
			if n < 1 || n > len(r.Report.References) {
				t.Errorf("section %q cites [%d] with %d references", s.Title, n, len(r.Report.References))
			}
		}
	}
}

// optionValues returns the option values of a checkpoint's field.
func optionValues(inst checkpoints.Instance, key string) []string {
	var out []string
	for _, f := range inst.Fields {
		if f.Key == key {
			for _, o := range f.Options {
				out = append(out, o.Value)
			}
		}
	}
	return out
}

func callsOf(s *llmtest.Server, schema string) []llmtest.Call {
	var out []llmtest.Call
	for _, c := range s.Calls() {
		if c.SchemaName == schema {
			out = append(out, c)
		}
	}
	return out
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
