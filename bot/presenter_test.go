package bot

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

func newTestPresenter(t *testing.T, interval time.Duration) (*Presenter, *slackfake.Server) {
	t.Helper()
	return newClockedPresenter(t, interval, nil)
}

// newClockedPresenter is a presenter on a fake Slack whose progress is paced
// by clock (nil: the real one).
func newClockedPresenter(t *testing.T, interval time.Duration, clock *manualClock) (*Presenter, *slackfake.Server) {
	t.Helper()
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	_, rdb := redistest.Start(t)
	cfg := PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb), MinInterval: interval, Metrics: NewMetrics()}
	if clock != nil {
		cfg.Clock = clock
	}
	p, err := NewPresenter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, fake
}

func progressRun(fake *slackfake.Server, t *testing.T) *pipeline.Run {
	_, ts, err := NewSender(SenderConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL()}).PostMessage(context.Background(), chanIn, quiet(blockkit.RenderRoot(blockkit.RootInfo{Question: "q"}), "root"))
	if err != nil {
		t.Fatal(err)
	}
	r := sampleRun()
	r.Origin = pipeline.Origin{Kind: OriginKind, Channel: chanIn, ThreadTS: ts}
	return r
}

// TestProgressIsOneMessageCoalescedAndPaced: thirty updates within one
// interval make one post and, at the interval, one edit carrying the latest.
func TestProgressIsOneMessageCoalescedAndPaced(t *testing.T) {
	clock := newManualClock(t, t0)
	p, fake := newClockedPresenter(t, 300*time.Millisecond, clock)
	r := progressRun(fake, t)
	ctx := context.Background()
	for i := range 30 {
		c := *r
		c.Queries = make([]pipeline.Query, i+1)
		p.Progress(ctx, &c)
		clock.Advance(9 * time.Millisecond) // 30 updates in 270 ms
	}
	posts, updates := len(fake.Calls("chat.postMessage"))-1, len(fake.Calls("chat.update"))
	if posts != 1 || updates != 0 {
		t.Fatalf("%d posts and %d edits within the interval, want the first post only", posts, updates)
	}
	clock.Advance(29 * time.Millisecond) // 299 ms: not yet
	if n := len(fake.Calls("chat.update")); n != 0 {
		t.Fatalf("%d edits before the interval ended", n)
	}
	clock.Advance(time.Millisecond)
	if n := len(fake.Calls("chat.update")); n != 1 {
		t.Fatalf("%d edits at the interval, want 1", n)
	}
	msgs := fake.Thread(chanIn, r.Origin.ThreadTS)
	if len(msgs) != 2 || !strings.Contains(text(msgs[1]), "Queries *30*") {
		t.Fatalf("the edit does not carry the latest progress; thread: %+v", msgs)
	}
	clock.Advance(time.Hour)
	if n := len(fake.Calls("chat.update")); n != 1 || clock.Pending() {
		t.Errorf("%d edits, flushes pending: %v, with nothing new; want 1 and none", n, clock.Pending())
	}
}

// TestProgressHonoursRetryAfter: an edit refused with 429 is sent again
// when Retry-After has passed, never before, with the latest progress.
func TestProgressHonoursRetryAfter(t *testing.T) {
	clock := newManualClock(t, t0)
	p, fake := newClockedPresenter(t, 50*time.Millisecond, clock)
	r := progressRun(fake, t)
	ctx := context.Background()
	p.Progress(ctx, r) // posts the progress message
	fake.FailNext("chat.update", 1, 1)
	c := *r
	c.Step = pipeline.StepAnalyze
	clock.Advance(60 * time.Millisecond)
	p.Progress(ctx, &c) // 429, Retry-After 1s
	if calls := fake.Calls("chat.update"); len(calls) != 1 || calls[0].Status != 429 {
		t.Fatalf("calls = %+v, want the refused edit", calls)
	}
	clock.Advance(999 * time.Millisecond)
	if n := len(fake.Calls("chat.update")); n != 1 {
		t.Fatalf("retried before Retry-After: %d edits", n)
	}
	clock.Advance(time.Millisecond)
	if calls := fake.Calls("chat.update"); len(calls) != 2 || calls[1].Status != 200 {
		t.Fatalf("calls = %+v, want the edit sent again at Retry-After", calls)
	}
	if got := text(fake.Thread(chanIn, r.Origin.ThreadTS)[1]); !strings.Contains(got, "Analysing") {
		t.Errorf("progress = %q", got)
	}
}

