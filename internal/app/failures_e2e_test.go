package app

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

func TestRateLimitWithRetryAfterThenSuccess(t *testing.T) {
	res := &researchtest.Researcher{Before: func(schema string, n int) *llmtest.Reply {
		if schema == "research_plan" && n == 1 {
			r := llmtest.RateLimited("1")
			return &r
		}
		return nil
	}}
	h := newHarness(t, res, nil)
	start := time.Now()
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	if n := len(callsOf(h.llm, "research_plan")); n != 2 {
		t.Errorf("planner HTTP calls = %d, want 2 (429, then success)", n)
	}
	if time.Since(start) < time.Second {
		t.Errorf("the run did not wait the 1 s Retry-After")
	}
}

func TestMalformedJSONIsRepaired(t *testing.T) {
	res := &researchtest.Researcher{Before: func(schema string, n int) *llmtest.Reply {
		if schema == "analysis" && n == 1 {
			return &llmtest.Reply{Content: `{"findings": [oops`}
		}
		return nil
	}}
	h := newHarness(t, res, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted || r.Analysis == nil || len(r.Analysis.Findings) == 0 {
		t.Fatalf("status %s, analysis %+v", r.Status, r.Analysis)
	}
	calls := callsOf(h.llm, "analysis")
	for i, c := range calls {
		t.Logf("analysis call %d: %d messages, user %.80q", i, c.Messages, c.User)
	}
	if len(calls) != 2 || calls[1].Messages <= calls[0].Messages {
		t.Fatalf("want a repair call with the bad output sent back; got %d calls", len(calls))
	}
}

func TestContextLengthErrorShrinksTheInput(t *testing.T) {
	res := &researchtest.Researcher{Before: func(schema string, n int) *llmtest.Reply {
		if schema == "research_draft" && n == 1 {
			r := llmtest.ContextLengthError()
			return &r
		}
		return nil
	}}
	h := newHarness(t, res, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s: %s", r.Status, r.Failure)
	}
	if r.Counters.Shrinks != 1 || r.Limits.MaxSourceChars != 3000 {
		t.Errorf("shrinks %d, source chars %d; want 1 and 3000", r.Counters.Shrinks, r.Limits.MaxSourceChars)
	}
	if !containsAny(r.Report.Caveats, "context window") {
		t.Errorf("the shrink is not stated in the report: %v", r.Report.Caveats)
	}
	calls := callsOf(h.llm, "research_draft")
	if len(calls) != 2 || len(calls[1].User) >= len(calls[0].User) {
		t.Errorf("the retry was not smaller (%d calls)", len(calls))
	}
}

func TestCitationToAnUnfetchedURLIsRemoved(t *testing.T) {
	h := newHarness(t, &researchtest.Researcher{BadCitations: true}, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	for _, bad := range []string{"unfetched.example", "[99]"} {
		if strings.Contains(r.Report.Markdown, bad) {
			t.Errorf("report still contains %q:\n%s", bad, r.Report.Markdown)
		}
	}
	if !strings.Contains(r.Report.Markdown, "the brochure") {
		t.Error("the link text should stay, without the link")
	}
	assertCitationsFetched(t, r)
}

func TestTimeoutsOnAnInjectedClock(t *testing.T) {
	t.Run("a required checkpoint is re-offered, never read as a rejection", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{}, nil)
		h.start(checkpoints.ModeGuided, pipeline.Limits{})
		plan := h.next()
		h.clock.Advance(23 * time.Hour)
		h.timerFires(plan)
		select {
		case inst := <-h.rec.offers:
			t.Fatalf("re-offered %s before its deadline", inst.DefinitionID)
		default:
		}
		h.clock.Advance(2 * time.Hour)
		h.timerFires(plan)
		again := h.next()
		if again.ID != plan.ID || again.Attempt != 2 || again.State != checkpoints.StateOffered {
			t.Fatalf("reminder: id %v attempt %d state %s", again.ID == plan.ID, again.Attempt, again.State)
		}
		r, _ := h.app.Engine.Load(context.Background(), plan.RunID)
		if r.Status != pipeline.StatusWaiting || r.Counters.PlanRounds != 1 || len(r.Feedback) != 0 {
			t.Fatalf("a timeout changed the run: status %s, plans %d, feedback %v", r.Status, r.Counters.PlanRounds, r.Feedback)
		}
		// Its policy (the default) allows two reminders more, a day apart
		// (backing off ×2 from its 24 h timeout, capped at a day), then
		// stops: nothing more is posted.
		cur := again
		for i := 0; i < 2; i++ {
			h.clock.Advance(25 * time.Hour)
			h.timerFires(cur)
			cur = h.next()
		}
		h.clock.Advance(25 * time.Hour)
		h.timerFires(cur)
		select {
		case inst := <-h.rec.stopped:
			if inst.ID != plan.ID || inst.Reminded != 3 {
				t.Fatalf("escalated %s after %d reminders, want the plan after 3", inst.DefinitionID, inst.Reminded)
			}
		case inst := <-h.rec.offers:
			t.Fatalf("reminded again after its policy's 3 reminders: attempt %d", inst.Attempt)
		case <-time.After(time.Minute):
			t.Fatal("no escalation after the policy's reminders")
		}
		for i := 0; i < 5; i++ {
			h.clock.Advance(25 * time.Hour)
			h.timerFires(cur)
		}
		select {
		case inst := <-h.rec.offers:
			t.Fatalf("reminded again after the escalation: attempt %d", inst.Attempt)
		case inst := <-h.rec.stopped:
			t.Fatalf("escalated twice: %s", inst.DefinitionID)
		default:
		}
		r, _ = h.app.Engine.Load(context.Background(), plan.RunID)
		if st := r.Instance(plan.ID); st.RemindersStoppedAt.IsZero() || st.Reminded != 3 || st.State != checkpoints.StateTimedOut || !r.Deadline().IsZero() {
			t.Fatalf("after its reminders: stopped at %v, reminded %d, %s, run deadline %v", st.RemindersStoppedAt, st.Reminded, st.State, r.Deadline())
		}
		// After every reminder is used up, a person can still answer it.
		h.decide(plan, checkpoints.Decision{Action: checkpoints.Approve})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
		if r := h.finish(); r.Status != pipeline.StatusCompleted {
			t.Fatalf("status %s", r.Status)
		}
	})
	t.Run("an optional checkpoint that times out is skipped and the run goes on", func(t *testing.T) {
		h := newHarness(t, &researchtest.Researcher{CriticalOnReview: map[int]bool{1: true}}, nil)
		h.start(checkpoints.ModeGuided, pipeline.Limits{})
		h.decide(h.next(), checkpoints.Decision{Action: checkpoints.Approve})
		crit := h.next()
		if crit.DefinitionID != checkpoints.CriticalIssues || crit.Required {
			t.Fatalf("got %s required=%v", crit.DefinitionID, crit.Required)
		}
		h.clock.Advance(3 * time.Hour)
		h.timerFires(crit)
		next := h.next() // the reviewer's routing stands: revise, review again, draft review
		if next.DefinitionID != checkpoints.DraftReview {
			t.Fatalf("after the skipped checkpoint got %s", next.DefinitionID)
		}
		r, _ := h.app.Engine.Load(context.Background(), crit.RunID)
		if got := r.Instance(crit.ID).State; got != checkpoints.StateSkipped {
			t.Fatalf("timed-out optional checkpoint is %s, want skipped", got)
		}
	})
}

