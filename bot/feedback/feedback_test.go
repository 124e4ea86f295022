package feedback_test

import (
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/feedback"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	user, other, channel = bottest.Requester, bottest.Stranger, bottest.Channel
	runID                = "run-fb1"
	answerID             = "run-fb1.f1"
)

// fixture is the App with the feature plugged in, a finished run with a
// report and a follow-up answer, and its report posted in Channel as the
// Presenter posts it (blockkit.RenderReport, with the native 👍 / 👎).
type fixture struct {
	*bottest.Harness
	t      *testing.T
	engine *bottest.Engine
	api    *slack.Client
	report slackfake.Message
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, engine: bottest.NewEngine()}
	f.Harness = bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = f.engine
		fb, err := feedback.New(feedback.Config{Engine: f.engine, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Features = append(c.Features, fb)
	})
	rep := &pipeline.Report{Title: "Heat pumps in cold climates", Status: "complete", Abstract: "They work.", Markdown: "# Heat pumps", Metadata: pipeline.Metadata{RunID: runID}}
	f.engine.Put(&pipeline.Run{ID: runID, Question: "How well do heat pumps work in cold climates?", RequestedBy: user, Status: pipeline.StatusCompleted,
		Report: rep, FollowUps: []pipeline.FollowUp{{ID: answerID, Question: "what did [1] say?", Answered: true, Answer: "It works at -20 °C."}},
		Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel}})
	f.api = slack.New(f.Fake.BotToken(), slack.OptionAPIURL(f.Fake.APIURL()))
	f.report = f.post("", "the report", blockkit.RenderReport(rep, nil)...)
	return f
}

// post posts blocks as the bot in channel's thread and returns the message.
func (f *fixture) post(thread, text string, blocks ...slack.Block) slackfake.Message {
	f.t.Helper()
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)}
	if thread != "" {
		opts = append(opts, slack.MsgOptionTS(thread))
	}
	_, ts, err := f.api.PostMessageContext(f.Ctx, channel, opts...)
	if err != nil {
		f.t.Fatal(err)
	}
	for _, m := range f.Fake.Messages(channel) {
		if m.TS == ts {
			return m
		}
	}
	f.t.Fatalf("no message %s", ts)
	return slackfake.Message{}
}

