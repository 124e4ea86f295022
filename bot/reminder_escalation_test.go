package bot

import (
	"context"
	"strings"
	"testing"
	"time"

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