func TestOfferReminderAndDecided(t *testing.T) {
	p, fake := newTestPresenter(t, time.Second)
	r := progressRun(fake, t)
	ctx := context.Background()
	inst := planInstance()
	if err := p.Offer(ctx, r, inst); err != nil {
		t.Fatal(err)
	}
	// The same attempt again (a worker retried) updates in place.
	if err := p.Offer(ctx, r, inst); err != nil {
		t.Fatal(err)
	}
	if n := len(fake.Thread(chanIn, r.Origin.ThreadTS)); n != 2 {
		t.Fatalf("%d messages after offering one attempt twice", n)
	}
	reminder := *inst
	reminder.Attempt = 2
	if err := p.Offer(ctx, r, &reminder); err != nil {
		t.Fatal(err)
	}
	thread := fake.Thread(chanIn, r.Origin.ThreadTS)
	if len(thread) != 3 || !strings.Contains(text(thread[2]), "Reminder") || strings.Contains(raw(thread[1]), blockkit.ActionApprove) {
		t.Fatalf("after the reminder: first %q / second %q", text(thread[1]), text(thread[2]))
	}
	if strings.Contains(strings.ToLower(text(thread[2])), "rejected") && !strings.Contains(text(thread[2]), "Nothing has been rejected") {
		t.Error("the reminder reads as a rejection")
	}
	if err := p.Decided(ctx, r, decided(&reminder, checkpoints.Approve, "", nil)); err != nil {
		t.Fatal(err)
	}
	last := fake.Thread(chanIn, r.Origin.ThreadTS)[2]
	if strings.Contains(raw(last), blockkit.ActionApprove) || !strings.Contains(text(last), "approved by <@U123>") {
		t.Errorf("not collapsed: %s", text(last))
	}
}

// failFirst makes the first Web API call of method whose params contain
// marker (any call when marker is "") answer HTTP 500, as Slack does when
// it has a bad moment.
func failFirst(fake *slackfake.Server, method, marker string) {
	var mu sync.Mutex
	failed := false
	fake.OnCall(func(c slackfake.Call) *slackfake.Reply {
		mu.Lock()
		defer mu.Unlock()
		if failed || c.Method != method {
			return nil
		}
		if marker != "" && !strings.Contains(c.Params["blocks"]+string(c.JSON), marker) {
			return nil
		}
		failed = true
		return &slackfake.Reply{Status: http.StatusInternalServerError}
	})
}

// finishedInThread is a finished run whose thread is a real root message.
func finishedInThread(t *testing.T, fake *slackfake.Server) *pipeline.Run {
	r := progressRun(fake, t)
	f := finishedRun()
	f.Origin = r.Origin
	return f
}

// summaries counts the report summaries in a thread and the completed files.
func summaries(fake *slackfake.Server, r *pipeline.Run) (posts, files int) {
	for _, m := range fake.Thread(chanIn, r.Origin.ThreadTS) {
		if strings.Contains(raw(m), "Stale sources in RAG") && strings.Contains(raw(m), "header") {
			posts++
		}
	}
	for _, f := range fake.Files() {
		if f.Completed && f.ThreadTS == r.Origin.ThreadTS {
			files++
		}
	}
	return posts, files
}

