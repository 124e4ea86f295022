package bot

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestOfferCountsDownFromTheMomentItPosts: the time left to a checkpoint's
// deadline is counted when the message is posted (the presenter's clock),
// not from the offer: a message posted 30 minutes before the deadline says
// 30 minutes, and the reminder posted later counts again.
func TestOfferCountsDownFromTheMomentItPosts(t *testing.T) {
	inst := planInstance()
	if inst.DeadlineAt.Sub(inst.OfferedAt) < time.Hour {
		t.Fatalf("the fixture's timeout is %v; this test wants more than an hour", inst.DeadlineAt.Sub(inst.OfferedAt))
	}
	clock := newManualClock(t, inst.DeadlineAt.Add(-30*time.Minute))
	p, fake := newClockedPresenter(t, time.Second, clock)
	r := progressRun(fake, t)
	if err := p.Offer(context.Background(), r, inst); err != nil {
		t.Fatal(err)
	}
	thread := fake.Thread(chanIn, r.Origin.ThreadTS)
	if got := raw(thread[len(thread)-1]); !strings.Contains(got, "Reminder due in 30 min (") {
		t.Fatalf("the checkpoint does not count down from when it was posted:\n%s", got)
	}
	clock.Advance(inst.DeadlineAt.Add(-20 * time.Second).Sub(clock.Now()))
	reminder := *inst
	reminder.Attempt = 2
	if err := p.Offer(context.Background(), r, &reminder); err != nil {
		t.Fatal(err)
	}
	thread = fake.Thread(chanIn, r.Origin.ThreadTS)
	if got := raw(thread[len(thread)-1]); !strings.Contains(got, "Reminder due in less than a minute (") {
		t.Fatalf("the reminder does not count down again:\n%s", got)
	}
}
