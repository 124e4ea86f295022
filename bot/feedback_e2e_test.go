package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/feedback"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2EReportFeedback runs an auto-mode research with the real engine
// and the verdicts feature (bot/feedback, plugged in as the assembly does;
// its own tests, on bot/bottest's App and in-memory engine, cover the same
// clicks), then people judge the report through Slack's native feedback element: 👍
// from one, 👎 with a reason from the other, who then changes their mind.
// Each verdict is stored with the run (one per person) and counted in the
// metrics. The custom buttons of a report posted before the native element
// still work, a 👎 on them still opens the reason form, and a follow-up
// answer is judged on its own.
func TestE2EReportFeedback(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	var metrics *bot.Metrics
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, a *app.App) {
		metrics = c.Metrics
		verdicts, err := feedback.New(feedback.Config{Engine: a.Engine, Kit: kitOf(c)})
		if err != nil {
			t.Fatal(err)
		}
		c.Features = append(c.Features, verdicts)
	})
	const user, other, channel = "U0REQ0001", "U0OTHER01", "C0RESEARCH"
	fake.AddUser(other, "grace", "UTC")
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	wait := func(cond func() bool) bool { return bot.WaitUntil(fake, time.Until(deadlineOf(wctx)), cond) }
	report := waitMessage(wctx, t, fake, channel, "report", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), `"`+blockkit.BlockReportFeedback+`"`)
	})
	if b := string(report.Blocks); !strings.Contains(b, `"context_actions"`) || !strings.Contains(b, `"feedback_buttons"`) ||
		strings.Contains(b, blockkit.ActionUseful) || strings.Contains(b, blockkit.ActionNotUseful) {
		t.Fatalf("the report does not carry the native element alone:\n%s", b)
	}
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	runID := runs[0].ID

	thumb := func(who, ts string, useful bool) {
		t.Helper()
		if _, err := fake.ClickFeedback(wctx, who, channel, ts, blockkit.ActionFeedback, useful); err != nil {
			t.Fatal(err)
		}
	}
	verdicts := func(n int) []pipeline.Verdict {
		t.Helper()
		var got []pipeline.Verdict
		if !wait(func() bool {
			r, err := a.Engine.Load(ctx, runID)
			if err == nil && len(r.Verdicts) == n {
				got = r.Verdicts
			}
			return got != nil
		}) {
			t.Fatalf("the run never had %d verdicts", n)
		}
		return got
	}
	// reason waits for the n-th reason form, shown to who about target,
	// and sends why.
	reason := func(n int, who, target, why string) {
		t.Helper()
		var forms []slackfake.View
		wait(func() bool {
			forms = forms[:0]
			for _, v := range fake.Views() {
				if strings.Contains(string(v.JSON), blockkit.CallbackNotUseful) {
					forms = append(forms, v)
				}
			}
			return len(forms) == n
		})
		if len(forms) != n {
			t.Fatalf("%d reason forms, want %d", len(forms), n)
		}
		form := forms[n-1]
		if sv := form.SlackView(); form.UserID != who || sv.PrivateMetadata != target {
			t.Fatalf("the reason form was shown to %q about %q", form.UserID, sv.PrivateMetadata)
		}
		if _, err := fake.SubmitView(wctx, who, form.SlackView(), map[string]map[string]slack.BlockAction{
			"verdict_reason": {"value": {Value: why}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	withReason := func(who, why string) pipeline.Verdict {
		t.Helper()
		var got pipeline.Verdict
		if !wait(func() bool {
			r, _ := a.Engine.Load(ctx, runID)
			for _, v := range r.Verdicts {
				if v.By == who && v.Reason == why {
					got = v
				}
			}
			return got.By != ""
		}) {
			t.Fatalf("the reason of %s was not stored", who)
		}
		return got
	}
	// counted waits for the counter: it moves just after the store.
	counted := func(name string, up, down float64) {
		t.Helper()
		var u, d float64
		if !wait(func() bool {
			u, d = counterValue(t, metrics, name, "useful"), counterValue(t, metrics, name, "not_useful")
			return u == up && d == down
		}) {
			t.Errorf("%s: counted %v useful, %v not useful; want %v and %v", name, u, d, up, down)
		}
	}

	thumb(user, report.TS, true)
	if v := verdicts(1); v[0].By != user || !v[0].Useful || v[0].On != "" {
		t.Errorf("verdicts %+v", v)
	}
	thumb(other, report.TS, false)
	verdicts(2)
	reason(1, other, runID, "It missed the 2025 field trials <!channel>")
	if v := withReason(other, "It missed the 2025 field trials <!channel>"); v.Useful || v.On != "" {
		t.Errorf("verdict with reason %+v", v)
	}
	counted("researchbot_report_feedback_total", 1, 1)
	// A person has one verdict: the second click replaces the first.
	thumb(other, report.TS, true)
	if !wait(func() bool {
		r, _ := a.Engine.Load(ctx, runID)
		up, down := r.VerdictTally()
		return up == 2 && down == 0 && len(r.Verdicts) == 2
	}) {
		t.Fatal("the changed verdict was not stored")
	}
	counted("researchbot_report_feedback_total", 2, 1)

	// A report posted before the native element has the custom buttons
	// (value: the run id); they still work, 👎 with its reason form.
	api := slack.New(fake.BotToken(), slack.OptionAPIURL(fake.APIURL()))
	_, oldTS, err := api.PostMessageContext(wctx, channel, slack.MsgOptionTS(report.ThreadTS), slack.MsgOptionText("an older report", false),
		slack.MsgOptionBlocks(slack.NewActionBlock("report_feedback",
			slack.NewButtonBlockElement(blockkit.ActionUseful, runID, blockkit.Plain(":thumbsup: Useful", 75)),
			slack.NewButtonBlockElement(blockkit.ActionNotUseful, runID, blockkit.Plain(":thumbsdown: Not useful", 75)))))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fake.ClickButton(wctx, user, channel, oldTS, blockkit.ActionNotUseful, "", ""); err != nil {
		t.Fatal(err)
	}
	// The click is acked before it is handled: wait until it is counted
	// (after it is stored), so the next click cannot overtake it.
	counted("researchbot_report_feedback_total", 2, 2)
	reason(2, user, runID, "Too short")
	if v := withReason(user, "Too short"); v.Useful {
		t.Errorf("old 👎: %+v", v)
	}
	if _, err := fake.ClickButton(wctx, user, channel, oldTS, blockkit.ActionUseful, "", ""); err != nil {
		t.Fatal(err)
	}
	if !wait(func() bool {
		r, _ := a.Engine.Load(ctx, runID)
		up, down := r.VerdictTally()
		return up == 2 && down == 0 && len(r.Verdicts) == 2
	}) {
		t.Fatal("the old 👍 was not stored")
	}
	counted("researchbot_report_feedback_total", 3, 2)

	// A follow-up answer carries its own native element; its verdict names
	// the answer and leaves the report's verdicts alone.
	if err := fake.PostUserMention(wctx, user, channel, report.ThreadTS, "what did [1] say about cold weather performance?"); err != nil {
		t.Fatal(err)
	}
	answer := waitMessage(wctx, t, fake, channel, "answer", func(m slackfake.Message) bool {
		return m.ThreadTS == report.ThreadTS && strings.Contains(string(m.Blocks), `"`+blockkit.BlockAnswerFeedback+`"`)
	})
	thumb(other, answer.TS, false)
	var on string
	if !wait(func() bool {
		r, _ := a.Engine.Load(ctx, runID)
		for _, v := range r.Verdicts {
			if v.On != "" && v.By == other && !v.Useful {
				on = v.On
			}
		}
		up, down := r.VerdictTally()
		return on != "" && len(r.Verdicts) == 3 && up == 2 && down == 0
	}) {
		t.Fatal("the verdict on the answer was not stored apart")
	}
	if r, _ := a.Engine.Load(ctx, runID); len(r.FollowUps) != 1 || r.FollowUps[0].ID != on {
		t.Errorf("the verdict names %q, not the answer", on)
	}
	reason(3, other, runID+"|"+on, "It ignored the second source")
	if v := withReason(other, "It ignored the second source"); v.On != on || v.Useful {
		t.Errorf("answer verdict with reason %+v", v)
	}
	counted("researchbot_answer_feedback_total", 0, 1)
	counted("researchbot_report_feedback_total", 3, 2)
}