func TestFinishedRetriedAfterFailedSummaryPostsOnce(t *testing.T) {
	p, fake := newTestPresenter(t, time.Second)
	r := finishedInThread(t, fake)
	ctx := context.Background()
	failFirst(fake, "chat.postMessage", "Stale sources in RAG")
	if err := p.Finished(ctx, r); err == nil {
		t.Fatal("Finished reported success although the summary failed")
	}
	if posts, files := summaries(fake, r); posts != 0 || files != 0 {
		t.Fatalf("after the failure: %d summaries, %d files", posts, files)
	}
	if err := p.Finished(ctx, r); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if posts, files := summaries(fake, r); posts != 1 || files != 1 {
		t.Fatalf("after the retry: %d summaries, %d files; want 1 and 1", posts, files)
	}
	// Everything was shown: one more call does nothing at all.
	before := len(fake.Calls(""))
	if err := p.Finished(ctx, r); err != nil {
		t.Fatal(err)
	}
	if calls := fake.Calls("")[before:]; len(calls) != 0 {
		t.Errorf("a call after success made %d Web API calls (first %s)", len(calls), calls[0].Method)
	}
}

func TestFinishedRetriedAfterFailedUploadUploadsOnlyTheFile(t *testing.T) {
	p, fake := newTestPresenter(t, time.Second)
	r := finishedInThread(t, fake)
	ctx := context.Background()
	failFirst(fake, "files.completeUploadExternal", "")
	if err := p.Finished(ctx, r); err == nil {
		t.Fatal("Finished reported success although the upload failed")
	}
	if posts, files := summaries(fake, r); posts != 1 || files != 0 {
		t.Fatalf("after the failed upload: %d summaries, %d files", posts, files)
	}
	posted := len(fake.Calls("chat.postMessage"))
	if err := p.Finished(ctx, r); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if posts, files := summaries(fake, r); posts != 1 || files != 1 {
		t.Fatalf("after the retry: %d summaries, %d files; want 1 and 1", posts, files)
	}
	if n := len(fake.Calls("chat.postMessage")) - posted; n != 0 {
		t.Errorf("the retry posted %d messages; it should only upload the file", n)
	}
	if ts := fake.Files(); !strings.Contains(string(ts[len(ts)-1].Content), "Full text.") {
		t.Errorf("file = %+v", ts[len(ts)-1])
	}
}

func TestFinishedGivesUpOnAPermanentUploadErrorOnce(t *testing.T) {
	p, fake := newTestPresenter(t, time.Second)
	r := finishedInThread(t, fake)
	ctx := context.Background()
	fake.FailWith("files.getUploadURLExternal", 5, "missing_scope")
	if err := p.Finished(ctx, r); err != nil {
		t.Fatalf("a permanent upload error should not make the engine retry: %v", err)
	}
	if err := p.Finished(ctx, r); err != nil {
		t.Fatal(err)
	}
	notices := 0
	for _, m := range fake.Thread(chanIn, r.Origin.ThreadTS) {
		if strings.Contains(raw(m), "couldn't attach the full report") {
			notices++
		}
	}
	if notices != 1 || len(fake.Calls("files.getUploadURLExternal")) != 1 {
		t.Errorf("%d notices, %d upload attempts; want 1 and 1", notices, len(fake.Calls("files.getUploadURLExternal")))
	}
}

func TestFinishedClosesACheckpointThatStillShowsButtons(t *testing.T) {
	p, fake := newTestPresenter(t, time.Second)
	r := progressRun(fake, t)
	ctx := context.Background()
	inst := planInstance()
	r.Checkpoints = []checkpoints.Instance{*inst}
	if err := p.Offer(ctx, r, inst); err != nil {
		t.Fatal(err)
	}
	r.Status, r.Waiting = pipeline.StatusCancelled, ""
	if err := p.Finished(ctx, r); err != nil {
		t.Fatal(err)
	}
	cp := fake.Thread(chanIn, r.Origin.ThreadTS)[1]
	if strings.Contains(raw(cp), blockkit.ActionApprove) || !strings.Contains(text(cp), "the run was cancelled") {
		t.Fatalf("checkpoint message after the cancel: %s", raw(cp))
	}
	// A decided (collapsed) checkpoint is left alone.
	p2, fake2 := newTestPresenter(t, time.Second)
	r2 := finishedInThread(t, fake2)
	inst2 := planInstance()
	if err := p2.Offer(ctx, r2, inst2); err != nil {
		t.Fatal(err)
	}
	d := decided(inst2, checkpoints.Approve, "", nil)
	if err := p2.Decided(ctx, r2, d); err != nil {
		t.Fatal(err)
	}
	r2.Checkpoints = []checkpoints.Instance{*d}
	updates := len(fake2.Calls("chat.update"))
	if err := p2.Finished(ctx, r2); err != nil {
		t.Fatal(err)
	}
	// Only the progress message and the root are edited, not the record.
	for _, c := range fake2.Calls("chat.update")[updates:] {
		if c.Params["ts"] == fake2.Thread(chanIn, r2.Origin.ThreadTS)[1].TS {
			t.Errorf("the collapsed record was edited again: %s", c.Params["blocks"])
		}
	}
}

