package app

import (
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// callCounter is a CallObserver that counts what it is told.
type callCounter struct {
	mu                     sync.Mutex
	llm, searches, fetches int
}

func (c *callCounter) LLMCall(string, string, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.llm++
}

func (c *callCounter) Search(map[string]string, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.searches++
}

func (c *callCounter) Fetch(string, int, time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fetches++
}

func TestOptionsCallsIsToldAboutEveryKindOfCall(t *testing.T) {
	srv, _ := redistest.Start(t)
	res := &researchtest.Researcher{}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	model := llmtest.NewServer(t, res.Respond)
	calls := &callCounter{}
	h := &harness{t: t, web: web, llm: model, res: res, rec: newRecorder(), clock: &researchtest.Clock{}}
	h.app = startApp(t, testConfig(t, srv.URL, model.URL(), web.URL(), map[string]string{"LLM_PRICES": "gpt-4o-mini=0.15/0.6"}), Options{
		Presenters: map[string]pipeline.Presenter{"test": h.rec}, DefaultQueue: "test", Clock: h.clock, Calls: calls,
	})
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	if r := h.finish(); r.Status != pipeline.StatusCompleted {
		t.Fatalf("the run ended %s", r.Status)
	}
	calls.mu.Lock()
	defer calls.mu.Unlock()
	if calls.llm == 0 || calls.searches == 0 || calls.fetches == 0 {
		t.Fatalf("told about %d model calls, %d searches and %d fetches; want some of each", calls.llm, calls.searches, calls.fetches)
	}
}

// observerWithCalls is a pipeline.Observer that could also take calls.
type observerWithCalls struct {
	pipeline.Observer
	*callCounter
}

func TestAnObserverIsNotProbedForCalls(t *testing.T) {
	a := &App{opts: Options{Observer: observerWithCalls{callCounter: &callCounter{}}}}
	if _, ok := a.callObserver().(ignoreCalls); !ok {
		t.Fatalf("calls go to %T without Options.Calls; want them ignored", a.callObserver())
	}
	calls := &callCounter{}
	a = &App{opts: Options{Calls: calls}}
	if a.callObserver() != CallObserver(calls) {
		t.Fatalf("calls go to %T, not Options.Calls", a.callObserver())
	}
}
