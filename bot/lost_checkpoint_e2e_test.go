package bot_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
)

var approveValue = regexp.MustCompile(`"action_id":"` + blockkit.ActionApprove + `"[^}]*"value":"([^"]+)"|"value":"([^"]+)"[^}]*"action_id":"` + blockkit.ActionApprove + `"`)

// approveInstance is the checkpoint id m's Approve button carries.
func approveInstance(t *testing.T, m slackfake.Message) string {
	t.Helper()
	g := approveValue.FindStringSubmatch(string(m.Blocks))
	if g == nil {
		t.Fatalf("no Approve button value in %s", m.Blocks)
	}
	return g[1] + g[2]
}

// TestE2EAClickOnALostCheckpointIsToldSoAndTheRunAsksAgain: the plan is
// approved and the draft review is shown; then Redis loses the run's
// writes since the plan review was shown (its hash is put back as it was).
// A click on the draft review — a checkpoint of the lost future — is told
// that it was lost and where the run waits, its message loses its buttons
// and says so, and the plan review's message in the thread shows its
// buttons again, saying the decision was lost.
func TestE2EAClickOnALostCheckpointIsToldSoAndTheRunAsksAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("a research run to its draft review")
	}
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, nil)
	const user, channel = "U0REQ0001", "C0RESEARCH"
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode guided How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	var plan slackfake.Message
	if !bot.WaitUntil(fake, 60*time.Second, func() bool { m, _, ok := pendingCheckpoint(fake, channel); plan = m; return ok }) {
		t.Fatalf("no plan review:\n%s", dumpAll(fake, channel))
	}
	planID := approveInstance(t, plan)
	runID, _, _ := strings.Cut(planID, ".")
	shown := func() bool {
		r, err := a.Engine.Load(ctx, runID)
		return err == nil && r.Waiting == planID && r.Offering == ""
	}
	if !bot.WaitUntil(fake, 10*time.Second, shown) {
		t.Fatal("the plan review was not saved as shown")
	}
	rdb := a.Conn.Client
	before, err := rdb.Dump(ctx, "rb:run:"+runID).Result()
	if err != nil {
		t.Fatal(err)
	}

	if _, err := fake.ClickButton(wctx, user, channel, plan.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	var draft slackfake.Message
	if !bot.WaitUntil(fake, 60*time.Second, func() bool {
		m, _, ok := pendingCheckpoint(fake, channel)
		draft = m
		return ok && m.TS != plan.TS
	}) {
		t.Fatalf("no draft review after the approval:\n%s", dumpAll(fake, channel))
	}

	if err := rdb.RestoreReplace(ctx, "rb:run:"+runID, 0, before).Err(); err != nil {
		t.Fatal(err)
	}
	n := len(fake.Messages(channel))
	if _, err := fake.ClickButton(wctx, user, channel, draft.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	var told string
	if !bot.WaitUntil(fake, 10*time.Second, func() bool {
		for _, m := range fake.Messages(channel)[n:] {
			if m.Ephemeral && m.ToUser == user {
				told = displayed(m)
				return true
			}
		}
		return false
	}) {
		t.Fatal("the click on the lost draft review was not answered")
	}
	if !strings.Contains(told, "This checkpoint was lost when the bot's storage was restored") || !strings.Contains(told, "waiting at *Research plan* again") || !strings.Contains(told, "Nothing was changed") {
		t.Fatalf("the click on the lost draft review was told %q", told)
	}
	if !bot.WaitUntil(fake, 10*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if m.TS == draft.TS {
				return strings.Contains(displayed(m), "nothing was decided here") && !strings.Contains(string(m.Blocks), `"`+blockkit.ActionApprove+`"`)
			}
		}
		return false
	}) {
		t.Fatalf("the lost draft review's message still offers its buttons:\n%s", dumpAll(fake, channel))
	}
	if !bot.WaitUntil(fake, 30*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if m.TS == plan.TS {
				return strings.Contains(displayed(m), "An earlier decision on this checkpoint was lost") && strings.Contains(string(m.Blocks), `"`+blockkit.ActionApprove+`"`)
			}
		}
		return false
	}) {
		t.Fatalf("the plan review was not offered again in the thread:\n%s", dumpAll(fake, channel))
	}
}
