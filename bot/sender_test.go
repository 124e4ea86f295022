package bot

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/internal/slackfake"
)

// newClockedSender is a Sender on a fake Slack whose 429 waits run on a
// quartz mock, with the mock's trap of those waits.
func newClockedSender(t *testing.T) (*Sender, *slackfake.Server, *quartz.Mock, *quartz.Trap) {
	t.Helper()
	fake := slackfake.New(t)
	fake.AddChannel(chanIn, "research", true)
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTimer("bot", "retryafter")
	t.Cleanup(trap.Close)
	return NewSender(SenderConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Clock: clock}), fake, clock, trap
}

// statuses are the HTTP statuses Slack answered the calls of method with.
func statuses(fake *slackfake.Server, method string) []int {
	var out []int
	for _, c := range fake.Calls(method) {
		out = append(out, c.Status)
	}
	return out
}

// TestSenderRetries429AfterRetryAfter: a call Slack answers with 429 and
// Retry-After: 7 is sent again exactly 7 s later on the Sender's clock,
// never before, and its caller gets the answer of the retry.
func TestSenderRetries429AfterRetryAfter(t *testing.T) {
	send, fake, clock, trap := newClockedSender(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fake.FailNext("chat.postMessage", 1, 7)
	type result struct {
		ts  string
		err error
	}
	done := make(chan result, 1)
	go func() {
		ts, err := send.Post(ctx, chanIn, "", nil, "hello")
		done <- result{ts, err}
	}()
	call := trap.MustWait(ctx)
	if call.Duration != 7*time.Second {
		t.Errorf("waits %s after a 429 with Retry-After: 7; want 7s", call.Duration)
	}
	call.MustRelease(ctx)
	clock.Advance(7*time.Second - time.Millisecond).MustWait(ctx)
	if got := statuses(fake, "chat.postMessage"); len(got) != 1 {
		t.Fatalf("statuses before Retry-After passed = %v; want only the refused call", got)
	}
	clock.Advance(time.Millisecond).MustWait(ctx)
	r := <-done
	if r.err != nil || r.ts == "" {
		t.Fatalf("Post = %q, %v; want the retry's ts", r.ts, r.err)
	}
	if got := statuses(fake, "chat.postMessage"); len(got) != 2 || got[0] != http.StatusTooManyRequests || got[1] != http.StatusOK {
		t.Fatalf("statuses = %v; want [429 200]", got)
	}
	if n := len(fake.Messages(chanIn)); n != 1 {
		t.Errorf("%d messages posted; want 1", n)
	}
}

// TestSenderRetries429AtMostThreeTimes: after maxRateLimitRetries waits
// the 429 reaches the caller as a *slack.RateLimitedError.
func TestSenderRetries429AtMostThreeTimes(t *testing.T) {
	send, fake, clock, trap := newClockedSender(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fake.FailNext("chat.update", maxRateLimitRetries+2, 2)
	done := make(chan error, 1)
	go func() { done <- send.Update(ctx, chanIn, "1.000001", nil, "edit") }()
	for range maxRateLimitRetries {
		call := trap.MustWait(ctx)
		if call.Duration != 2*time.Second {
			t.Errorf("waits %s; want 2s", call.Duration)
		}
		call.MustRelease(ctx)
		clock.Advance(2 * time.Second).MustWait(ctx)
	}
	err := <-done
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 2*time.Second {
		t.Fatalf("err = %v; want the last 429 as a RateLimitedError", err)
	}
	if n := len(fake.Calls("chat.update")); n != maxRateLimitRetries+1 {
		t.Errorf("%d calls; want %d", n, maxRateLimitRetries+1)
	}
}

// TestSender429WaitEndsWithTheContext: a caller whose context ends during
// the wait gets the 429 at once; the call is not sent again.
func TestSender429WaitEndsWithTheContext(t *testing.T) {
	send, fake, _, trap := newClockedSender(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	callCtx, stop := context.WithCancel(ctx)
	fake.FailNext("chat.getPermalink", 1, 30)
	done := make(chan error, 1)
	go func() {
		_, err := send.Permalink(callCtx, chanIn, "1.000001")
		done <- err
	}()
	trap.MustWait(ctx).MustRelease(ctx)
	stop()
	err := <-done
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v; want the 429 as a RateLimitedError", err)
	}
	if n := len(fake.Calls("chat.getPermalink")); n != 1 {
		t.Errorf("%d calls; want 1", n)
	}
}

// TestSenderPacedAndOpenViewDoNotWait: Paced calls (progress edits,
// streamed plans) and views.open (its trigger id expires in 3 s) return a
// 429 to the caller at once, without a wait on the clock.
func TestSenderPacedAndOpenViewDoNotWait(t *testing.T) {
	send, fake, _, _ := newClockedSender(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fake.FailNext("chat.update", 1, 5)
	err := send.Paced().Update(ctx, chanIn, "1.000001", nil, "edit")
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 5*time.Second || ctx.Err() != nil {
		t.Errorf("Paced().Update err = %v (ctx %v); want the 429 at once", err, ctx.Err())
	}
	fake.FailNext("views.open", 1, 5)
	_, err = send.OpenView(ctx, "trigger-1", slack.ModalViewRequest{Type: slack.VTModal})
	if !errors.As(err, &rl) || ctx.Err() != nil {
		t.Errorf("OpenView err = %v (ctx %v); want the 429 at once", err, ctx.Err())
	}
	if n, m := len(fake.Calls("chat.update")), len(fake.Calls("views.open")); n != 1 || m != 1 {
		t.Errorf("%d chat.update and %d views.open calls; want 1 each", n, m)
	}
}
