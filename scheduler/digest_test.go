package scheduler_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

func TestDigestRequest(t *testing.T) {
	st := scheduler.Stream{
		ID: "s-1", Owner: "UOWNER", Spec: dailySpec("Nordic heat pumps"), Policy: scheduler.PolicyAuto,
		Known: pipeline.Known{URLs: []string{"https://a.example/x"}, Simhashes: []uint64{9}},
	}
	st.Spec.Frequency = scheduler.Weekly
	fire := at(14, "09:00")
	req := digestRequestChecked(t, st, fire)
	if req.Audience != pipeline.ChannelAudience(st.Spec.Channel) || req.Audience.Permits(pipeline.Visibility{Conversation: "D_OWNER", Reader: "UOWNER"}) {
		t.Errorf("audience %+v, want the stream's channel %s (never the owner alone)", req.Audience, st.Spec.Channel)
	}
	want := "What is new about heat pump, air-to-water in Nordics, Residential, including Daikin, NIBE (market research)?"
	if req.Question != want {
		t.Errorf("question = %q\nwant       %q", req.Question, want)
	}
	for _, s := range []string{"Track the Nordic heat pump market", "Spot pricing moves", "Better pricing decisions", "only what is new since " + at(7, "09:00").Format("2006-01-02")} {
		if !strings.Contains(req.Context, s) {
			t.Errorf("context lacks %q:\n%s", s, req.Context)
		}
	}
	if req.Mode != checkpoints.ModeAuto || !req.Since.Equal(at(7, "09:00")) {
		t.Errorf("mode %q since %s (want auto, one week back)", req.Mode, req.Since)
	}
	// Direct: a checkpoint the owner must decide is offered to them privately.
	if req.Origin != (pipeline.Origin{Kind: "stream", StreamID: "s-1", Channel: "C0DIGEST", Direct: true}) {
		t.Errorf("origin = %+v", req.Origin)
	}
	if len(req.Known.URLs) != 1 || req.Known.Simhashes[0] != 9 {
		t.Errorf("known = %+v", req.Known)
	}
	req.Known.URLs[0] = "changed"
	if st.Known.URLs[0] != "https://a.example/x" {
		t.Error("the request shares Known with the stream")
	}

	// Since is the previous digest that reported something: not a failed one, not a dry run.
	st.Digests = []scheduler.DigestRecord{
		{FireAt: at(7, "09:00"), Status: scheduler.DigestCompleted, Trigger: scheduler.TriggerSchedule},
		{FireAt: at(9, "12:00"), Status: scheduler.DigestPartial, Trigger: scheduler.TriggerRunNow},
		{FireAt: at(10, "12:00"), Status: scheduler.DigestFailed, Trigger: scheduler.TriggerRunNow},
		{FireAt: at(11, "12:00"), Status: scheduler.DigestCompleted, Trigger: scheduler.TriggerDryRun},
		{FireAt: at(12, "09:00"), Status: scheduler.DigestSkipped, Trigger: scheduler.TriggerSchedule},
	}
	st.Policy = scheduler.PolicyHoldDraft
	req = digestRequestChecked(t, st, fire)
	if !req.Since.Equal(at(9, "12:00")) || req.Mode != checkpoints.ModeGuided {
		t.Errorf("since %s mode %q, want the run-now digest's time and guided", req.Since, req.Mode)
	}

	// A huge spec still makes a valid question.
	for i := range 20 {
		st.Spec.Keywords = append(st.Spec.Keywords, strings.Repeat("k", 190)+string(rune('a'+i)))
	}
	req = digestRequestChecked(t, st, fire)
	if n := utf8.RuneCountInString(req.Question); n > 700 {
		t.Errorf("question is %d runes long", n)
	}
}

// digestRequestChecked builds a digest request and checks the pipeline accepts it.
func digestRequestChecked(t *testing.T, st scheduler.Stream, fire time.Time) pipeline.Request {
	t.Helper()
	req := scheduler.DigestRequest(st, fire)
	if err := pipeline.ValidateRequest(req); err != nil {
		t.Fatalf("the pipeline refuses the digest request: %v", err)
	}
	return req
}

func TestDigestCheckpointsAutoDecide(t *testing.T) {
	p := scheduler.DigestCheckpoints{}
	all := []checkpoints.Action{checkpoints.Approve, checkpoints.Edit, checkpoints.Reject}
	for _, c := range []struct {
		mode, def string
		want      bool
	}{
		{checkpoints.ModeGuided, checkpoints.PlanReview, true},
		{checkpoints.ModeGuided, checkpoints.CriticalIssues, true},
		{checkpoints.ModeGuided, checkpoints.DraftReview, false}, // hold_draft: the owner decides
		{checkpoints.ModeAuto, checkpoints.DraftReview, true},
		{checkpoints.ModeAuto, checkpoints.PlanReview, true},
	} {
		d, ok := p.AutoDecide(&pipeline.Run{Mode: c.mode}, &checkpoints.Instance{DefinitionID: c.def, Actions: all})
		if ok != c.want {
			t.Errorf("%s/%s: auto-decided %v, want %v", c.mode, c.def, ok, c.want)
		}
		want := checkpoints.Approve
		if c.def == checkpoints.CriticalIssues {
			want = checkpoints.Edit // revise: Approve would publish the draft unseen
		}
		if ok && (d.Action != want || d.By == "" || d.At.IsZero()) {
			t.Errorf("%s/%s: decision %+v", c.mode, c.def, d)
		}
	}
}
