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
// that it was lost and where the run waits, and its message loses its
// buttons and says so. The plan review is posted again at the bottom of
// the thread, with its buttons, saying the decision was lost (who made it,
// when); its earlier message, which showed the approval, says the decision
// was lost and links to the new one; the App Home warns beside it. The
// click delivered again posts nothing more, and approving the plan again
// is applied once.
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
	// The plan review is asked again in a new message at the bottom of the
	// thread, with its buttons, saying the decision was lost and who made
	// it when (the bot's message memory outlived the loss here).
	var again slackfake.Message
	if !bot.WaitUntil(fake, 30*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if !m.Ephemeral && m.TS > draft.TS && strings.Contains(displayed(m), "An earlier decision on this checkpoint was lost") {
				again = m
				return strings.Contains(string(m.Blocks), `"`+blockkit.ActionApprove+`"`)
			}
		}
		return false
	}) {
		t.Fatalf("the plan review was not asked again in a new message:\n%s", dumpAll(fake, channel))
	}
	if again.ThreadTS != plan.ThreadTS || approveInstance(t, again) != planID {
		t.Fatalf("the plan review asked again in thread %q for %q, want thread %q and %q", again.ThreadTS, approveInstance(t, again), plan.ThreadTS, planID)
	}
	if d := displayed(again); !strings.Contains(d, "The lost decision: approved by <@"+user+">") || !strings.Contains(d, "The loss was found on") {
		t.Errorf("the plan review asked again does not say who decided what was lost, and when:\n%s", d)
	}
	bottom := func() string {
		last := ""
		for _, m := range fake.Messages(channel) {
			if !m.Ephemeral && m.ThreadTS == plan.ThreadTS && m.TS > last {
				last = m.TS
			}
		}
		return last
	}
	if b := bottom(); b != again.TS {
		t.Errorf("the plan review asked again is %s, but the bottom of the thread is %s:\n%s", again.TS, b, dumpAll(fake, channel))
	}
	// Its earlier message, which showed the approval, says that it was lost
	// and points to the new message; it has no buttons.
	link := "https://" + slackfake.TeamDomain + ".slack.com/archives/" + channel + "/p" + strings.ReplaceAll(again.TS, ".", "")
	if !bot.WaitUntil(fake, 10*time.Second, func() bool {
		for _, m := range fake.Messages(channel) {
			if m.TS == plan.TS {
				d := displayed(m)
				return strings.Contains(d, "the decision made here was lost") && strings.Contains(d, "<"+link+"|in a new message below>") && !strings.Contains(string(m.Blocks), `"`+blockkit.ActionApprove+`"`)
			}
		}
		return false
	}) {
		t.Fatalf("the plan review's earlier message does not say its decision was lost and where to decide (%s):\n%s", link, dumpAll(fake, channel))
	}

	// The requester's App Home shows the warning beside the plan review,
	// linking to the message that asks again.
	if err := fake.OpenHome(wctx, user); err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(fake, 10*time.Second, func() bool {
		v, ok := fake.Home(user)
		d := bot.DisplayedText(v.JSON)
		return ok && strings.Contains(d, "*Research plan* <"+link+"|in its thread>") && strings.Contains(d, "An earlier decision on it was lost when the bot's storage was restored")
	}) {
		v, _ := fake.Home(user)
		t.Fatalf("the App Home does not warn beside the plan review asked again:\n%s", bot.DisplayedText(v.JSON))
	}

	// The click delivered again (Slack saw no ack) posts nothing more.
	env, ok := fake.LastEnvelope("interactive")
	if !ok {
		t.Fatal("no interactive envelope")
	}
	if _, err := fake.Redeliver(wctx, env.EnvelopeID, "timeout"); err != nil {
		t.Fatal(err)
	}
	// Approving the plan where it is asked again is applied once, collapses
	// that message, and the run goes on to a new draft review; by then any
	// second posting of the plan review would have happened.
	if _, err := fake.ClickButton(wctx, user, channel, again.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(fake, 60*time.Second, func() bool {
		m, _, ok := pendingCheckpoint(fake, channel)
		return ok && m.TS > again.TS
	}) {
		t.Fatalf("no draft review after approving the plan again:\n%s", dumpAll(fake, channel))
	}
	asked := 0
	for _, c := range fake.Calls("chat.postMessage") {
		if strings.Contains(c.Params["text"], "An earlier decision was lost") {
			asked++
		}
	}
	for _, m := range fake.Messages(channel) {
		if m.TS == again.TS && (strings.Contains(string(m.Blocks), `"`+blockkit.ActionApprove+`"`) || !strings.Contains(displayed(m), "approved by")) {
			t.Errorf("the plan review asked again was not collapsed to its decision: %s", displayed(m))
		}
	}
	if asked != 1 {
		t.Errorf("the plan review was posted again %d times, want once:\n%s", asked, dumpAll(fake, channel))
	}
	r, err := a.Engine.Load(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Instance(planID).Decision; d == nil || d.By != user {
		t.Fatalf("the plan decision after the loss: %+v", d)
	}
}