// timerFires is the checkpoint's deadline timer going off now (on the
// test's clock, whose timers run in real time): the worker it sends
// advances the run, which applies the timeout once the deadline has come.
// A worker that finds the lease held leaves the run to its holder, which
// looks at the deadline again when it releases the lease.
func (h *harness) timerFires(inst checkpoints.Instance) {
	h.t.Helper()
	err := h.app.Engine.Advance(context.Background(), inst.RunID)
	if err != nil && !errors.Is(err, pipeline.ErrLeaseBusy) {
		h.t.Fatal(err)
	}
}

func TestADownBackendIsStatedButDoesNotStopTheRun(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"Service Unavailable"}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	h := newHarness(t, &researchtest.Researcher{}, map[string]string{"OPENALEX_URL": down.URL})
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	if !containsAny(r.Report.Caveats, "openalex") {
		t.Errorf("the failing backend is not named in the caveats: %v", r.Report.Caveats)
	}
	assertCitationsFetched(t, r)
}

func TestARefusalEndsTheRunAtOnceWithWhatItHas(t *testing.T) {
	res := &researchtest.Researcher{Before: func(schema string, n int) *llmtest.Reply {
		if schema == "research_draft" {
			r := llmtest.Refused("I can't help with that.")
			return &r
		}
		return nil
	}}
	h := newHarness(t, res, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusPartial || !strings.Contains(r.FallbackReason, "refus") {
		t.Fatalf("status %s, reason %q", r.Status, r.FallbackReason)
	}
	if n := len(callsOf(h.llm, "research_draft")); n != 1 {
		t.Errorf("a refusal was retried: %d writer calls", n)
	}
	if len(r.Report.Sections) == 0 {
		t.Error("the partial report should carry the analysis it had")
	}
}

func TestARejectedKeyFailsTheRunClearly(t *testing.T) {
	res := &researchtest.Researcher{Before: func(string, int) *llmtest.Reply {
		return &llmtest.Reply{Status: 401, ErrorCode: "invalid_api_key", ErrorType: "invalid_request_error", ErrorMessage: "Incorrect API key provided: sk-test-******cret."}
	}}
	h := newHarness(t, res, nil)
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusFailed || !strings.Contains(r.Failure, "401") {
		t.Fatalf("status %s, failure %q", r.Status, r.Failure)
	}
	if strings.Contains(r.Failure, "sk-test-secret") {
		t.Fatal("the API key leaked into the failure message")
	}
	if n := len(h.llm.Calls()); n != 1 {
		t.Errorf("%d calls; a rejected key must not be retried", n)
	}
}
