package bot

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

// TestRemindersStoppedUpdatesTheMessageAndDMsWhomThePolicyNames: when a
// checkpoint's reminders are used up, its message in the thread is updated
// in place (no new post) to say so and how to decide or skip it, and each
// admin — or, by the policy or for want of admins, the requester — gets one
// direct message; with EscalateNone nobody does.
func TestRemindersStoppedUpdatesTheMessageAndDMsWhomThePolicyNames(t *testing.T) {
	admins := []string{"U0ADMIN01", "U0ADMIN02"}
	for _, tc := range []struct {
		name     string
		admins   []string
		escalate checkpoints.Escalation
		want     []string // who gets a DM
	}{
		{"the admins by default", admins, checkpoints.EscalateAdmins, admins},
		{"the requester when no admin is configured", nil, checkpoints.EscalateAdmins, []string{"U123"}},
		{"the requester by its policy", admins, checkpoints.EscalateRequester, []string{"U123"}},
		{"nobody by its policy", admins, checkpoints.EscalateNone, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := slackfake.New(t)
			fake.AddChannel(chanIn, "research", true)
			for _, u := range append([]string{"U123"}, admins...) {
				fake.AddUser(u, u, "UTC")
			}
			_, rdb := redistest.Start(t)
			p, err := NewPresenter(PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb), Admins: tc.admins, Metrics: NewMetrics()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			ctx := context.Background()
			r := progressRun(fake, t)
			inst := planInstance()
			inst.Reminders = &checkpoints.ReminderPolicy{Count: 3, Factor: 2, Escalate: tc.escalate}
			inst.Timeout, inst.DeadlineAt = time.Hour, inst.OfferedAt.Add(time.Hour)
			if err := p.Offer(ctx, r, inst); err != nil {
				t.Fatal(err)
			}
			posts := len(fake.Calls("chat.postMessage"))
			if err := inst.TimeOut(inst.DeadlineAt); err != nil {
				t.Fatal(err)
			}
			inst.Reminded = 3
			if err := inst.StopReminders(inst.DeadlineAt.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := p.RemindersStopped(ctx, r, inst); err != nil {
				t.Fatal(err)
			}
			thread := fake.Thread(chanIn, r.Origin.ThreadTS)
			last := thread[len(thread)-1]
			if last.Updated != 1 || !strings.Contains(string(last.Blocks), "Reminders have stopped") || !strings.Contains(string(last.Blocks), "`researchbot checkpoints skip run-42 run-42.cp-1`") {
				t.Fatalf("the checkpoint message (updated %d times) does not say reminders stopped and how to skip: %s", last.Updated, last.Blocks)
			}
			if !strings.Contains(string(last.Blocks), blockkit.ActionContinueWithout) || !strings.Contains(string(last.Blocks), blockkit.ActionApprove) {
				t.Fatalf("the checkpoint message lost its buttons or has no Continue without it: %s", last.Blocks)
			}
			if got := len(fake.Calls("chat.postMessage")) - posts; got != len(tc.want) {
				t.Fatalf("%d new posts, want only the %d DMs", got, len(tc.want))
			}
			for _, u := range append([]string{"U123"}, admins...) {
				dms := fake.Messages(slackfake.DMChannelID(u))
				wanted := strings.Contains(strings.Join(tc.want, ","), u)
				switch {
				case wanted && (len(dms) != 1 || !strings.Contains(dms[0].Text, "reminders have stopped") || !strings.Contains(string(dms[0].Blocks), "3 reminders")):
					t.Fatalf("%s got %+v, want one escalation", u, dms)
				case !wanted && len(dms) != 0:
					t.Fatalf("%s got %d messages, want none", u, len(dms))
				}
			}
		})
	}
}

