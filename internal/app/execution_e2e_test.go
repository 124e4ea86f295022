package app

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that the assembled program (workers, rescuers, leases,
// queue clients) leaves no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		// bleve's analysis workers, started by its package init.
		goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"),
		// The fake MCP server's side of a session (the test double, not the
		// program): it ends when the client's closing DELETE arrives, which a
		// client that dropped a hung server's session never sends.
		goleak.IgnoreAnyFunction("github.com/modelcontextprotocol/go-sdk/mcp.(*streamableServerConn).Read"),
	)
}

// closedPort is the address of a port nobody listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// TestAModelThatIsDownEndsTheRunWithinItsBound: with the model down, a run
// makes at most MaxStepAttempts × (1 + LLM_MAX_RETRIES) calls, shows the
// retries as progress, and ends failed with a cause that names the model.
// LLM_MAX_RETRIES=0 means no retries.
func TestAModelThatIsDownEndsTheRunWithinItsBound(t *testing.T) {
	t.Parallel()
	unavailable := &researchtest.Researcher{Before: func(string, int) *llmtest.Reply {
		return &llmtest.Reply{Status: 503, ErrorMessage: "overloaded", ErrorType: "server_error"}
	}}
	for _, tc := range []struct {
		name    string
		retries int
		down    func(t *testing.T, h *harness) map[string]string
		cause   string
	}{
		{"503 forever, one retry", 1, nil, "answered HTTP 503 Service Unavailable"},
		{"503 forever, LLM_MAX_RETRIES=0", 0, nil, "answered HTTP 503 Service Unavailable"},
		{"nothing listening", 1, func(t *testing.T, _ *harness) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": "http://" + closedPort(t) + "/v1"}
		}, "could not be reached (connection refused)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"LLM_MAX_RETRIES": fmt.Sprint(tc.retries)}
			if tc.down != nil {
				for k, v := range tc.down(t, nil) {
					env[k] = v
				}
			}
			h := newHarness(t, unavailable, env)
			start := time.Now()
			h.start(checkpoints.ModeAuto, pipeline.Limits{})
			r := h.finish()
			took := time.Since(start)
			calls := len(h.llm.Calls()) // nothing listening: no call reaches a server
			bound := pipeline.MaxStepAttempts * (1 + tc.retries)
			t.Logf("model down (%s): run %s after %v, %d calls (bound %d): %s", tc.name, r.Status, took.Round(10*time.Millisecond), calls, bound, r.Failure)
			if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "the plan step failed 3 times: the model at http://") || !strings.Contains(r.Failure, tc.cause) {
				t.Fatalf("status %s, failure %q", r.Status, r.Failure)
			}
			if calls > bound {
				t.Fatalf("%d model calls, bound %d", calls, bound)
			}
			if tc.down == nil && calls != bound {
				t.Fatalf("%d model calls, want exactly %d", calls, bound)
			}
			h.rec.mu.Lock()
			notices := strings.Join(h.rec.notices, "\n")
			h.rec.mu.Unlock()
			if !strings.Contains(notices, "trying again in 2s (attempt 2 of 3)") {
				t.Errorf("the step's retries were not shown as progress:\n%s", notices)
			}
			if tc.retries > 0 && !strings.Contains(notices, "the model is not answering (retry 1 of 1 in ") {
				t.Errorf("the model's retries were not shown as progress:\n%s", notices)
			}
			if tc.retries == 0 && strings.Contains(notices, "the model is not answering") {
				t.Errorf("LLM_MAX_RETRIES=0 retried:\n%s", notices)
			}
		})
	}
}

// TestCheckpointTimeoutsFireOnTimeThroughTheQueue: checkpoint timers run
// through the real queue and worker on a real redis-server, on the real
// clock: a required checkpoint is offered again at its interval while its
// retries last, then stays timed out and is reminded at its interval (a
// policy of a fixed interval) while it allows, each reminder no earlier than its deadline and at
// most 2 s after; an optional one is skipped at its deadline and the run
// goes on.
func TestCheckpointTimeoutsFireOnTimeThroughTheQueue(t *testing.T) {
	t.Parallel()
	h := newHarness(t, &researchtest.Researcher{CriticalOnReview: map[int]bool{1: true}}, nil)
	ctx := context.Background()
	if err := h.app.Engine.SeedDefinitions(ctx); err != nil {
		t.Fatal(err)
	}
	defs, _ := h.app.Store.Definitions(ctx)
	for _, d := range defs {
		switch d.ID {
		case checkpoints.PlanReview:
			d.Timeout, d.MaxRetries = 1100*time.Millisecond, 2
			d.Reminders = &checkpoints.ReminderPolicy{Count: 5, Factor: 1, Escalate: checkpoints.EscalateNone} // a fixed interval, for a short test
		case checkpoints.CriticalIssues:
			d.Timeout = 900 * time.Millisecond
		default:
			continue
		}
		if err := h.app.Store.PutDefinition(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	h.start(checkpoints.ModeGuided, pipeline.Limits{})
	prev := h.next()
	var worst time.Duration
	for attempt := 2; attempt <= 6; attempt++ {
		got := h.next()
		late := time.Since(prev.DeadlineAt)
		worst = max(worst, late)
		if late < 0 || late > 2*time.Second {
			t.Fatalf("offer %d came %v after the deadline, want within [0, 2s]", attempt, late)
		}
		if got.ID != prev.ID {
			t.Fatalf("offer %d is of checkpoint %s, want a reminder of %s", attempt, got.DefinitionID, prev.DefinitionID)
		}
		if attempt <= 3 && (got.Attempt != attempt || got.State != checkpoints.StateOffered) {
			t.Fatalf("reminder %d: attempt %d, %s", attempt, got.Attempt, got.State)
		}
		if attempt >= 4 && (got.Attempt != attempt || got.State != checkpoints.StateTimedOut) {
			t.Fatalf("after its re-offers, reminder %d: attempt %d, %s; want timed out (still answerable), reminded at its interval", attempt, got.Attempt, got.State)
		}
		prev = got
	}
	h.decide(prev, checkpoints.Decision{Action: checkpoints.Approve})
	crit := h.next()
	if crit.DefinitionID != checkpoints.CriticalIssues {
		t.Fatalf("got %s, want critical issues", crit.DefinitionID)
	}
	draft := h.next() // the optional one timed out and was skipped
	late := time.Since(crit.DeadlineAt)
	worst = max(worst, late)
	if draft.DefinitionID != checkpoints.DraftReview || late < 0 || late > 2*time.Second+time.Second {
		t.Fatalf("after the optional checkpoint's deadline: %s, %v late", draft.DefinitionID, late)
	}
	t.Logf("6 timeouts through the queue: none early, the latest handled %v after its deadline", worst.Round(time.Millisecond))
}
