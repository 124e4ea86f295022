package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// newStreamingPresenter is a presenter streaming in channel threads, on a
// fake Slack, paced by clock.
func newStreamingPresenter(t *testing.T, interval time.Duration, clock *manualClock) (*Presenter, *slackfake.Server, *pipeline.Run) {
	t.Helper()
	return newStreamingPresenterCounted(t, interval, clock, NewMetrics())
}

// newStreamingPresenterCounted is newStreamingPresenter counting in m.
func newStreamingPresenterCounted(t *testing.T, interval time.Duration, clock *manualClock, m *Metrics) (*Presenter, *slackfake.Server, *pipeline.Run) {
	t.Helper()
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	_, rdb := redistest.Start(t)
	p, err := NewPresenter(PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb),
		MinInterval: interval, Clock: clock, StreamInChannels: true, Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	r := progressRun(fake, t)
	r.Step, r.Queries, r.Pages, r.Sources = pipeline.StepSearch, nil, nil, nil
	r.Origin.TeamID = slackfake.TeamID
	return p, fake, r
}

// TestStreamedPlanAppendsArePaced: thirty updates within one interval
// start the stream once and, at the interval, make one append carrying the
// latest state; nothing more is sent while nothing changes.
func TestStreamedPlanAppendsArePaced(t *testing.T) {
	clock := newManualClock(t, t0)
	p, fake, r := newStreamingPresenter(t, 300*time.Millisecond, clock)
	ctx := context.Background()
	for i := range 30 {
		c := *r
		c.Queries = make([]pipeline.Query, i+1)
		p.Progress(ctx, &c)
		clock.Advance(9 * time.Millisecond)
	}
	if s, a := len(fake.Calls("chat.startStream")), len(fake.Calls("chat.appendStream")); s != 1 || a != 0 {
		t.Fatalf("%d starts and %d appends within the interval, want 1 and 0", s, a)
	}
	clock.Advance(30 * time.Millisecond)
	if n := len(fake.Calls("chat.appendStream")); n != 1 {
		t.Fatalf("%d appends at the interval, want 1", n)
	}
	st := fake.Streams()[0]
	if task, _ := st.Task("search"); !strings.HasPrefix(task.Details, "30 queries") {
		t.Errorf("the append does not carry the latest progress: %+v", task)
	}
	if c := fake.Calls("chat.appendStream")[0]; strings.Contains(c.Params["chunks"], `"id":"plan"`) {
		t.Errorf("an unchanged task was sent again: %s", c.Params["chunks"])
	}
	clock.Advance(time.Hour)
	if n := len(fake.Calls("chat.appendStream")); n != 1 || clock.Pending() {
		t.Errorf("%d appends, flushes pending: %v, with nothing new", n, clock.Pending())
	}
	if n := len(fake.Calls("chat.postMessage")); n != 1 { // the root only
		t.Errorf("%d messages posted beside the stream", n)
	}
}

// TestStreamedPlanTransientAndRefusedStarts: a transient error keeps the run
// streaming (the next update starts the stream); a refusal that is not a
// feature error makes that run show the progress message, without turning
// streaming off for the workspace.
func TestStreamedPlanTransientAndRefusedStarts(t *testing.T) {
	clock := newManualClock(t, t0)
	m := NewMetrics()
	p, fake, r := newStreamingPresenterCounted(t, time.Millisecond, clock, m)
	ctx := context.Background()
	fake.FailWith("chat.startStream", 1, "internal_error")
	p.Progress(ctx, r)
	if n := len(fake.Calls("chat.startStream")); n != 1 {
		t.Fatalf("%d starts", n)
	}
	clock.Advance(time.Second)
	p.Progress(ctx, r)
	if n := len(fake.Streams()); n != 1 {
		t.Fatalf("%d streams after a transient error, want the stream started by the next update", n)
	}
	if n := progressMessages(fake, chanIn, r.Origin.ThreadTS); n != 0 {
		t.Errorf("a transient error showed the progress message (%d)", n)
	}
	other := *r
	other.ID = "run-refused"
	fake.FailWith("chat.startStream", 1, "channel_type_not_supported")
	clock.Advance(time.Second)
	p.Progress(ctx, &other)
	if n := len(fake.Streams()); n != 1 {
		t.Errorf("%d streams", n)
	}
	progress := 0
	for _, m := range fake.Thread(chanIn, r.Origin.ThreadTS) {
		if strings.Contains(raw(m), "run-refused") {
			progress++
		}
	}
	if progress != 1 {
		t.Errorf("%d progress messages for the refused run, want 1", progress)
	}
	third := *r
	third.ID = "run-third"
	clock.Advance(time.Second)
	p.Progress(ctx, &third)
	if n := len(fake.Streams()); n != 2 {
		t.Errorf("%d streams: a run-level refusal turned streaming off for the workspace", n)
	}
	// The transient error is no outcome: its run started at the next update.
	wantProgressStreams(t, m, 2, 0, 1, 0)
}

// TestStreamedPlanShowsANotice: a passing note shows on the task in
// progress, and the next update without it clears it.
func TestStreamedPlanShowsANotice(t *testing.T) {
	clock := newManualClock(t, t0)
	p, fake, r := newStreamingPresenter(t, time.Millisecond, clock)
	ctx := context.Background()
	p.Progress(ctx, r)
	clock.Advance(time.Second)
	p.Notice(ctx, r, "the model is not answering (retry 2 of 4 in 8s)")
	if task, _ := fake.Streams()[0].Task("search"); task.Details != "working… · ⏳ the model is not answering (retry 2 of 4 in 8s)" {
		t.Errorf("the task in progress shows %q", task.Details)
	}
	clock.Advance(time.Second)
	p.Progress(ctx, r)
	if task, _ := fake.Streams()[0].Task("search"); task.Details != "working…" {
		t.Errorf("the note stayed: %q", task.Details)
	}
}
