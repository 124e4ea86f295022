//go:build faults && soak

package faults

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// soakWorkerProcesses (TestSoak/worker_processes): 60 auto runs on a queue served by 3
// `researchbot worker` processes (the real binary, built into a temporary
// directory), one of which is killed with SIGKILL every 2 s and replaced,
// while a fourth worker — the witness — runs throughout. Every run ends;
// a run that did not complete failed for a reason the kills explain; no
// step had two calls in flight; and the witness's goroutines, open file
// descriptors and heap (its /metrics) are back where they were after a
// warm-up.
// It has no Slack: what posting twice would look like is counted by the
// replicas' soak and the Slack fault tests; here, a run's calls.
func soakWorkerProcesses(t *testing.T) {
	const runs, killers, queue = 60, 3, "soakq"
	bin := buildResearchbot(t)
	rp := startRedis(t)
	res := &researchtest.Researcher{DelayFor: func(string, int) time.Duration {
		return time.Duration(rand.IntN(400)) * time.Millisecond
	}}
	w := newWorld(t, "redis://"+rp.Addr()+"/0", res, nil)
	front := w.replica(w.redis, false)
	start := func(n int, tag string) string {
		r, err := front.Engine.Start(context.Background(), pipeline.Request{
			Question: fmt.Sprintf("%s-%d: How well do heat pumps work in cold climates?", tag, n),
			Mode:     checkpoints.ModeAuto, RequestedBy: "U1", Origin: pipeline.Origin{Kind: "test", Queue: queue},
		})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	witness := startWorkerProcess(t, bin, w, queue)
	waitFinal(t, front, []string{start(0, "warm"), start(1, "warm"), start(2, "warm")})
	g0, f0, h0 := witness.metrics(t)

	procs := make([]*workerProcess, killers)
	for i := range procs {
		procs[i] = startWorkerProcess(t, bin, w, queue)
	}
	// The runs arrive one every 250 ms, so that work is under way at every kill.
	var idsMu sync.Mutex
	var ids []string
	started := func() []string { idsMu.Lock(); defer idsMu.Unlock(); return append([]string(nil), ids...) }
	arrived := make(chan struct{})
	go func() { // owner: the test; ends once the runs are started
		defer close(arrived)
		for n := range runs {
			id := start(n, "soak")
			idsMu.Lock()
			ids = append(ids, id)
			idsMu.Unlock()
			time.Sleep(250 * time.Millisecond) // the arrival rate, not a synchronisation
		}
	}()
	kills, midRun := 0, 0
	for range 8 { // 16 s of kills while the runs go on
		time.Sleep(2 * time.Second) // the fault's rhythm, not a synchronisation
		i := rand.IntN(killers)
		if _, open := finalCount(front, started()); open > 0 {
			midRun++
		}
		procs[i].kill()
		kills++
		procs[i] = startWorkerProcess(t, bin, w, queue)
	}
	<-arrived
	statuses, unexplained := waitFinal(t, front, started())
	_, stepPeak := w.model.worstPeak("analysis|")
	_, planPeak := w.model.worstPeak("research_plan|")
	for _, p := range procs {
		p.kill()
	}
	time.Sleep(3 * time.Second) // idle connections of the witness close: then count
	g1, f1, h1 := witness.metrics(t)
	s := w.settings()
	calls := 0
	for _, c := range w.model.Calls() {
		if strings.Contains(c.User, "soak-") || strings.Contains(c.System, "soak-") {
			calls++
		}
	}
	t.Logf("%d runs on %d worker processes, %d SIGKILLs (%d while runs were open): %v; %d model calls", runs, killers+1, kills, midRun, statuses, calls)
	if midRun < kills/2 {
		t.Errorf("only %d of %d kills struck while runs were open", midRun, kills)
	}
	within(t, "runs failed for a reason the kills do not explain", len(unexplained), none, s)
	within(t, "analysis calls in flight at once for one run", stepPeak, oneCallInFlight, s)
	within(t, "plan calls in flight at once for one run", planPeak, oneCallInFlight, s)
	within(t, "the witness's goroutines after the soak", g1, bound[int]{"as before + 10", func(settings) int { return g0 + 10 }}, s)
	within(t, "the witness's open file descriptors after the soak", f1, bound[int]{"as before + 10", func(settings) int { return f0 + 10 }}, s)
	within(t, "the witness's heap after the soak (MB)", h1, bound[int]{"as before + 16 MB", func(settings) int { return h0 + 16 }}, s)
	if len(unexplained) > 0 {
		t.Errorf("unexplained: %v", unexplained[:min(5, len(unexplained))])
	}
}

// waitFinal waits until every run is final and returns the statuses and
// the failures not explained by a killed worker.
func waitFinal(t *testing.T, front *replica, ids []string) (map[pipeline.Status]int, []string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		statuses, left, unexplained := map[pipeline.Status]int{}, 0, []string(nil)
		for _, id := range ids {
			r, err := front.Engine.Load(context.Background(), id)
			if err != nil {
				left++
				continue
			}
			statuses[r.Status]++
			switch {
			case !r.Status.Final():
				left++
			case r.Status != pipeline.StatusCompleted:
				if why := r.Failure + r.FallbackReason; !strings.Contains(why, "its worker stopped before it finished") {
					unexplained = append(unexplained, id+": "+why)
				}
			}
		}
		if left == 0 {
			return statuses, unexplained
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d runs not final after 5 min: %v", left, statuses)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// finalCount counts the runs that are final and those still open.
func finalCount(front *replica, ids []string) (final, open int) {
	for _, id := range ids {
		if r, err := front.Engine.Load(context.Background(), id); err == nil && r.Status.Final() {
			final++
		} else {
			open++
		}
	}
	return final, open
}

// buildResearchbot builds cmd/researchbot into a temporary directory.
func buildResearchbot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "researchbot")
	build := exec.Command("go", "build", "-o", bin, "./cmd/researchbot")
	build.Dir = filepath.Dir(strings.TrimSpace(string(out)))
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return bin
}

// workerProcess is a `researchbot worker` process.
type workerProcess struct {
	cmd  *exec.Cmd
	addr string
	done chan struct{}
}

// startWorkerProcess starts a worker of queue with the world's settings
// and waits until its /readyz answers 200; it is killed when t ends.
func startWorkerProcess(t *testing.T, bin string, w *world, queue string) *workerProcess {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
	cmd := exec.Command(bin, "worker", "--queues", queue)
	cmd.Env = append(os.Environ(),
		"OPENAI_API_KEY=sk-test-secret", "OPENAI_BASE_URL="+w.model.URL(), "SEARXNG_URL="+w.web.URL(),
		"FETCH_ALLOW_PRIVATE_NETWORKS=true", "REDIS_URL="+w.redis, "LLM_MAX_RETRIES=1",
		"WORKER_CONCURRENCY=4", "RUN_LEASE=2s", "HTTP_ADDR="+addr, "LOG_LEVEL=error")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &workerProcess{cmd: cmd, addr: addr, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }() // owner: this process; ends when it exits
	t.Cleanup(p.kill)
	eventually(t, 30*time.Second, "the worker's /readyz", func() bool {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *workerProcess) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

var metricLine = regexp.MustCompile(`(?m)^(go_goroutines|process_open_fds|go_memstats_heap_alloc_bytes) ([0-9.e+]+)$`)

// metrics reads the process's goroutines, open file descriptors and heap
// (MB) from its /metrics.
func (p *workerProcess) metrics(t *testing.T) (goroutines, fds, heapMB int) {
	t.Helper()
	resp, err := http.Get("http://" + p.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	got := map[string]float64{}
	for _, m := range metricLine.FindAllStringSubmatch(string(body), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		got[m[1]] = v
	}
	if len(got) != 3 {
		t.Fatalf("/metrics lacks go_goroutines, process_open_fds or go_memstats_heap_alloc_bytes: %v", got)
	}
	return int(got["go_goroutines"]), int(got["process_open_fds"]), int(got["go_memstats_heap_alloc_bytes"]/(1<<20) + 0.5)
}
