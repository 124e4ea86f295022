package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

func newTestPresenter(t *testing.T, interval time.Duration) (*Presenter, *slackfake.Server) {
	t.Helper()
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	_, rdb := redistest.Start(t)
	p, err := NewPresenter(PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Redis: rdb, MinInterval: interval, Metrics: NewMetrics()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p, fake
}

func progressRun(fake *slackfake.Server, t *testing.T) *pipeline.Run {
	_, ts, err := newSlackAPI(fake.BotToken(), "", fake.APIURL(), nil, nil).PostMessage(chanIn, quiet(RenderRoot(RootInfo{Question: "q"}), "root"))
	if err != nil {
		t.Fatal(err)
	}
	r := sampleRun()
	r.Origin = pipeline.Origin{Kind: OriginKind, Channel: chanIn, ThreadTS: ts}
	return r
}

func TestProgressIsOneMessageCoalescedAndPaced(t *testing.T) {
	p, fake := newTestPresenter(t, 300*time.Millisecond)
	r := progressRun(fake, t)
	ctx := context.Background()
	start := time.Now()
	for i := range 30 {
		c := *r
		c.Queries = make([]pipeline.Query, i+1)
		p.Progress(ctx, &c)
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(start)
	deadline := time.Now().Add(5 * time.Second)
	for {
		msgs := fake.Thread(chanIn, r.Origin.ThreadTS)
		if len(msgs) == 2 && strings.Contains(text(msgs[1]), "Queries *30*") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the last progress never arrived; thread: %+v", msgs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	posts, updates := len(fake.Calls("chat.postMessage"))-1, len(fake.Calls("chat.update"))
	if posts != 1 {
		t.Errorf("%d progress messages posted, want 1", posts)
	}
	// 30 updates over ~elapsed, at most one per 300ms (plus the final flush).
	if max := int(elapsed/(300*time.Millisecond)) + 2; updates > max {
		t.Errorf("%d edits in %s, want at most %d", updates, elapsed, max)
	}
	calls := append(fake.Calls("chat.postMessage")[1:], fake.Calls("chat.update")...)
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].At.Sub(calls[i-1].At); gap < 250*time.Millisecond {
			t.Errorf("edits %d and %d only %s apart", i-1, i, gap)
		}
	}
}

func TestProgressHonoursRetryAfter(t *testing.T) {
	p, fake := newTestPresenter(t, 50*time.Millisecond)
	r := progressRun(fake, t)
	ctx := context.Background()
	p.Progress(ctx, r) // posts the progress message
	fake.FailNext("chat.update", 1, 1)
	c := *r
	c.Step = pipeline.StepAnalyze
	time.Sleep(60 * time.Millisecond)
	p.Progress(ctx, &c) // 429, Retry-After 1s
	deadline := time.Now().Add(5 * time.Second)
	for len(fake.Calls("chat.update")) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the update was not retried")
		}
		time.Sleep(20 * time.Millisecond)
	}
	calls := fake.Calls("chat.update")
	if calls[0].Status != 429 || calls[1].Status != 200 {
		t.Fatalf("calls = %+v", calls)
	}
	if gap := calls[1].At.Sub(calls[0].At); gap < 900*time.Millisecond {
		t.Errorf("retried after %s, before Retry-After", gap)
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
	if len(thread) != 3 || !strings.Contains(text(thread[2]), "Reminder") || strings.Contains(raw(thread[1]), ActionApprove) {
		t.Fatalf("after the reminder: first %q / second %q", text(thread[1]), text(thread[2]))
	}
	if strings.Contains(strings.ToLower(text(thread[2])), "rejected") && !strings.Contains(text(thread[2]), "Nothing has been rejected") {
		t.Error("the reminder reads as a rejection")
	}
	if err := p.Decided(ctx, r, decided(&reminder, checkpoints.Approve, "", nil)); err != nil {
		t.Fatal(err)
	}
	last := fake.Thread(chanIn, r.Origin.ThreadTS)[2]
	if strings.Contains(raw(last), ActionApprove) || !strings.Contains(text(last), "approved by <@U123>") {
		t.Errorf("not collapsed: %s", text(last))
	}
}
