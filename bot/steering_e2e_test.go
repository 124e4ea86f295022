package bot_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2ESteeringARunWhileItSearches holds an auto-mode run with the real
// engine in its search step and talks to its thread: another person is told
// they may not steer it; the requester's note is acknowledged in the thread
// at once and shown in the progress message; an over-long note and a note
// over the per-run rate are refused politely; "stop" asks to confirm the
// cancel. Once the search goes on, the next model calls carry the note (the
// plan, made before, does not), and the report says how it was steered.
func TestE2ESteeringARunWhileItSearches(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	searching, release := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	web.BeforeSearch = func() {
		once.Do(func() {
			close(searching)
			<-release
		})
	}
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	var mu sync.Mutex
	prompts := map[string][]string{}
	res := &researchtest.Researcher{Seen: func(c llmtest.Call) {
		mu.Lock()
		defer mu.Unlock()
		prompts[c.SchemaName] = append(prompts[c.SchemaName], c.User)
	}}
	fake, a, ctx, _ := startRealStackOn(t, res, web, func(c *bot.Config, a *app.App) {
		plugConversation(t, c, a.Engine, bot.Limit{Rate: 2, Period: time.Hour}, bot.Limit{})
	})
	const user, other, channel = "U0REQ0001", "U0OTHER01", "C0RESEARCH"
	fake.AddUser(other, "grace", "UTC")
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "--mode auto How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-searching:
	case <-wctx.Done():
		t.Fatalf("the run never searched:\n%s", dumpAll(fake, channel))
	}
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	runID, thread := runs[0].ID, runs[0].Origin.ThreadTS
	waitFor := func(what string, match func(m slackfake.Message) bool) slackfake.Message {
		t.Helper()
		return waitMessage(wctx, t, fake, channel, what, match)
	}
	mention := func(who, text string) {
		t.Helper()
		if err := fake.PostUserMention(wctx, who, channel, thread, text); err != nil {
			t.Fatal(err)
		}
	}

	// Another person: told politely, nothing recorded.
	mention(other, "only look at Norway")
	waitFor("the refusal to another person", func(m slackfake.Message) bool {
		return m.Ephemeral && m.ToUser == other && strings.Contains(displayed(m), "can steer it while it runs")
	})

	// The requester: acknowledged at once in the thread, shown in the progress.
	const note = "focus on Europe"
	mention(user, note)
	ack := waitFor("the acknowledgement", func(m slackfake.Message) bool {
		return !m.Ephemeral && m.ThreadTS == thread && strings.Contains(displayed(m), "Noted: "+note+" — applies from the next step.")
	})
	if !strings.Contains(displayed(ack), "Steering note 1 of at most 10") {
		t.Errorf("the acknowledgement does not count the note:\n%s", displayed(ack))
	}

	// Bounds: too long, then over the per-run rate (2 per hour).
	mention(user, strings.Repeat("x", pipeline.MaxSteeringNoteRunes+1))
	waitFor("the refusal of a long note", func(m slackfake.Message) bool {
		return m.Ephemeral && m.ToUser == user && strings.Contains(displayed(m), "a steering note takes at most 500")
	})
	mention(user, "skip vendor blogs")
	waitFor("the second acknowledgement", func(m slackfake.Message) bool {
		return !m.Ephemeral && strings.Contains(displayed(m), "Noted: skip vendor blogs")
	})
	mention(user, "and prefer field trials")
	waitFor("the refusal over the rate", func(m slackfake.Message) bool {
		return m.Ephemeral && m.ToUser == user && strings.Contains(displayed(m), "at most 2 steering notes per hour")
	})

	// "stop" is the cancel flow with its confirmation, not a note.
	mention(user, "Stop!")
	waitFor("the cancel confirmation", func(m slackfake.Message) bool {
		return m.Ephemeral && m.ToUser == user && strings.Contains(string(m.Blocks), `"`+blockkit.ActionCancelConfirm+`"`)
	})
	r, err := a.Engine.Load(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != 2 || r.Notes[0].Text != note || r.Notes[0].Step != pipeline.StepSearch {
		t.Fatalf("stored notes %+v, want the two accepted notes, the first during search", r.Notes)
	}

	letGo()
	waitFor("the report", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), `"`+blockkit.BlockReportFeedback+`"`)
	})
	r, err = a.Engine.Load(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted || r.CancelledBy != "" {
		t.Fatalf("run %s (cancelled by %q), want completed: stop only asked to confirm", r.Status, r.CancelledBy)
	}
	mu.Lock()
	plan, ranked, analysed := prompts["research_plan"], prompts["source_relevance"], prompts["analysis"]
	mu.Unlock()
	if len(plan) == 0 || strings.Contains(plan[0], "requester_note") {
		t.Errorf("the plan, made before the note, carries a note (or was never asked)")
	}
	for name, ps := range map[string][]string{"ranking": ranked, "analysis": analysed} {
		if len(ps) == 0 || !strings.Contains(ps[0], ">\n"+note+"\n</requester_note>") {
			t.Errorf("the first %s prompt after the note does not carry it: %q", name, ps)
		}
	}
	if !strings.Contains(r.Report.Markdown, "Steering notes given while it ran") || !strings.Contains(r.Report.Markdown, note+" (by "+user+" during search") {
		t.Errorf("the report does not say how it was steered:\n%s", r.Report.Markdown)
	}
	progressShown := false
	for _, m := range fake.Messages(channel) {
		if strings.Contains(displayed(m), "Steering notes *2*") {
			progressShown = true
		}
	}
	if !progressShown {
		t.Errorf("the progress message does not show the notes:\n%s", dumpAll(fake, channel))
	}
}

