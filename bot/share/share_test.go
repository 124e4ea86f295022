package share_test

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/share"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	requester, stranger = bottest.Requester, bottest.Stranger
	chanIn              = bottest.Channel
	chanOut             = "C0NOTIN01" // a channel without the bot
)

// newHarness is the App with the share feature plugged in (as the
// assembly plugs it), on bottest's Engine, with chanOut known.
func newHarness(t *testing.T) (*bottest.Harness, *bottest.Engine) {
	t.Helper()
	engine := bottest.NewEngine()
	h := bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = engine
		f, err := share.New(share.Config{Engine: engine, Memory: h.Memory.(share.Memory), Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Features = append(c.Features, f)
		// The assistant panel, where the shared reports are asked for,
		// plugged in as the assembly does.
		panel, err := assistant.New(assistant.Config{Memory: h.Memory, Kit: h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Assistant = panel
	})
	h.Fake.AddChannel(chanOut, "elsewhere", false)
	return h, engine
}

// assistantReport opens an assistant thread beside viewing, puts there
// run-1's finished report with the sources finishing gives it, and posts
// the share offer under it as the Presenter does; it returns the thread and
// the offer.
func assistantReport(t *testing.T, h *bottest.Harness, engine *bottest.Engine, viewing string, finishing func(r *pipeline.Run)) (dm, thread string, offer slackfake.Message) {
	t.Helper()
	dm = slackfake.DMChannelID(requester)
	thread, err := h.Fake.StartAssistantThread(h.Ctx, requester, viewing)
	if err != nil {
		t.Fatal(err)
	}
	h.Wait("the greeting", func() bool { _, ok := bottest.InThread(h.Fake, dm, thread, "I research questions"); return ok })
	r := &pipeline.Run{ID: "run-1", Question: "How do RAG systems handle stale sources?", RequestedBy: requester, Status: pipeline.StatusCompleted,
		Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: dm, ThreadTS: thread},
		Report: &pipeline.Report{Status: "complete", Confidence: "high", Title: "RAG and stale sources", Abstract: "Summary of what the pages said.",
			References: []pipeline.Reference{{N: 1, SourceID: 1, Title: "Keeping RAG fresh", URL: "https://blog.example.com/rag-fresh", Domain: "blog.example.com"}},
			Markdown:   "# RAG and stale sources\n\nFull report.\n", Metadata: pipeline.Metadata{RunID: "run-1"}}}
	finishing(r)
	engine.Put(r)
	api := slack.New(h.Fake.BotToken(), slack.OptionAPIURL(h.Fake.APIURL()))
	_, ts, err := api.PostMessageContext(h.Ctx, dm, slack.MsgOptionTS(thread), slack.MsgOptionText(blockkit.ShareOfferText, false),
		slack.MsgOptionBlocks(blockkit.RenderShareOffer(r.ID, viewing)...))
	if err != nil {
		t.Fatal(err)
	}
	h.Wait("the share offer", func() bool {
		var ok bool
		offer, ok = bottest.InThread(h.Fake, dm, thread, blockkit.ActionShareOther)
		return ok && offer.TS == ts
	})
	return dm, thread, offer
}

// publicSources gives a run one web page, read and cited.
func publicSources(r *pipeline.Run) {
	r.Sources = []pipeline.Source{{ID: 1, URL: "https://blog.example.com/rag-fresh", Title: "Keeping RAG fresh", Fetched: true, Selected: true}}
	r.Pages = []pipeline.Page{{SourceID: 1, URL: "https://blog.example.com/rag-fresh", Text: "Re-index nightly."}}
}

// privateSources gives a run the web page and a private channel's message
// found by the asker's workspace search, and a file shared in their DM.
func privateSources(r *pipeline.Run) {
	publicSources(r)
	r.Sources = append(r.Sources,
		pipeline.Source{ID: 2, Kind: pipeline.KindWorkspace, Title: "#secret-plans — @dana", Fetched: true, Selected: true,
			Visibility: pipeline.Visibility{Conversation: "G0SECRET", Reader: requester}},
		pipeline.Source{ID: 3, Kind: pipeline.KindFile, Title: "roadmap.pdf", Fetched: true, Selected: true,
			Visibility: pipeline.Visibility{Conversation: slackfake.DMChannelID(requester), Reader: requester}})
	r.Pages = append(r.Pages, pipeline.Page{SourceID: 2, Text: "The secret plan."}, pipeline.Page{SourceID: 3, File: "roadmap.pdf", Text: "Roadmap."})
}

// sharedIn returns the messages of channel that are shared reports.
func sharedIn(h *bottest.Harness, channel string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range h.Fake.Messages(channel) {
		if !m.Ephemeral && strings.Contains(bottest.Raw(m), "Shared by") {
			out = append(out, m)
		}
	}
	return out
}

// TestShareReportToViewedChannel: a report that used only public sources
// is shared, by the person who asked, to the channel they were viewing: its
// summary is posted there with the report file in its thread, the share is
// recorded in the assistant thread, and a second click posts nothing more.
func TestShareReportToViewedChannel(t *testing.T) {
	h, engine := newHarness(t)
	dm, thread, offer := assistantReport(t, h, engine, chanIn, publicSources)
	h.Click(requester, offer, blockkit.ActionShare)
	var shared slackfake.Message
	h.Wait("the shared report and its file", func() bool {
		msgs := sharedIn(h, chanIn)
		if len(msgs) != 1 {
			return false
		}
		shared = msgs[0]
		for _, f := range h.Fake.Files() {
			if f.Channel == chanIn && f.ThreadTS == shared.TS && f.Completed {
				return true
			}
		}
		return false
	})
	if raw := bottest.Raw(shared); !strings.Contains(raw, "RAG and stale sources") || !strings.Contains(raw, "<@"+requester+">") {
		t.Errorf("shared message = %s", raw)
	}
	for _, f := range h.Fake.Files() {
		if f.Channel == chanIn && (f.Name != "research-run-1.md" || f.Title != "RAG and stale sources") {
			t.Errorf("shared file %q titled %q", f.Name, f.Title)
		}
	}
	h.Wait("the record in the assistant thread", func() bool {
		_, ok := bottest.InThread(h.Fake, dm, thread, "<@"+requester+"> shared this report to <#"+chanIn+">", "<!date^")
		return ok
	})
	h.Click(requester, offer, blockkit.ActionShare)
	h.Wait("the second click answered", func() bool {
		return bottest.EphemeralInThread(h.Fake, dm, thread, requester, "already shared")
	})
	if n := len(sharedIn(h, chanIn)); n != 1 {
		t.Errorf("%d shared reports in the channel, want 1", n)
	}
}

// TestShareRefusedForPrivateSources: a report that used a private
// channel's message and a file shared in the DM is not shared: nothing is
// posted in the channel, and the person is told how many sources the
// channel could not read — never which — and to ask there instead.
func TestShareRefusedForPrivateSources(t *testing.T) {
	h, engine := newHarness(t)
	dm, thread, offer := assistantReport(t, h, engine, chanIn, privateSources)
	h.Click(requester, offer, blockkit.ActionShare)
	h.Wait("the refusal", func() bool {
		return bottest.EphemeralInThread(h.Fake, dm, thread, requester, "can't share this report to <#"+chanIn+">", "2 sources it used", "Ask your question in <#"+chanIn+"> instead")
	})
	for _, m := range h.Fake.Thread(dm, thread) {
		if m.Ephemeral && (strings.Contains(bottest.Raw(m), "secret") || strings.Contains(bottest.Raw(m), "roadmap")) {
			t.Errorf("the refusal names a private source: %s", bottest.Raw(m))
		}
	}
	if msgs := h.Fake.Messages(chanIn); len(msgs) != 0 {
		t.Errorf("%d messages posted in the channel, want none", len(msgs))
	}
	for _, f := range h.Fake.Files() {
		if f.Channel == chanIn {
			t.Errorf("a file was posted in the channel: %s", f.Name)
		}
	}
}

// TestShareOnlyByRequester: someone else's click shares nothing.
func TestShareOnlyByRequester(t *testing.T) {
	h, engine := newHarness(t)
	dm, thread, offer := assistantReport(t, h, engine, chanIn, publicSources)
	h.Click(stranger, offer, blockkit.ActionShare)
	h.Wait("the refusal", func() bool {
		return bottest.EphemeralInThread(h.Fake, dm, thread, stranger, "Only <@"+requester+">")
	})
	if n := len(sharedIn(h, chanIn)); n != 0 {
		t.Errorf("%d shared reports in the channel, want none", n)
	}
}

// TestShareToChosenChannel: "Choose a channel…" opens a form with a
// conversations_select pre-set to the viewed channel; a channel the bot is
// not in is answered with "invite me first", and a channel the run's
// private sources came from is refused in the form.
func TestShareToChosenChannel(t *testing.T) {
	h, engine := newHarness(t)
	dm, thread, offer := assistantReport(t, h, engine, chanIn, publicSources)
	form := openShareForm(t, h, offer, 0)
	if s := string(form.JSON); !strings.Contains(s, `"conversations_select"`) || !strings.Contains(s, `"initial_conversation":"`+chanIn+`"`) {
		t.Errorf("share form = %s", s)
	}
	pick := func(channel string) map[string]map[string]slack.BlockAction {
		return map[string]map[string]slack.BlockAction{blockkit.ShareChannelBlock: {blockkit.ValueActionID: {SelectedConversation: channel}}}
	}
	h.Submit(requester, form, pick(chanOut))
	h.Wait("invite me first", func() bool {
		return bottest.EphemeralInThread(h.Fake, dm, thread, requester, "invite me to <#"+chanOut+"> first")
	})
	if n := len(sharedIn(h, chanOut)); n != 0 {
		t.Errorf("%d shared reports where the bot is not", n)
	}
	h.Submit(requester, openShareForm(t, h, offer, 1), pick(chanIn))
	h.Wait("the shared report", func() bool { return len(sharedIn(h, chanIn)) == 1 })
}

// openShareForm clicks "Choose a channel…" on offer and returns the form
// it opens, the n-th (from 0) opened so far.
func openShareForm(t *testing.T, h *bottest.Harness, offer slackfake.Message, n int) slackfake.View {
	t.Helper()
	h.Click(requester, offer, blockkit.ActionShareOther)
	var form slackfake.View
	h.Wait("the share form", func() bool {
		seen := 0
		for _, v := range h.Fake.Views() {
			if strings.Contains(string(v.JSON), `"callback_id":"`+blockkit.ShareCallback+`"`) {
				if seen == n {
					form = v
					return true
				}
				seen++
			}
		}
		return false
	})
	return form
}

// TestShareFormRefusal: in the form, a channel that could not read
// every source is refused in the form itself, and nothing is posted.
func TestShareFormRefusal(t *testing.T) {
	h, engine := newHarness(t)
	_, _, offer := assistantReport(t, h, engine, chanIn, privateSources)
	form := openShareForm(t, h, offer, 0)
	ack := h.Submit(requester, form, map[string]map[string]slack.BlockAction{blockkit.ShareChannelBlock: {blockkit.ValueActionID: {SelectedConversation: chanIn}}})
	if ack.ResponseAction != "update" || !strings.Contains(string(ack.View), "2 sources it used") {
		t.Errorf("form ack = %+v", ack)
	}
	if msgs := h.Fake.Messages(chanIn); len(msgs) != 0 {
		t.Errorf("%d messages posted in the channel, want none", len(msgs))
	}
}

// TestNewNamesWhatIsMissing: New refuses a Config without an engine, a
// memory or a way to reach Slack, and says which.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := share.New(share.Config{})
	for _, want := range []string{"a Sender", "an engine", "a memory"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New(empty) = %v, want it to name %s", err, want)
		}
	}
}
