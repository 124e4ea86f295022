package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2EReportFeedback runs an auto-mode research with the real engine,
// then two people judge the report: 👍 from one, 👎 with a reason from the
// other, who then changes their mind. Each verdict is stored with the run
// (one per person) and counted in the metrics.
func TestE2EReportFeedback(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	var metrics *bot.Metrics
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, _ *app.App) { metrics = c.Metrics })
	const user, other, channel = "U0REQ0001", "U0OTHER01", "C0RESEARCH"
	fake.AddUser(other, "grace", "UTC")
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	var report slackfake.Message
	wait := func(cond func() bool) bool { return bot.WaitUntil(fake, time.Until(deadlineOf(wctx)), cond) }
	if !wait(func() bool {
		for _, m := range fake.Messages(channel) {
			if strings.Contains(string(m.Blocks), `"`+blockkit.ActionUseful+`"`) {
				report = m
			}
		}
		return report.TS != ""
	}) {
		t.Fatalf("no report:\n%s", dumpAll(fake, channel))
	}
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	runID := runs[0].ID

	click := func(who, action string) {
		t.Helper()
		if _, err := fake.ClickButton(wctx, who, channel, report.TS, action, "", ""); err != nil {
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
	click(user, blockkit.ActionUseful)
	if v := verdicts(1); v[0].By != user || !v[0].Useful {
		t.Errorf("verdicts %+v", v)
	}
	click(other, blockkit.ActionNotUseful)
	verdicts(2)
	var form slackfake.View
	wait(func() bool {
		for _, v := range fake.Views() {
			if strings.Contains(string(v.JSON), bot.CallbackNotUseful) {
				form = v
			}
		}
		return form.ID != ""
	})
	if form.UserID != other {
		t.Fatalf("the reason form was shown to %q", form.UserID)
	}
	if _, err := fake.SubmitView(wctx, other, form.SlackView(), map[string]map[string]slack.BlockAction{
		"verdict_reason": {"value": {Value: "It missed the 2025 field trials <!channel>"}},
	}); err != nil {
		t.Fatal(err)
	}
	var withReason []pipeline.Verdict
	wait(func() bool {
		r, _ := a.Engine.Load(ctx, runID)
		if len(r.Verdicts) == 2 && r.Verdicts[1].Reason != "" {
			withReason = r.Verdicts
		}
		return withReason != nil
	})
	if len(withReason) != 2 || withReason[1].By != other || withReason[1].Useful || withReason[1].Reason != "It missed the 2025 field trials <!channel>" {
		t.Errorf("verdicts %+v", withReason)
	}
	if up, down := counterValue(t, metrics, "researchbot_report_feedback_total", "useful"), counterValue(t, metrics, "researchbot_report_feedback_total", "not_useful"); up != 1 || down != 1 {
		t.Errorf("counted %v useful, %v not useful; want 1 and 1", up, down)
	}
	// A person has one verdict: the second click replaces the first.
	click(other, blockkit.ActionUseful)
	if !wait(func() bool {
		r, _ := a.Engine.Load(ctx, runID)
		up, down := r.VerdictTally()
		return up == 2 && down == 0
	}) {
		t.Fatal("the changed verdict was not stored")
	}
}
