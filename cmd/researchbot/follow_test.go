package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// worldEnv is the configuration the world's fakes need, plus over.
func (w *world) env(over map[string]string) func(string) string {
	vars := map[string]string{
		"REDIS_URL": w.redisURL, "OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": w.llm.URL(),
		"SEARXNG_URL": w.web.URL(), "FETCH_ALLOW_PRIVATE_NETWORKS": "true", "RUN_LEASE": "2s", "LLM_MAX_RETRIES": "1",
	}
	for k, v := range over {
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

func assemble(t *testing.T, getenv func(string) string, opts app.Options) *app.App {
	t.Helper()
	cfg, err := config.Load(getenv)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// TestTheTerminalFollowsItsRunWhicheverProcessAdvancesIt: the terminal
// shows the checkpoints and the end of its run from the store, though
// another process (a worker on the run's queue) does all the work.
func TestTheTerminalFollowsItsRunWhicheverProcessAdvancesIt(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	ctx := context.Background()
	var out, errb bytes.Buffer
	here := assemble(t, w.env(nil), app.Options{Presenters: map[string]pipeline.Presenter{"terminal": terminal.New(&errb)}})
	there := assemble(t, w.env(nil), app.Options{})
	stop, err := there.StartWorker([]string{"terminal-elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r, err := here.Engine.Start(ctx, pipeline.Request{Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeGuided,
		RequestedBy: "terminal", Origin: pipeline.Origin{Kind: "terminal", Queue: "terminal-elsewhere"}})
	if err != nil {
		t.Fatal(err)
	}
	fctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	pr := terminal.NewPrompter(strings.NewReader("a\na\n"), &errb)
	if err := follow(fctx, here.Engine, here.Store.Watch(fctx, r.ID, 0), terminal.NewFollower(&errb, nil), pr, nil, r.ID, true, "", terminal.Style{}, &out, &errb); err != nil {
		t.Fatalf("follow: %v\n%s", err, errb.String())
	}
	for _, want := range []string{"━━ Research plan", "✓ Research plan: approve", "━━ Draft review", "completed after"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("the terminal did not show %q:\n%s", want, errb.String())
		}
	}
	if !strings.Contains(out.String(), "# Heat pumps in cold climates") {
		t.Fatalf("no report:\n%s", out.String())
	}
}

// TestATerminalRunWithTheModelDownFailsFastWithOneClearLine: with nothing
// listening at OPENAI_BASE_URL, `researchbot run` shows the retries as
// progress, gives up after three attempts at the step, and exits 1 with
// one line that says why — no log lines in the terminal. (The start-up
// check, which would stop it before the run, is off: this is the model
// going down during a run.)
func TestATerminalRunWithTheModelDownFailsFastWithOneClearLine(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	down := "http://" + closedAddr(t) + "/v1"
	start := time.Now()
	c := w.startWith(t, []string{"OPENAI_BASE_URL=" + down, "LLM_STARTUP_CHECK=false"}, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	err := c.wait(t)
	took := time.Since(start)
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want code 1\n%s", err, c.log())
	}
	log := strings.TrimSpace(c.log())
	lines := strings.Split(log, "\n")
	last := lines[len(lines)-1]
	want := regexp.MustCompile(`^researchbot: run r-[a-z0-9]+ failed after \d+s of work: the plan step failed 3 times: the model at ` + regexp.QuoteMeta(down) + ` could not be reached \(connection refused\)$`)
	if !want.MatchString(last) {
		t.Fatalf("last line %q does not say why clearly\n%s", last, log)
	}
	if strings.Contains(log, "level=") || strings.Contains(log, "WARN") || strings.Contains(log, "ERROR") {
		t.Errorf("log lines in the terminal:\n%s", log)
	}
	for _, progress := range []string{"… the model is not answering (retry 1 of 1 in", "trying again in 2s (attempt 2 of 3)", "trying again in 4s (attempt 3 of 3)"} {
		if !strings.Contains(log, progress) {
			t.Errorf("no %q in the terminal:\n%s", progress, log)
		}
	}
	t.Logf("model down: the terminal run exited 1 after %v:\n%s", took.Round(100*time.Millisecond), log)
}

// TestTheEmbeddedRedisRunsAResearch: with REDIS_URL unset the program uses
// the in-process Redis, whose scripts must behave like the real one's.
func TestTheEmbeddedRedisRunsAResearch(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	var out, errb bytes.Buffer
	getenv := w.env(map[string]string{"REDIS_URL": ""})
	err := run(context.Background(), []string{"run", "--mode", "guided", "How well do heat pumps work in cold climates?"}, getenv, strings.NewReader("a\na\n"), &out, &errb)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "# Heat pumps in cold climates") || !strings.Contains(errb.String(), "in-process Redis") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
}
