package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// TestRealEngineStreamedPlanInAssistantThread drives the real engine from
// the assistant panel: every checkpoint is approved by its button, each
// stage sequence between them is one streamed plan stopped before the
// checkpoint is posted, and the last plan ends with every task complete and
// the pages the run read as URL sources of the reading task.
func TestRealEngineStreamedPlanInAssistantThread(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	fake, _, ctx, _ := startRealStack(t, &researchtest.Researcher{}, nil)
	const user = "U0REQ0001"
	dm := slackfake.DMChannelID(user)
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	thread, err := fake.StartAssistantThread(wctx, user, "")
	if err != nil {
		t.Fatal(err)
	}
	if !bot.WaitUntil(fake, 10*time.Second, func() bool { return len(fake.Thread(dm, thread)) > 1 }) {
		t.Fatal("no greeting")
	}
	if err := fake.PostUserMessage(wctx, user, dm, thread, "How well do heat pumps work in cold climates?"); err != nil {
		t.Fatal(err)
	}
	reported := func() bool {
		for _, m := range fake.Thread(dm, thread) {
			if strings.Contains(displayed(m), "full report is attached") {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for !reported() {
		var m slackfake.Message
		next := func() bool {
			var ok bool
			m, _, ok = pendingCheckpoint(fake, dm)
			return reported() || (ok && !seen[m.TS])
		}
		if !bot.WaitUntil(fake, time.Until(deadline), next) {
			t.Fatalf("no report; decided %d; messages:\n%s", len(seen), dumpAll(fake, dm))
		}
		if reported() {
			break
		}
		seen[m.TS] = true
		// The plan was stopped before this checkpoint was posted.
		var open []string
		for _, st := range fake.Streams() {
			if st.Open {
				open = append(open, st.TS)
			}
		}
		if len(open) > 0 {
			t.Errorf("streams %v open while a checkpoint waits", open)
		}
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := fake.ClickButton(cctx, user, dm, m.TS, blockkit.ActionApprove, "", "")
		ccancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bot.WaitUntil(fake, 10*time.Second, func() bool {
		s := fake.Streams()
		return len(s) > 0 && !s[len(s)-1].Open && strings.Contains(s[len(s)-1].Markdown, "Done")
	}) {
		for _, c := range fake.Calls("") {
			if strings.Contains(c.Method, "Stream") {
				t.Logf("%s %s %s", c.Method, c.Error, c.Params["ts"])
			}
		}
		t.Fatalf("the last stream did not end")
	}
	streams := fake.Streams()
	// At the plan review the searches are planned, not done.
	if search, _ := streams[0].Task("search-1"); search.Status != blockkit.TaskPending {
		t.Errorf("at the plan review the first search is %s", search.Status)
	}
	if len(streams) != len(seen)+1 {
		t.Errorf("%d streams for %d checkpoints, want one per stage sequence", len(streams), len(seen))
	}
	last := streams[len(streams)-1]
	searches := 0
	for _, task := range last.Tasks {
		if task.Status != blockkit.TaskComplete {
			t.Errorf("task %s (%s) ended %s", task.ID, task.Title, task.Status)
		}
		if strings.HasPrefix(task.ID, "search-") {
			searches++
		}
	}
	if searches < 2 {
		t.Errorf("%d search tasks, want one per sub-question: %+v", searches, last.Tasks)
	}
	read, ok := last.Task("read")
	if !ok || len(read.Sources) == 0 {
		t.Fatalf("no sources on the reading task: %+v", read)
	}
	for _, s := range read.Sources {
		if s.Type != "url" || !strings.HasPrefix(s.URL, "http://127.0.0.") || !strings.Contains(s.URL, "/page/") {
			t.Errorf("source %+v is not a page of the fake web", s)
		}
	}
	for _, m := range fake.Thread(dm, thread) {
		if strings.Contains(string(m.Blocks), "*Progress*") {
			t.Errorf("a progress message beside the streamed plan: %s", m.Blocks)
		}
	}
}