// TestEscalationDMIsRetriedAndNeverPostedTwice: Slack failing one admin's
// escalation DM with transient errors (internal_error, a 503,
// service_unavailable) is retried on the clock, backing off 1 s, 2 s, 4 s,
// and the DM arrives once; the other admin gets exactly one. When the
// failures outlast the attempts the error is returned, and a second call
// sends only the DM still missing.
func TestEscalationDMIsRetriedAndNeverPostedTwice(t *testing.T) {
	const flaky, steady = "U0ADMIN01", "U0ADMIN02"
	for _, tc := range []struct {
		name     string
		failures []slackfake.Reply // answers to flaky's posts, in turn
	}{
		{"transient failures within the attempts", []slackfake.Reply{{Error: "internal_error"}, {Status: http.StatusServiceUnavailable}, {Error: "service_unavailable"}}},
		{"transient failures outlasting the attempts", []slackfake.Reply{{Error: "fatal_error"}, {Error: "request_timeout"}, {Error: "internal_error"}, {Status: http.StatusBadGateway}, {Error: "service_unavailable"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := slackfake.New(t)
			fake.AddChannel(chanIn, "research", true)
			for _, u := range []string{"U123", flaky, steady} {
				fake.AddUser(u, u, "UTC")
			}
			_, rdb := redistest.Start(t)
			clock := quartz.NewMock(t)
			clock.Set(t0)
			p, err := NewPresenter(PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb),
				Admins: []string{flaky, steady}, Metrics: NewMetrics(), Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(p.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			r := progressRun(fake, t)
			inst := planInstance()
			inst.Reminders = &checkpoints.ReminderPolicy{Count: 3, Factor: 2, Escalate: checkpoints.EscalateAdmins}
			inst.Timeout, inst.DeadlineAt = time.Hour, inst.OfferedAt.Add(time.Hour)
			if err := p.Offer(ctx, r, inst); err != nil {
				t.Fatal(err)
			}
			if err := inst.TimeOut(inst.DeadlineAt); err != nil {
				t.Fatal(err)
			}
			inst.Reminded = 3
			if err := inst.StopReminders(inst.DeadlineAt.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}

			var mu sync.Mutex
			pending := slices.Clone(tc.failures)
			fake.OnCall(func(c slackfake.Call) *slackfake.Reply {
				mu.Lock()
				defer mu.Unlock()
				if c.Method != "chat.postMessage" || c.Params["channel"] != flaky || len(pending) == 0 {
					return nil
				}
				reply := pending[0]
				pending = pending[1:]
				return &reply
			})
			trap := clock.Trap().NewTimer("bot", "escalation")
			defer trap.Close()
			done := make(chan error, 1)
			go func() { done <- p.RemindersStopped(ctx, r, inst) }()
			retries := min(len(tc.failures), escalationAttempts-1)
			for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}[:retries] {
				call := trap.MustWait(ctx)
				if call.Duration != want {
					t.Errorf("wait %d is %s, want %s", i+1, call.Duration, want)
				}
				call.MustRelease(ctx)
				clock.Advance(call.Duration).MustWait(ctx)
			}
			err = <-done
			dms := func(u string) int { return len(fake.Messages(slackfake.DMChannelID(u))) }
			if dms(steady) != 1 {
				t.Errorf("%s got %d escalation DMs, want 1", steady, dms(steady))
			}
			if len(tc.failures) < escalationAttempts {
				if err != nil || dms(flaky) != 1 {
					t.Fatalf("after %d transient failures: err %v, %s got %d DMs; want nil and 1", len(tc.failures), err, flaky, dms(flaky))
				}
			} else {
				if err == nil || !strings.Contains(err.Error(), flaky) || dms(flaky) != 0 {
					t.Fatalf("failing every attempt: err %v, %s got %d DMs; want an error naming it and none", err, flaky, dms(flaky))
				}
				posts := 0
				for _, c := range fake.Calls("chat.postMessage") {
					if c.Params["channel"] == flaky {
						posts++
					}
				}
				if posts != escalationAttempts {
					t.Errorf("%d posts to %s, want %d attempts", posts, flaky, escalationAttempts)
				}
			}
			// Called again (a retry, another replica): only what is missing
			// is sent, and nobody gets a DM twice.
			if err := p.RemindersStopped(ctx, r, inst); err != nil {
				t.Fatal(err)
			}
			if dms(flaky) != 1 || dms(steady) != 1 {
				t.Errorf("after a second call: %s got %d DMs and %s %d; want 1 each", flaky, dms(flaky), steady, dms(steady))
			}
		})
	}
}
