package bot

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// assistantReport runs a research in an assistant thread opened beside
// viewing, with the sources finishing gives it, to its report, and returns
// the thread and the share offer posted under the report.
func assistantReport(t *testing.T, h *harness, viewing string, finishing func(r *pipeline.Run)) (dm, thread string, offer slackfake.Message) {
	t.Helper()
	h.engine.mu.Lock()
	h.engine.finishing = finishing
	h.engine.mu.Unlock()
	dm = slackfake.DMChannelID(requester)
	thread, err := h.fake.StartAssistantThread(h.ctx, requester, viewing)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the greeting", func() bool { _, ok := inThread(h.fake, dm, thread, "I research questions"); return ok })
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, "How do RAG systems handle stale sources?"); err != nil {
		t.Fatal(err)
	}
	var plan, draft slackfake.Message
	h.waitFor("the plan", func() bool {
		var ok bool
		plan, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Research plan")
		return ok
	})
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the draft", func() bool {
		var ok bool
		draft, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Draft review")
		return ok
	})
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report and the share offer", func() bool {
		var ok bool
		offer, ok = inThread(h.fake, dm, thread, blockkit.ActionShareOther)
		return ok
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
func sharedIn(h *harness, channel string) []slackfake.Message {
	var out []slackfake.Message
	for _, m := range h.fake.Messages(channel) {
		if !m.Ephemeral && strings.Contains(raw(m), "Shared by") {
			out = append(out, m)
		}
	}
	return out
}

// ephemeralInThread reports whether user was shown, in channel's thread, an
// ephemeral message containing every one of subs.
func ephemeralInThread(h *harness, channel, thread, user string, subs ...string) bool {
	for _, m := range h.fake.Thread(channel, thread) {
		if !m.Ephemeral || m.ToUser != user {
			continue
		}
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(raw(m)+m.Text, s)
		}
		if ok {
			return true
		}
	}
	return false
}

// TestE2EShareReportToViewedChannel: a report that used only public sources
// is shared, by the person who asked, to the channel they were viewing: its
// summary is posted there with the report file in its thread, the share is
// recorded in the assistant thread, and a second click posts nothing more.
func TestE2EShareReportToViewedChannel(t *testing.T) {
	h := newHarness(t, nil)
	dm, thread, offer := assistantReport(t, h, chanIn, publicSources)
	if buttonValue(offer, blockkit.ActionShare) != blockkit.ShareValue("run-1", chanIn) || !strings.Contains(raw(offer), "<#"+chanIn+">") {
		t.Fatalf("the offer does not name the viewed channel: %s", raw(offer))
	}
	h.click(requester, offer, blockkit.ActionShare)
	var shared slackfake.Message
	h.waitFor("the shared report and its file", func() bool {
		msgs := sharedIn(h, chanIn)
		if len(msgs) != 1 {
			return false
		}
		shared = msgs[0]
		for _, f := range h.fake.Files() {
			if f.Channel == chanIn && f.ThreadTS == shared.TS && f.Completed {
				return true
			}
		}
		return false
	})
	if !strings.Contains(raw(shared), "RAG and stale sources") || !strings.Contains(raw(shared), "<@"+requester+">") {
		t.Errorf("shared message = %s", raw(shared))
	}
	h.waitFor("the record in the assistant thread", func() bool {
		_, ok := inThread(h.fake, dm, thread, "<@"+requester+"> shared this report to <#"+chanIn+">", "<!date^")
		return ok
	})
	h.click(requester, offer, blockkit.ActionShare)
	h.waitFor("the second click answered", func() bool {
		return ephemeralInThread(h, dm, thread, requester, "already shared")
	})
	if n := len(sharedIn(h, chanIn)); n != 1 {
		t.Errorf("%d shared reports in the channel, want 1", n)
	}
}

// TestE2EShareRefusedForPrivateSources: a report that used a private
// channel's message and a file shared in the DM is not shared: nothing is
// posted in the channel, and the person is told how many sources the
// channel could not read — never which — and to ask there instead.
func TestE2EShareRefusedForPrivateSources(t *testing.T) {
	h := newHarness(t, nil)
	dm, thread, offer := assistantReport(t, h, chanIn, privateSources)
	h.click(requester, offer, blockkit.ActionShare)
	h.waitFor("the refusal", func() bool {
		return ephemeralInThread(h, dm, thread, requester, "can't share this report to <#"+chanIn+">", "2 sources it used", "Ask your question in <#"+chanIn+"> instead")
	})
	for _, m := range h.fake.Thread(dm, thread) {
		if m.Ephemeral && (strings.Contains(raw(m), "secret") || strings.Contains(raw(m), "roadmap")) {
			t.Errorf("the refusal names a private source: %s", raw(m))
		}
	}
	if msgs := h.fake.Messages(chanIn); len(msgs) != 0 {
		t.Errorf("%d messages posted in the channel, want none", len(msgs))
	}
	for _, f := range h.fake.Files() {
		if f.Channel == chanIn {
			t.Errorf("a file was posted in the channel: %s", f.Name)
		}
	}
}

