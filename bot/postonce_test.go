package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

// takeoverPresenters are two presenters on one fake Slack and one memory,
// as the process that died and the one that took its runs over.
func takeoverPresenters(t *testing.T) (first, second *Presenter, fake *slackfake.Server, logs *lockedBuffer) {
	t.Helper()
	fake = slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	_, rdb := redistest.Start(t)
	mem := redisstore.NewSlackMemory(rdb)
	logs = &lockedBuffer{}
	mk := func() *Presenter {
		p, err := NewPresenter(PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: mem, MinInterval: time.Second,
			Logger: slog.New(slog.NewTextHandler(logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	return mk(), mk(), fake, logs
}

// loseAnswerOf makes the first chat.postMessage whose text contains marker
// post its message and lose its answer: the poster hears an error, as a
// process killed while Slack handled its post would have heard nothing.
func loseAnswerOf(fake *slackfake.Server, marker string) {
	var mu sync.Mutex
	lost := false
	fake.OnCall(func(c slackfake.Call) *slackfake.Reply {
		mu.Lock()
		defer mu.Unlock()
		if lost || c.Method != "chat.postMessage" || !strings.Contains(c.Params["text"], marker) {
			return nil
		}
		lost = true
		return &slackfake.Reply{Lost: true}
	})
}

// lookups counts the calls that looked for an earlier post.
func lookups(fake *slackfake.Server) int {
	return len(fake.Calls("conversations.replies")) + len(fake.Calls("conversations.history"))
}

// TestOutcomeWhoseAnswerWasLostIsFoundNotPostedAgain: the outcome's post
// lands but its answer is lost (the process died); the presenter that
// takes over finds it by its metadata and updates it, and the thread shows
// the outcome once. A run whose posts were answered makes no look.
func TestOutcomeWhoseAnswerWasLostIsFoundNotPostedAgain(t *testing.T) {
	first, second, fake, logs := takeoverPresenters(t)
	ctx := context.Background()
	r := finishedInThread(t, fake)
	loseAnswerOf(fake, "Research report")
	if err := first.Finished(ctx, r); err == nil {
		t.Fatal("Finished heard nothing of its lost post and reported success")
	}
	fake.OnCall(nil)
	if posts, _ := summaries(fake, r); posts != 1 {
		t.Fatalf("%d summaries after the lost answer, want the one that landed", posts)
	}
	if err := second.Finished(ctx, r); err != nil {
		t.Fatal(err)
	}
	posts, files := summaries(fake, r)
	if posts != 1 || files != 1 {
		t.Fatalf("after the takeover: %d summaries, %d files; want 1 and 1\nlogs:\n%s", posts, files, logs)
	}
	var summary slackfake.Message
	for _, m := range fake.Thread(chanIn, r.Origin.ThreadTS) {
		if strings.Contains(string(m.Metadata), `"outcome"`) {
			summary = m
		}
	}
	if summary.TS == "" || summary.Updated != 1 {
		t.Errorf("the outcome message %+v was not found and updated", summary)
	}
	if n := lookups(fake); n != 1 {
		t.Errorf("%d looks, want 1 (the takeover's)", n)
	}

	// A run whose posts were all answered makes no look.
	fresh := finishedInThread(t, fake)
	fresh.ID = "run-fresh"
	if err := first.Finished(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if n := lookups(fake); n != 1 {
		t.Errorf("a run with no lost post made %d looks", n-1)
	}
}

// TestCheckpointWhoseAnswerWasLostIsFoundKeptAndCollapsed: a checkpoint's
// post lands but its answer is lost; the presenter that takes over shows
// the checkpoint through that one message (with its buttons) and collapses
// it after the decision.
func TestCheckpointWhoseAnswerWasLostIsFoundKeptAndCollapsed(t *testing.T) {
	first, second, fake, logs := takeoverPresenters(t)
	ctx := context.Background()
	r := progressRun(fake, t)
	inst := planInstance()
	loseAnswerOf(fake, "your decision is needed")
	if err := first.Offer(ctx, r, inst); err == nil {
		t.Fatal("Offer heard nothing of its lost post and reported success")
	}
	fake.OnCall(nil)
	if err := second.Offer(ctx, r, inst); err != nil {
		t.Fatal(err)
	}
	thread := fake.Thread(chanIn, r.Origin.ThreadTS)
	if len(thread) != 2 || !strings.Contains(raw(thread[1]), blockkit.ActionApprove) {
		t.Fatalf("after the takeover the thread has %d messages (want the root and one checkpoint with buttons)\nlogs:\n%s", len(thread), logs)
	}
	if err := second.Decided(ctx, r, decided(inst, checkpoints.Approve, "", nil)); err != nil {
		t.Fatal(err)
	}
	thread = fake.Thread(chanIn, r.Origin.ThreadTS)
	if len(thread) != 2 || strings.Contains(raw(thread[1]), blockkit.ActionApprove) || !strings.Contains(text(thread[1]), "approved by") {
		t.Fatalf("after the decision: %d messages, the checkpoint %q (want it collapsed, no second message)", len(thread), text(thread[1]))
	}
}

// TestWithoutTheHistoryScopeTheLostPostIsMadeAgainAndSaidSo: when the look
// is refused (missing_scope), the outcome is posted again as before, and
// one WARN names the missing scope and the possible duplicate.
func TestWithoutTheHistoryScopeTheLostPostIsMadeAgainAndSaidSo(t *testing.T) {
	first, second, fake, logs := takeoverPresenters(t)
	ctx := context.Background()
	r := finishedInThread(t, fake)
	loseAnswerOf(fake, "Research report")
	if err := first.Finished(ctx, r); err == nil {
		t.Fatal("Finished heard nothing of its lost post and reported success")
	}
	fake.OnCall(nil)
	fake.FailMissingScope("conversations.replies", 1, "channels:history", "chat:write,commands")
	if err := second.Finished(ctx, r); err != nil {
		t.Fatal(err)
	}
	if posts, _ := summaries(fake, r); posts != 2 {
		t.Errorf("%d summaries, want 2 (posted again without the scope)", posts)
	}
	var warns []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "missing_scope") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "channels:history") || !strings.Contains(warns[0], "twice") {
		t.Errorf("warnings about the missing scope: %q, want one naming channels:history and the duplicate", warns)
	}
}
