package bot

import (
	"slices"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// inThread finds the newest message of the thread (not ephemeral) whose
// blocks contain every one of subs.
func inThread(fake *slackfake.Server, channel, thread string, subs ...string) (slackfake.Message, bool) {
	msgs := fake.Thread(channel, thread)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Ephemeral {
			continue
		}
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(raw(m), s)
		}
		if ok {
			return m, true
		}
	}
	return slackfake.Message{}, false
}

// statusCalls are the statuses set in thread, in order, as "status|loading".
func statusCalls(fake *slackfake.Server, channel, thread string) []string {
	var out []string
	for _, c := range fake.Calls("assistant.threads.setStatus") {
		if c.Params["channel_id"] == channel && c.Params["thread_ts"] == thread && c.Error == "" {
			out = append(out, c.Params["status"]+"|"+c.Params["loading_messages"])
		}
	}
	return out
}

// callIndex is the position among all calls of the first call of method
// satisfying ok after position from (-1 when none).
func callIndex(fake *slackfake.Server, from int, method string, ok func(slackfake.Call) bool) int {
	for i, c := range fake.Calls("") {
		if i > from && c.Method == method && ok(c) {
			return i
		}
	}
	return -1
}

// TestE2EAssistantPanelResearchToReport: a person opens the assistant panel
// beside a channel, is greeted with suggested prompts, and asks a question
// there; the thread is titled after it, shows a status while the run works,
// cleared when the plan waits for a decision and when the report is
// posted; the plan and draft are decided with their buttons in the
// assistant thread, and the report lands there.
func TestE2EAssistantPanelResearchToReport(t *testing.T) {
	h := newHarness(t, nil)
	dm := slackfake.DMChannelID(requester)
	thread, err := h.fake.StartAssistantThread(h.ctx, requester, chanIn)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the greeting and the prompts", func() bool {
		th, _ := h.fake.AssistantThreadAt(dm, thread)
		_, greeted := inThread(h.fake, dm, thread, "I research questions")
		// The fake records a call after it has applied it: wait for both.
		return greeted && len(th.Prompts) == 3 && len(h.fake.Calls("assistant.threads.setSuggestedPrompts")) > 0
	})
	th, _ := h.fake.AssistantThreadAt(dm, thread)
	var titles []string
	for _, p := range th.Prompts {
		titles = append(titles, p.Title)
		if p.Message != p.Title {
			t.Errorf("prompt %q sends %q", p.Title, p.Message)
		}
	}
	if want := []string{"Research a question", "What is waiting for my decision?", "Start a research stream"}; !slices.Equal(titles, want) {
		t.Errorf("prompts = %q, want %q", titles, want)
	}
	if c := h.fake.Calls("assistant.threads.setSuggestedPrompts")[0]; c.Params["thread_ts"] != thread || c.Params["channel_id"] != dm {
		t.Errorf("setSuggestedPrompts params = %v", c.Params)
	}
	// The context is remembered per thread, and follows the person.
	if got, ok, _ := recallAssistantThread(h.ctx, h.cfg.Memory, dm, thread); !ok || got.Context != chanIn || got.User != requester {
		t.Errorf("remembered thread = %+v, %v; want context %s", got, ok, chanIn)
	}
	if err := h.fake.ChangeAssistantContext(h.ctx, requester, thread, chanOut); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the new context", func() bool {
		got, _, _ := recallAssistantThread(h.ctx, h.cfg.Memory, dm, thread)
		return got.Context == chanOut
	})

	question := "How do RAG systems handle stale sources?"
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, question); err != nil {
		t.Fatal(err)
	}
	var plan slackfake.Message
	h.waitFor("the plan in the assistant thread", func() bool {
		var ok bool
		plan, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Research plan")
		return ok
	})
	if th, _ := h.fake.AssistantThreadAt(dm, thread); th.Title != question {
		t.Errorf("title = %q, want the question", th.Title)
	}
	if got := statusCalls(h.fake, dm, thread); len(got) < 2 || got[0] != "is researching…|planning…" || got[len(got)-1] != "|" {
		t.Errorf("statuses = %q, want planning, then cleared", got)
	}
	// The status is cleared before the checkpoint is posted.
	set := callIndex(h.fake, -1, "assistant.threads.setStatus", func(c slackfake.Call) bool { return c.Params["status"] != "" })
	cleared := callIndex(h.fake, set, "assistant.threads.setStatus", func(c slackfake.Call) bool { return c.Params["status"] == "" })
	posted := callIndex(h.fake, -1, "chat.postMessage", func(c slackfake.Call) bool { return strings.Contains(c.Params["blocks"], blockkit.ActionApprove) })
	if set < 0 || cleared < 0 || posted < 0 || cleared > posted {
		t.Errorf("status set at call %d, cleared at %d, plan posted at %d", set, cleared, posted)
	}
	if th, _ := h.fake.AssistantThreadAt(dm, thread); th.Status != "" {
		t.Errorf("status %q while the plan waits", th.Status)
	}

	h.click(requester, plan, blockkit.ActionApprove)
	var draft slackfake.Message
	h.waitFor("the draft in the assistant thread", func() bool {
		var ok bool
		draft, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Draft review")
		return ok
	})
	// While the run works (as the engine reports it), the stage shows.
	h.engine.mu.Lock()
	working := h.engine.clone(h.engine.runs["run-1"])
	h.engine.mu.Unlock()
	working.Status, working.Step = pipeline.StatusRunning, pipeline.StepFetch
	working.Sources = make([]pipeline.Source, 14)
	for i := range 12 {
		working.Sources[i].Selected = true
	}
	h.pres.Progress(h.ctx, working)
	h.waitFor("the reading status", func() bool {
		th, _ := h.fake.AssistantThreadAt(dm, thread)
		return th.Status == "is researching…" && slices.Equal(th.LoadingMessages, []string{"reading 12 pages…"})
	})

	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report in the assistant thread", func() bool {
		_, ok := inThread(h.fake, dm, thread, "RAG and stale sources", "attached")
		return ok && len(h.fake.Files()) == 1 && h.fake.Files()[0].Completed
	})
	if f := h.fake.Files()[0]; f.Channel != dm || f.ThreadTS != thread {
		t.Errorf("report file in %s/%s, want the assistant thread", f.Channel, f.ThreadTS)
	}
	if th, _ := h.fake.AssistantThreadAt(dm, thread); th.Status != "" {
		t.Errorf("status %q after the report", th.Status)
	}
	if got := statusCalls(h.fake, dm, thread); got[len(got)-1] != "|" {
		t.Errorf("statuses = %q, want cleared at the end", got)
	}
	for _, m := range h.fake.Messages(dm) {
		if m.Ephemeral {
			t.Errorf("an ephemeral message was shown: %s", raw(m))
		}
	}
	if n := len(h.fake.Calls("assistant.threads.setTitle")); n != 1 {
		t.Errorf("%d setTitle calls, want 1", n)
	}
}