// TestE2ESteeringFromTheAssistantPanel: a research asked in the assistant
// panel is steered by a reply in that thread (a direct message, no
// mention) while it searches; the note is acknowledged there and stored.
func TestE2ESteeringFromTheAssistantPanel(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	web := researchtest.NewWeb(t, researchtest.DefaultPages()...)
	searching, release := make(chan struct{}), make(chan struct{})
	var once, releaseOnce sync.Once
	web.BeforeSearch = func() {
		once.Do(func() {
			close(searching)
			<-release
		})
	}
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	fake, a, ctx, _ := startRealStackOn(t, &researchtest.Researcher{}, web, nil)
	const user = "U0REQ0001"
	dm := slackfake.DMChannelID(user)
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	thread, err := fake.StartAssistantThread(wctx, user, "C0RESEARCH")
	if err != nil {
		t.Fatal(err)
	}
	waitMessage(wctx, t, fake, dm, "the greeting", func(m slackfake.Message) bool { return m.ThreadTS == thread && m.BotID != "" })
	if err := fake.PostUserMessage(wctx, user, dm, thread, "--mode auto How well do heat pumps work in cold climates?"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-searching:
	case <-wctx.Done():
		t.Fatalf("the run never searched:\n%s", dumpAll(fake, dm))
	}
	if err := fake.PostUserMessage(wctx, user, dm, thread, "only sources from Europe"); err != nil {
		t.Fatal(err)
	}
	waitMessage(wctx, t, fake, dm, "the acknowledgement", func(m slackfake.Message) bool {
		return m.ThreadTS == thread && strings.Contains(displayed(m), "Noted: only sources from Europe — applies from the next step.")
	})
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: 1})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if n := runs[0].Notes; len(n) != 1 || n[0].Text != "only sources from Europe" {
		t.Errorf("stored notes %+v", n)
	}
	letGo()
	waitMessage(wctx, t, fake, dm, "the report", func(m slackfake.Message) bool {
		return strings.Contains(string(m.Blocks), `"`+blockkit.BlockReportFeedback+`"`)
	})
}