// TestE2EShareOnlyByRequester: someone else's click shares nothing.
func TestE2EShareOnlyByRequester(t *testing.T) {
	h := newHarness(t, nil)
	dm, thread, offer := assistantReport(t, h, chanIn, publicSources)
	h.click(stranger, offer, blockkit.ActionShare)
	h.waitFor("the refusal", func() bool {
		return ephemeralInThread(h, dm, thread, stranger, "Only <@"+requester+">")
	})
	if n := len(sharedIn(h, chanIn)); n != 0 {
		t.Errorf("%d shared reports in the channel, want none", n)
	}
}

// TestE2EShareToChosenChannel: "Choose a channel…" opens a form with a
// conversations_select pre-set to the viewed channel; a channel the bot is
// not in is answered with "invite me first", and a channel the run's
// private sources came from is refused in the form.
func TestE2EShareToChosenChannel(t *testing.T) {
	h := newHarness(t, nil)
	dm, thread, offer := assistantReport(t, h, chanIn, publicSources)
	form := openShareForm(t, h, offer, 0)
	if s := string(form.JSON); !strings.Contains(s, `"conversations_select"`) || !strings.Contains(s, `"initial_conversation":"`+chanIn+`"`) {
		t.Errorf("share form = %s", s)
	}
	pick := func(channel string) map[string]map[string]slack.BlockAction {
		return map[string]map[string]slack.BlockAction{blockkit.ShareChannelBlock: {blockkit.ValueActionID: {SelectedConversation: channel}}}
	}
	h.submit(requester, form, pick(chanOut))
	h.waitFor("invite me first", func() bool {
		return ephemeralInThread(h, dm, thread, requester, "invite me to <#"+chanOut+"> first")
	})
	if n := len(sharedIn(h, chanOut)); n != 0 {
		t.Errorf("%d shared reports where the bot is not", n)
	}
	h.submit(requester, openShareForm(t, h, offer, 1), pick(chanIn))
	h.waitFor("the shared report", func() bool { return len(sharedIn(h, chanIn)) == 1 })
}

// openShareForm clicks "Choose a channel…" on offer and returns the form
// it opens, the n-th (from 0) opened so far.
func openShareForm(t *testing.T, h *harness, offer slackfake.Message, n int) slackfake.View {
	t.Helper()
	h.click(requester, offer, blockkit.ActionShareOther)
	var form slackfake.View
	h.waitFor("the share form", func() bool {
		seen := 0
		for _, v := range h.fake.Views() {
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

// TestE2EShareFormRefusal: in the form, a channel that could not read
// every source is refused in the form itself, and nothing is posted.
func TestE2EShareFormRefusal(t *testing.T) {
	h := newHarness(t, nil)
	_, _, offer := assistantReport(t, h, chanIn, privateSources)
	form := openShareForm(t, h, offer, 0)
	ack := h.submit(requester, form, map[string]map[string]slack.BlockAction{blockkit.ShareChannelBlock: {blockkit.ValueActionID: {SelectedConversation: chanIn}}})
	if ack.ResponseAction != "update" || !strings.Contains(string(ack.View), "2 sources it used") {
		t.Errorf("form ack = %+v", ack)
	}
	if msgs := h.fake.Messages(chanIn); len(msgs) != 0 {
		t.Errorf("%d messages posted in the channel, want none", len(msgs))
	}
}

// TestE2EShareOfferOnlyInAssistantThread: a report in a channel thread
// (already read by the channel) carries no share offer.
func TestE2EShareOfferOnlyInAssistantThread(t *testing.T) {
	h := newHarness(t, nil)
	plan := h.startRun("How do RAG systems handle stale sources?")
	h.click(requester, plan, blockkit.ActionApprove)
	var draft slackfake.Message
	h.waitFor("the draft", func() bool {
		var ok bool
		draft, ok = h.withAction(blockkit.ActionApprove, "Draft review")
		return ok
	})
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report and its file", func() bool {
		return h.threadHas("RAG and stale sources") && len(h.fake.Files()) == 1 && h.fake.Files()[0].Completed
	})
	h.waitFor("the run shown to its end", func() bool {
		f, _ := h.cfg.Memory.FinalPost(h.ctx, "run-1")
		return f[finalDone] == "1"
	})
	for _, m := range h.fake.Messages(chanIn) {
		if strings.Contains(raw(m), blockkit.ActionShareOther) {
			t.Errorf("a share offer in a channel thread: %s", raw(m))
		}
	}
}
