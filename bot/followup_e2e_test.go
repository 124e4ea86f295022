package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2EFollowUpQuestions runs an auto-mode research with the real engine,
// then talks to its thread: a question the sources answer is answered in
// the thread with its citation checked against the page (and a citation of
// a source the report does not cite removed); a question they do not answer
// says so and offers "Research this", which starts a child run in a new
// thread, linked both ways; a third question is over the per-user limit.
// The answers' cost is added to the parent run's spend.
func TestE2EFollowUpQuestions(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, a *app.App) {
		plugConversation(t, c, a.Engine, bot.Limit{}, bot.Limit{Rate: 2, Period: time.Hour})
	})
	const user, channel = "U0REQ0001", "C0RESEARCH"
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, match func(m slackfake.Message) bool) slackfake.Message {
		t.Helper()
		return waitMessage(wctx, t, fake, channel, what, match)
	}
	report := waitFor("report", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), `"`+blockkit.BlockReportFeedback+`"`)
	})
	thread := report.ThreadTS
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	parentID, spent := runs[0].ID, runs[0].Spend.CostUSD

	// 1. Answered from the sources, citations checked.
	if err := fake.PostUserMention(wctx, user, channel, thread, "what did [1] say about cold weather performance?"); err != nil {
		t.Fatal(err)
	}
	answer := waitFor("answer", func(m slackfake.Message) bool {
		return m.ThreadTS == thread && m.BotID != "" && strings.Contains(string(m.Blocks), "citations checked")
	})
	blocks := string(answer.Blocks)
	if !strings.Contains(blocks, "1 of 1 citations checked") || strings.Contains(blocks, "[99]") || !strings.Contains(blocks, "[1]") {
		t.Errorf("answer blocks: the [1] citation must be checked and [99] removed:\n%s", blocks)
	}
	if !strings.Contains(blocks, "The first source says") {
		t.Errorf("the answer is not shown:\n%s", blocks)
	}

	// 2. Not answered: Research this starts a linked child run.
	if err := fake.PostUserMention(wctx, user, channel, thread, "how much "+researchtest.UnansweredTopic+" do heat pumps make at night?"); err != nil {
		t.Fatal(err)
	}
	offer := waitFor("Research this", func(m slackfake.Message) bool {
		return m.ThreadTS == thread && strings.Contains(string(m.Blocks), `"`+blockkit.ActionResearchFollowUp+`"`)
	})
	if !strings.Contains(string(offer.Blocks), "don't answer this") {
		t.Errorf("the unanswered follow-up does not say so:\n%s", offer.Blocks)
	}
	parent, err := a.Engine.Load(ctx, parentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(parent.FollowUps) != 2 || !parent.FollowUps[0].Answered || parent.FollowUps[1].Answered {
		t.Fatalf("follow-ups %+v", parent.FollowUps)
	}
	if got := parent.Spend.CostUSD; got <= spent || got-spent < parent.FollowUpSpend()-1e-9 {
		t.Errorf("spend %.6f before, %.6f after: the answers' cost (%.6f) must be added", spent, got, parent.FollowUpSpend())
	}
	if _, err := fake.ClickButton(wctx, user, channel, offer.TS, blockkit.ActionResearchFollowUp, "", ""); err != nil {
		t.Fatal(err)
	}
	var child *pipeline.Run
	bot.WaitUntil(fake, time.Until(deadlineOf(wctx)), func() bool {
		all, err := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range all {
			if r.Parent == parentID && !r.Held { // held: its root message is being posted
				child = r
			}
		}
		return child != nil
	})
	if child == nil {
		t.Fatalf("no child run:\n%s", dumpAll(fake, channel))
	}
	if !strings.Contains(child.Context, "How well do heat pumps work in cold climates?") || !strings.Contains(child.Question, researchtest.UnansweredTopic) {
		t.Errorf("child question %q context %q", child.Question, child.Context)
	}
	waitFor("the child named in the parent's thread", func(m slackfake.Message) bool {
		return m.ThreadTS == thread && strings.Contains(m.Text+string(m.Blocks), child.ID) && strings.Contains(string(m.Blocks), "started run")
	})
	waitFor("the parent named in the child's thread", func(m slackfake.Message) bool {
		return m.ThreadTS == child.Origin.ThreadTS && m.ThreadTS != thread && strings.Contains(string(m.Blocks), "Follow-up of run")
	})
	waitFor("the button replaced by the child", func(m slackfake.Message) bool {
		return m.TS == offer.TS && strings.Contains(string(m.Blocks), "Being researched as run") && !strings.Contains(string(m.Blocks), blockkit.ActionResearchFollowUp)
	})
	if parent, err = a.Engine.Load(ctx, parentID); err != nil || parent.FollowUps[1].Child != child.ID {
		t.Fatalf("the parent does not name its child: %+v, %v", parent.FollowUps, err)
	}

	// 3. Over the per-user limit (2 an hour).
	if err := fake.PostUserMention(wctx, user, channel, thread, "and what about the costs of installation?"); err != nil {
		t.Fatal(err)
	}
	waitFor("rate limit notice", func(m slackfake.Message) bool {
		return m.Ephemeral && m.ToUser == user && strings.Contains(string(m.Blocks), "as many follow-up questions as allowed")
	})
	if parent, err = a.Engine.Load(ctx, parentID); err != nil || len(parent.FollowUps) != 2 {
		t.Errorf("a refused follow-up was recorded: %d, %v", len(parent.FollowUps), err)
	}
}

// TestE2EFollowUpInDirectMessages: in the bot's DM, where Slack sends no
// app_mention, a plain reply in a research thread is a follow-up question,
// answered there from the run's sources.
func TestE2EFollowUpInDirectMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	fake, _, ctx, _ := startRealStack(t, &researchtest.Researcher{}, nil)
	const user = "U0REQ0001"
	dm := slackfake.DMChannelID(user)
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto How well do heat pumps work in cold climates?", UserID: user, ChannelID: dm}); err != nil {
		t.Fatal(err)
	}
	find := func(what string, match func(m slackfake.Message) bool) slackfake.Message {
		t.Helper()
		return waitMessage(wctx, t, fake, dm, what, match)
	}
	report := find("report", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), `"`+blockkit.BlockReportFeedback+`"`)
	})
	if err := fake.PostUserMessage(wctx, user, dm, report.ThreadTS, "what did [1] say about cold weather performance?"); err != nil {
		t.Fatal(err)
	}
	answer := find("answer", func(m slackfake.Message) bool {
		return m.ThreadTS == report.ThreadTS && m.BotID != "" && strings.Contains(string(m.Blocks), "citations checked")
	})
	if !strings.Contains(string(answer.Blocks), "1 of 1 citations checked") {
		t.Errorf("answer: %s", answer.Blocks)
	}
}

// waitMessage waits until a message of channel matches, failing when ctx
// ends.
func waitMessage(ctx context.Context, t *testing.T, fake *slackfake.Server, channel, what string, match func(m slackfake.Message) bool) slackfake.Message {
	t.Helper()
	var found slackfake.Message
	ok := bot.WaitUntil(fake, time.Until(deadlineOf(ctx)), func() bool {
		for _, m := range fake.Messages(channel) {
			if match(m) {
				found = m
				return true
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("no %s:\n%s", what, dumpAll(fake, channel))
	}
	return found
}

// deadlineOf is ctx's deadline, or a minute from now when it has none.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}