func (f *fixture) thumb(who, ts string, useful bool) {
	f.t.Helper()
	if _, err := f.Fake.ClickFeedback(f.Ctx, who, channel, ts, blockkit.ActionFeedback, useful); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) run() *pipeline.Run {
	f.t.Helper()
	r, err := f.engine.Load(f.Ctx, runID)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// verdicts waits until the run has n verdicts and returns them.
func (f *fixture) verdicts(n int) []pipeline.Verdict {
	f.t.Helper()
	var got []pipeline.Verdict
	f.Wait("the run's verdicts", func() bool {
		got = f.run().Verdicts
		return len(got) == n
	})
	return got
}

// reason waits for the n-th reason form, shown to who about target, and
// sends why.
func (f *fixture) reason(n int, who, target, why string) {
	f.t.Helper()
	var forms []slackfake.View
	f.Wait("the reason forms", func() bool {
		forms = forms[:0]
		for _, v := range f.Fake.Views() {
			if strings.Contains(string(v.JSON), blockkit.CallbackNotUseful) {
				forms = append(forms, v)
			}
		}
		return len(forms) == n
	})
	form := forms[n-1]
	if sv := form.SlackView(); form.UserID != who || sv.PrivateMetadata != target {
		f.t.Fatalf("the reason form was shown to %q about %q", form.UserID, sv.PrivateMetadata)
	}
	f.Submit(who, form, map[string]map[string]slack.BlockAction{"verdict_reason": {"value": {Value: why}}})
}

// withReason waits until who's verdict carries why and returns it.
func (f *fixture) withReason(who, why string) pipeline.Verdict {
	f.t.Helper()
	var got pipeline.Verdict
	f.Wait("the reason of "+who, func() bool {
		for _, v := range f.run().Verdicts {
			if v.By == who && v.Reason == why {
				got = v
			}
		}
		return got.By != ""
	})
	return got
}

// counted waits for the counter: it moves just after the store.
func (f *fixture) counted(name string, up, down float64) {
	f.t.Helper()
	var u, d float64
	if !f.Fake.WaitUntil(10*time.Second, func() bool {
		u, d = bottest.CounterValue(f.t, f.Metrics, name, "useful"), bottest.CounterValue(f.t, f.Metrics, name, "not_useful")
		return u == up && d == down
	}) {
		f.t.Errorf("%s: counted %v useful, %v not useful; want %v and %v", name, u, d, up, down)
	}
}

// tally waits until the run's report verdicts are up 👍 and down 👎 among
// n verdicts in all.
func (f *fixture) tally(what string, up, down, n int) {
	f.t.Helper()
	f.Wait(what, func() bool {
		r := f.run()
		u, d := r.VerdictTally()
		return u == up && d == down && len(r.Verdicts) == n
	})
}

// TestReportFeedback: people judge a report through Slack's native
// feedback element: 👍 from one, 👎 with a reason from the other, who then
// changes their mind. Each verdict is stored with the run (one per
// person) and counted in the metrics. The custom buttons of a report posted
// before the native element still work, a 👎 on them still opens the
// reason form, and a follow-up answer is judged on its own.
func TestReportFeedback(t *testing.T) {
	f := newFixture(t)
	f.thumb(user, f.report.TS, true)
	if v := f.verdicts(1); v[0].By != user || !v[0].Useful || v[0].On != "" {
		t.Errorf("verdicts %+v", v)
	}
	f.EphemeralWith(channel, user, "your verdict on run")
	f.thumb(other, f.report.TS, false)
	f.verdicts(2)
	f.reason(1, other, runID, "It missed the 2025 field trials <!channel>")
	if v := f.withReason(other, "It missed the 2025 field trials <!channel>"); v.Useful || v.On != "" {
		t.Errorf("verdict with reason %+v", v)
	}
	f.counted("researchbot_report_feedback_total", 1, 1)
	// A person has one verdict: the second click replaces the first.
	f.thumb(other, f.report.TS, true)
	f.tally("the changed verdict", 2, 0, 2)
	f.counted("researchbot_report_feedback_total", 2, 1)

	// A report posted before the native element has the custom buttons
	// (value: the run id); they still work, 👎 with its reason form.
	old := f.post(f.report.TS, "an older report", slack.NewActionBlock("report_feedback",
		slack.NewButtonBlockElement(blockkit.ActionUseful, runID, blockkit.Plain(":thumbsup: Useful", 75)),
		slack.NewButtonBlockElement(blockkit.ActionNotUseful, runID, blockkit.Plain(":thumbsdown: Not useful", 75))))
	f.Click(user, old, blockkit.ActionNotUseful)
	// The click is acked before it is handled: wait until it is counted
	// (after it is stored), so the next click cannot overtake it.
	f.counted("researchbot_report_feedback_total", 2, 2)
	f.reason(2, user, runID, "Too short")
	if v := f.withReason(user, "Too short"); v.Useful {
		t.Errorf("old 👎: %+v", v)
	}
	f.Click(user, old, blockkit.ActionUseful)
	f.tally("the old 👍", 2, 0, 2)
	f.counted("researchbot_report_feedback_total", 3, 2)

	// A follow-up answer carries its own native element; its verdict names
	// the answer and leaves the report's verdicts alone.
	answer := f.post(f.report.TS, "the answer", blockkit.RenderFollowUp(f.run().Report, f.run().FollowUps[0])...)
	if !strings.Contains(string(answer.Blocks), `"`+blockkit.BlockAnswerFeedback+`"`) {
		t.Fatalf("the answer carries no feedback element: %s", answer.Blocks)
	}
	f.thumb(other, answer.TS, false)
	var on string
	f.Wait("the verdict on the answer, apart", func() bool {
		r := f.run()
		for _, v := range r.Verdicts {
			if v.On != "" && v.By == other && !v.Useful {
				on = v.On
			}
		}
		up, down := r.VerdictTally()
		return on != "" && len(r.Verdicts) == 3 && up == 2 && down == 0
	})
	if on != answerID {
		t.Errorf("the verdict names %q, not the answer", on)
	}
	f.reason(3, other, runID+"|"+on, "It ignored the second source")
	if v := f.withReason(other, "It ignored the second source"); v.On != on || v.Useful {
		t.Errorf("answer verdict with reason %+v", v)
	}
	f.counted("researchbot_answer_feedback_total", 0, 1)
	f.counted("researchbot_report_feedback_total", 3, 2)
}

// TestFeedbackWithoutAReportIsExplained: a verdict on a run that has no
// report (or no longer exists) is not recorded nor counted, and the
// person is told why.
func TestFeedbackWithoutAReportIsExplained(t *testing.T) {
	f := newFixture(t)
	f.engine.Put(&pipeline.Run{ID: "run-noreport", RequestedBy: user, Status: pipeline.StatusRunning, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: channel}})
	msg := f.post("", "buttons", slack.NewActionBlock("report_feedback",
		slack.NewButtonBlockElement(blockkit.ActionUseful, "run-noreport", blockkit.Plain("Useful", 75)),
		slack.NewButtonBlockElement(blockkit.ActionNotUseful, "run-gone", blockkit.Plain("Not useful", 75))))
	f.Click(user, msg, blockkit.ActionUseful)
	f.EphemeralWith(channel, user, "has no report to give feedback on")
	f.Click(user, msg, blockkit.ActionNotUseful)
	f.EphemeralWith(channel, user, "I can't find run")
	if n := bottest.CounterValue(t, f.Metrics, "researchbot_report_feedback_total", "useful"); n != 0 {
		t.Errorf("%v verdicts counted", n)
	}
}

// TestNewNamesWhatIsMissing: New refuses a Config without an engine or a
// way to reach Slack, and says which.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := feedback.New(feedback.Config{})
	if err == nil || !strings.Contains(err.Error(), "a Sender") || !strings.Contains(err.Error(), "an engine") {
		t.Errorf("New(empty) = %v", err)
	}
}
