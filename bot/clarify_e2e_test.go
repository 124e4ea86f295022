package bot_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2EClarifyingQuestionAnsweredByMention: a guided run whose planner
// finds the question ambiguous posts its clarifying questions in the
// thread before any plan, with Answer and Skip. Another person's mention
// is refused; the requester's mention is the answer: acknowledged in the
// thread, the questions' message collapses to "answered", the planner is
// asked again with the answer, and the plan review that follows names the
// plan's assumptions. The report says what was asked and answered.
func TestE2EClarifyingQuestionAnsweredByMention(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	var mu sync.Mutex
	var plans []string
	res := &researchtest.Researcher{
		ClarifyingQuestions: []pipeline.ClarifyingQuestion{{Question: "Air-source or ground-source heat pumps?", Why: "They behave differently in frost."}},
		Assumptions:         []string{"air-source heat pumps"},
		Seen: func(c llmtest.Call) {
			if c.SchemaName == "research_plan" {
				mu.Lock()
				plans = append(plans, c.User)
				mu.Unlock()
			}
		},
	}
	const user, other, channel = "U0REQ0003", "U0OTHER03", "C0RESEARCH"
	fake, a, ctx := realBot(t, res, user, channel)
	fake.AddUser(other, "grace", "UTC")
	wctx, wcancel := context.WithTimeout(ctx, 60*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	asked := waitMessage(wctx, t, fake, channel, "the clarifying questions", func(m slackfake.Message) bool {
		return !m.Ephemeral && strings.Contains(displayed(m), "Before I plan: a few questions")
	})
	shown := displayed(asked)
	for _, want := range []string{"1. Air-source or ground-source heat pumps?", "_Why I ask:_ They behave differently in frost.", "air-source heat pumps", "Answer", "Skip"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the questions' message lacks %q:\n%s", want, shown)
		}
	}
	if _, _, ok := pendingCheckpoint(fake, channel); ok {
		t.Fatal("a plan was offered before the questions were answered")
	}
	mention := func(who, text string) {
		t.Helper()
		if err := fake.PostUserMention(wctx, who, channel, asked.ThreadTS, text); err != nil {
			t.Fatal(err)
		}
	}
	mention(other, "ground-source")
	waitMessage(wctx, t, fake, channel, "the refusal to another person", func(m slackfake.Message) bool {
		return m.Ephemeral && m.ToUser == other && strings.Contains(displayed(m), "can answer its questions")
	})
	mention(user, "Ground-source, in Finland")
	waitMessage(wctx, t, fake, channel, "the acknowledgement", func(m slackfake.Message) bool {
		return !m.Ephemeral && m.ThreadTS == asked.ThreadTS && strings.Contains(displayed(m), "I'll plan with your answers")
	})
	plan := waitCheckpoint(t, fake, channel, "Research plan")
	if !strings.Contains(displayed(plan), "*Assumes:* air-source heat pumps") {
		t.Errorf("the plan review does not name the plan's assumptions:\n%s", displayed(plan))
	}
	collapsed := waitMessage(wctx, t, fake, channel, "the answered questions", func(m slackfake.Message) bool {
		return m.TS == asked.TS && strings.Contains(displayed(m), "answered by")
	})
	if strings.Contains(string(collapsed.Blocks), `"`+blockkit.ActionEdit+`"`) {
		t.Error("the answered questions still show Answer")
	}
	mu.Lock()
	got := append([]string(nil), plans...)
	mu.Unlock()
	if len(got) != 2 || strings.Contains(got[0], "Ground-source, in Finland") || !strings.Contains(got[1], "Reply in the person's own words: Ground-source, in Finland") &&
		!strings.Contains(got[1], "Answer: Ground-source, in Finland") {
		t.Fatalf("%d planner calls; the second should carry the answer:\n%s", len(got), strings.Join(got, "\n----\n"))
	}
	click := func(want, action string) {
		t.Helper()
		m := waitCheckpoint(t, fake, channel, want)
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		if _, err := fake.ClickButton(cctx, user, channel, m.TS, action, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	click("Research plan", blockkit.ActionApprove)
	click("Draft review", blockkit.ActionApprove)
	waitFor(t, fake, "the report", func() bool {
		fs := fake.Files()
		return len(fs) > 0 && strings.HasPrefix(fs[len(fs)-1].Name, "research-")
	})
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{})
	if err != nil || len(runs) != 1 || runs[0].Report == nil {
		t.Fatalf("runs %v, %v", runs, err)
	}
	md := pipeline.RenderMarkdown(runs[0].Report)
	for _, want := range []string{"1 clarifying question(s) asked before the plan; answered by " + user, "Asked: Air-source or ground-source heat pumps? — answer: Ground-source, in Finland"} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
