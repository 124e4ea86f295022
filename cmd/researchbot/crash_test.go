package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestMain lets the test binary act as the researchbot command when
// RESEARCHBOT_CHILD is set, so crash tests can run it as a child process
// and kill it for real.
func TestMain(m *testing.M) {
	if os.Getenv("RESEARCHBOT_CHILD") == "1" {
		var args []string
		if err := json.Unmarshal([]byte(os.Getenv("RESEARCHBOT_ARGS")), &args); err != nil {
			fmt.Fprintln(os.Stderr, "bad RESEARCHBOT_ARGS:", err)
			os.Exit(2)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		err := run(ctx, args, os.Getenv, os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(exitCode(err, os.Stderr)) // as main does
	}
	os.Exit(m.Run())
}

// world is the fakes a child process talks to, and their shared Redis.
type world struct {
	redisURL string
	web      *researchtest.Web
	llm      *llmtest.Server
	res      *researchtest.Researcher
}

func newWorld(t *testing.T, res *researchtest.Researcher) *world {
	srv, _ := redistest.Start(t)
	return &world{redisURL: srv.URL, web: researchtest.NewWeb(t, researchtest.DefaultPages()...), llm: llmtest.NewServer(t, res.Respond), res: res}
}

// slowAnalysis is a model whose first analysis takes d: the process is
// stopped while it waits for that answer.
func slowAnalysis(d time.Duration) *researchtest.Researcher {
	return &researchtest.Researcher{DelayFor: func(schema string, n int) time.Duration {
		if schema == "analysis" && n == 1 {
			return d
		}
		return 0
	}}
}

// startStuckInAnalysis starts an auto-mode run and returns once it waits for
// res's (slow) analysis: the moment the crash tests stop the process.
func (w *world) startStuckInAnalysis(t *testing.T, res *researchtest.Researcher) (*child, string) {
	t.Helper()
	c := w.start(t, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	runID := c.waitFor(t, startedRe)[1]
	waitForAnalysis(t, res, c)
	return c, runID
}

// waitForAnalysis waits until the model was asked for the analysis.
func waitForAnalysis(t *testing.T, res *researchtest.Researcher, c *child) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); res.Count("analysis") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("analysis never started; stderr:\n%s", c.log())
		}
	}
}

// child is a running researchbot process.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr strings.Builder
	lines  chan string
	done   chan error
}

func (w *world) start(t *testing.T, args ...string) *child {
	t.Helper()
	return w.startWith(t, nil, args...)
}

// startWith starts a child with extra environment variables.
func (w *world) startWith(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	cmd := w.command(args, append([]string{"RESEARCHBOT_NO_EDITOR=1"}, env...))
	c := &child{cmd: cmd, lines: make(chan string, 256), done: make(chan error, 1)}
	cmd.Stdout = &c.stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.stdin, err = cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { // owner: this child; ends when the child's stderr closes
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		c.done <- cmd.Wait()
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return c
}

// command is this test binary run as `researchbot args…` with the world's
// environment, then env.
func (w *world) command(args, env []string) *exec.Cmd {
	raw, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		"RESEARCHBOT_CHILD=1", "RESEARCHBOT_ARGS="+string(raw),
		"REDIS_URL="+w.redisURL, "OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL="+w.llm.URL(),
		"SEARXNG_URL="+w.web.URL(), "FETCH_ALLOW_PRIVATE_NETWORKS=true", "RUN_LEASE=2s", "LLM_MAX_RETRIES=1",
		"HTTP_ADDR=127.0.0.1:0", // workers serve health and metrics: on a free port
	)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func (c *child) log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// waitFor waits for a stderr line matching re and returns its submatches.
func (c *child) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l := <-c.lines:
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case err := <-c.done:
			t.Fatalf("child exited (%v) before %q; stderr:\n%s", err, re, c.log())
		case <-deadline:
			t.Fatalf("no %q within 60 s; stderr:\n%s", re, c.log())
		}
	}
}

func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

func (c *child) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-c.done:
		return err
	case <-time.After(90 * time.Second):
		t.Fatalf("child did not finish; stderr:\n%s", c.log())
	}
	return nil
}

var startedRe = regexp.MustCompile(`^run (r-[a-z0-9]+) started`)