func TestProgressStatesOfQuietRunsAreDropped(t *testing.T) {
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	_, rdb := redistest.Start(t)
	clock := researchtest.NewClock(t0)
	p, err := NewPresenter(PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb), MinInterval: time.Second, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx := context.Background()
	run := func(id string) *pipeline.Run {
		r := progressRun(fake, t)
		r.ID = id
		return r
	}
	states := func() []string {
		p.mu.Lock()
		defer p.mu.Unlock()
		var ids []string
		for id := range p.progress {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	// This replica showed progress of a run another replica then finished.
	p.Progress(ctx, run("run-a"))
	clock.Advance(30 * time.Minute)
	p.Progress(ctx, run("run-b"))
	if got := states(); !slices.Equal(got, []string{"run-a", "run-b"}) {
		t.Fatalf("states = %v", got)
	}
	clock.Advance(31 * time.Minute) // run-a idle 61 min, run-b 31 min
	p.Progress(ctx, run("run-c"))
	if got := states(); !slices.Equal(got, []string{"run-b", "run-c"}) {
		t.Fatalf("after an hour: states = %v; want run-a dropped", got)
	}
	// However many runs come and go, at most maxRuns states are kept.
	p.mu.Lock()
	p.maxRuns = 3
	p.mu.Unlock()
	for _, id := range []string{"run-d", "run-e", "run-f"} {
		clock.Advance(time.Second)
		p.Progress(ctx, run(id))
	}
	if got := states(); !slices.Equal(got, []string{"run-d", "run-e", "run-f"}) {
		t.Errorf("with a bound of 3: states = %v", got)
	}
	// A dropped run that speaks again carries on in its one message.
	clock.Advance(2 * time.Hour)
	r := run("run-g")
	p.Progress(ctx, r)
	clock.Advance(2 * time.Hour)
	p.Progress(ctx, run("run-h"))
	p.Progress(ctx, r)
	if n := len(fake.Thread(chanIn, r.Origin.ThreadTS)); n != 2 {
		t.Errorf("run-g's thread has %d messages; want the root and one progress message", n)
	}
}

// TestANoticeShowsUnderTheProgressMessage: a model call being retried shows
// as a line under the run's progress message (not a new message), until
// the next progress update replaces it.
func TestANoticeShowsUnderTheProgressMessage(t *testing.T) {
	clock := newManualClock(t, t0)
	p, fake := newClockedPresenter(t, time.Millisecond, clock)
	r := progressRun(fake, t)
	ctx := context.Background()
	shown := func() string {
		t.Helper()
		msgs := fake.Thread(chanIn, r.Origin.ThreadTS)
		if len(msgs) != 2 {
			t.Fatalf("thread: %+v, want the root and one progress message", msgs)
		}
		return text(msgs[1])
	}
	p.Notice(ctx, r, "model unavailable, retry 2 of 4 in 8s")
	if s := shown(); !strings.Contains(s, "model unavailable, retry 2 of 4 in 8s") {
		t.Fatalf("the notice is not shown: %q", s)
	}
	p.Progress(ctx, r)
	clock.Advance(time.Millisecond)
	if s := shown(); strings.Contains(s, "model unavailable") {
		t.Fatalf("the notice stayed after the next progress: %q", s)
	}
}