// TestE2EAssistantPanelWithoutTheFeature: in a workspace whose assistant
// calls fail with a feature error, the person gets today's experience —
// greeting, plan, decisions, report — with no error shown, and the bot
// stops making the calls after the first refusal.
func TestE2EAssistantPanelWithoutTheFeature(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.DisableAssistant("feature_not_enabled")
	dm := slackfake.DMChannelID(requester)
	thread, err := h.fake.StartAssistantThread(h.ctx, requester, chanIn)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the greeting, and the refusal remembered", func() bool {
		_, ok := inThread(h.fake, dm, thread, "I research questions")
		_, off, _ := h.cfg.Memory.AssistantOff(h.ctx, slackfake.TeamID)
		return ok && off
	})
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, "How do RAG systems handle stale sources?"); err != nil {
		t.Fatal(err)
	}
	var plan slackfake.Message
	h.waitFor("the plan", func() bool {
		var ok bool
		plan, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Research plan")
		return ok
	})
	h.click(requester, plan, blockkit.ActionApprove)
	var draft slackfake.Message
	h.waitFor("the draft", func() bool {
		var ok bool
		draft, ok = inThread(h.fake, dm, thread, blockkit.ActionApprove, "Draft review")
		return ok
	})
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report", func() bool { _, ok := inThread(h.fake, dm, thread, "RAG and stale sources", "attached"); return ok })

	var assistantCalls int
	for _, c := range h.fake.Calls("") {
		if strings.HasPrefix(c.Method, "assistant.threads.") {
			assistantCalls++
		}
	}
	if assistantCalls != 1 {
		t.Errorf("%d assistant.threads calls, want 1 (the refusal is remembered)", assistantCalls)
	}
	for _, m := range h.fake.Messages(dm) {
		if m.Ephemeral || strings.Contains(raw(m), "went wrong") {
			t.Errorf("an error was shown: %s", raw(m))
		}
	}
	// Another thread in the same workspace makes no call either.
	if _, err := h.fake.StartAssistantThread(h.ctx, requester, ""); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the second greeting", func() bool {
		n := 0
		for _, m := range h.fake.Messages(dm) {
			if strings.Contains(raw(m), "I research questions") {
				n++
			}
		}
		return n == 2
	})
	if n := len(h.fake.Calls("assistant.threads.setSuggestedPrompts")); n != 1 {
		t.Errorf("%d setSuggestedPrompts calls, want 1", n)
	}
}