func TestKilledAtACheckpointResumes(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.start(t, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	runID := c.waitFor(t, startedRe)[1]
	c.waitFor(t, regexp.MustCompile(`^Estimate: about`)) // the plan is shown: the run waits for a person
	c.kill(t)

	c2 := w.start(t, "run", "--resume", runID)
	c2.waitFor(t, regexp.MustCompile("resuming run "+runID))
	fmt.Fprintln(c2.stdin, "a") // the plan, shown again
	c2.waitFor(t, regexp.MustCompile(`✓ Research plan: approve`))
	fmt.Fprintln(c2.stdin, "a") // the draft
	if err := c2.wait(t); err != nil {
		t.Fatalf("resumed run failed: %v\n%s", err, c2.log())
	}
	if !strings.Contains(c2.stdout.String(), "# Heat pumps in cold climates") {
		t.Fatalf("no report on stdout:\n%s\nstderr:\n%s", c2.stdout.String(), c2.log())
	}
	if n := w.res.Count("research_plan"); n != 1 {
		t.Errorf("the plan was made %d times; a resumed run must not recompute it", n)
	}
}

func TestKilledInTheMiddleOfAStepResumes(t *testing.T) {
	res := slowAnalysis(20 * time.Second)
	w := newWorld(t, res)
	c, runID := w.startStuckInAnalysis(t, res)
	searches := w.web.Searches()
	c.kill(t)
	killed := time.Now()

	c2 := w.start(t, "run", "--resume", runID)
	if err := c2.wait(t); err != nil {
		t.Fatalf("resumed run failed: %v\n%s", err, c2.log())
	}
	t.Logf("kill -9 during the analysis call: the resumed run finished %v after the kill; %d plan, %d searches before and after, %d analysis calls",
		time.Since(killed).Round(10*time.Millisecond), res.Count("research_plan"), w.web.Searches(), res.Count("analysis"))
	if !strings.Contains(c2.stdout.String(), "# Heat pumps in cold climates") {
		t.Fatalf("no report:\n%s", c2.log())
	}
	if n := res.Count("research_plan"); n != 1 {
		t.Errorf("plan made %d times, want 1 (recorded before the crash)", n)
	}
	if got := w.web.Searches(); got != searches {
		t.Errorf("searches went from %d to %d after the resume; they were recorded and must not be redone", searches, got)
	}
	if n := res.Count("analysis"); n != 2 {
		t.Errorf("analysis called %d times, want 2 (only the step in flight is redone)", n)
	}
}

func TestAnotherWorkerTakesOverADeadWorkersRun(t *testing.T) {
	res := slowAnalysis(20 * time.Second)
	w := newWorld(t, res)
	c, runID := w.startStuckInAnalysis(t, res)
	_, rdb := redistest.Connect(t, w.redisURL)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	r, err := store.Load(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	// Another process serving the run's queue is running when the first dies.
	wk := w.start(t, "worker", "--queues", r.Origin.Queue)
	wk.waitFor(t, regexp.MustCompile(`researchbot worker taking runs`))
	killed := time.Now()
	c.kill(t)

	// It finds the orphan by itself (no --resume), within 2×RUN_LEASE.
	for res.Count("analysis") < 2 {
		if time.Since(killed) > 30*time.Second {
			t.Fatal("the run was not taken over")
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("a dead worker's run was taken over %v after the kill (RUN_LEASE 2s)", took.Round(10*time.Millisecond))
	if took > 4*time.Second {
		t.Errorf("takeover took %v, want at most 2×RUN_LEASE (4s)", took)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		r, err = store.Load(context.Background(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Final() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run was not taken over: %s at %s", r.Status, r.Step)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.Status != pipeline.StatusCompleted || r.Report == nil {
		t.Fatalf("status %s", r.Status)
	}
	if n := res.Count("research_plan"); n != 1 {
		t.Errorf("plan made %d times, want 1", n)
	}
}

func TestSigtermHandsTheStepBackAndNothingIsLost(t *testing.T) {
	res := slowAnalysis(30 * time.Second)
	w := newWorld(t, res)
	fake := slackfake.New(t)
	fake.AddChannel("C1", "research", true)
	fake.AddUser("U1", "ana", "Europe/Oslo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	first := w.startWith(t, serveEnv(fake), "serve")
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto How well do heat pumps work in cold climates?", UserID: "U1", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	waitForAnalysis(t, res, first)
	start := time.Now()
	if err := first.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := first.wait(t); err != nil {
		t.Fatalf("serve did not exit cleanly on SIGTERM: %v\n%s", err, first.log())
	}
	if took := time.Since(start); took > 25*time.Second {
		t.Errorf("shutdown took %v", took)
	}
	// The next process finishes the run: nothing was lost.
	w.startWith(t, serveEnv(fake), "serve")
	if !fake.WaitUntil(90*time.Second, func() bool { fs := fake.Files(); return len(fs) > 0 && fs[0].Completed }) {
		t.Fatal("the run was not finished after the restart")
	}
	if n := res.Count("research_plan"); n != 1 {
		t.Errorf("plan made %d times, want 1", n)
	}
}

func TestCtrlCInTheTerminalSaysHowToResume(t *testing.T) {
	res := slowAnalysis(30 * time.Second)
	w := newWorld(t, res)
	c, runID := w.startStuckInAnalysis(t, res)
	start := time.Now()
	if err := c.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := c.wait(t)
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit = %v, want code 130", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Ctrl-C took %v to stop the terminal run", took)
	}
	if !strings.Contains(c.log(), "researchbot run --resume "+runID) {
		t.Fatalf("no resume hint:\n%s", c.log())
	}
}

func TestBadInputGetsAClearError(t *testing.T) {
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"run", "--depth", "bottomless", "a question"}, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), `unknown depth "bottomless"`) {
		t.Fatalf("err = %v", err)
	}
	err = run(context.Background(), []string{"run", "How do heat pumps cope with frost?"}, func(k string) string {
		return map[string]string{"REDIS_URL": "nope", "LLM_TIMEOUT": "soon"}[k]
	}, strings.NewReader(""), &out, &errb)
	if msg := fmt.Sprint(err); err == nil || !strings.Contains(msg, "REDIS_URL") || !strings.Contains(msg, "LLM_TIMEOUT") || !strings.Contains(msg, "OPENAI_API_KEY") {
		t.Fatalf("every configuration problem must be listed at once; err %v, stderr:\n%s", err, errb.String())
	}
	err = run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, strings.NewReader(""), &out, &errb)
	if err == nil || !strings.Contains(errb.String(), `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %v", err)
	}
}

func TestFlagsAfterTheQuestionAreFlags(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.start(t, "run", "How well do heat pumps work in cold climates?", "--mode", "auto", "--depth", "quick")
	m := c.waitFor(t, regexp.MustCompile(`^run r-[a-z0-9]+ started \(mode (\w+), depth (\w+)\)`))
	if m[1] != "auto" || m[2] != "quick" {
		t.Fatalf("mode %s depth %s, want auto quick", m[1], m[2])
	}
	if err := c.wait(t); err != nil {
		t.Fatalf("%v\n%s", err, c.log())
	}
	if strings.Contains(c.log(), "--mode") {
		t.Errorf("the flags leaked into the question:\n%s", c.log())
	}
}

func TestResumingASlackRunFromTheTerminalIsRefused(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	_, rdb := redistest.Connect(t, w.redisURL)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	r := &pipeline.Run{ID: "r-slack1", Question: "q", Status: pipeline.StatusWaiting, Step: pipeline.StepSearch,
		Origin: pipeline.Origin{Kind: "slack", Queue: "runs"}, CreatedAt: time.Now(), UpdatedAt: time.Now()}
	if err := store.Create(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	c := w.start(t, "run", "--resume", "r-slack1")
	err := c.wait(t)
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("exit %v, want code 2", err)
	}
	if !strings.Contains(c.log(), "was started from Slack") {
		t.Fatalf("no clear explanation:\n%s", c.log())
	}
}

func TestOperatorsCanDisableACheckpoint(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	env := func(k string) string {
		return map[string]string{"REDIS_URL": w.redisURL}[k]
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"checkpoints"}, env, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("%v %s", err, errb.String())
	}
	for _, id := range []string{"plan_review", "source_review", "critical_issues", "draft_review"} {
		if !strings.Contains(out.String(), id) {
			t.Errorf("list lacks %s:\n%s", id, out.String())
		}
	}
	out.Reset()
	if err := run(context.Background(), []string{"checkpoints", "disable", "plan_review"}, env, strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("%v %s", err, errb.String())
	}
	if err := run(context.Background(), []string{"checkpoints", "timeout", "nope", "1h"}, env, strings.NewReader(""), &out, &errb); err == nil || !strings.Contains(err.Error(), `no checkpoint "nope"`) {
		t.Fatalf("unknown id: %v", err)
	}
	// A guided run now goes straight to the draft: the plan is not offered.
	c := w.start(t, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	c.waitFor(t, regexp.MustCompile(`━━ Draft review ━━`))
	if strings.Contains(c.log(), "━━ Research plan") {
		t.Fatal("a disabled checkpoint was offered")
	}
	fmt.Fprintln(c.stdin, "a")
	if err := c.wait(t); err != nil {
		t.Fatalf("%v\n%s", err, c.log())
	}
}
