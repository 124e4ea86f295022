package bot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// streamsIn are the streamed messages of a thread, oldest first.
func streamsIn(fake *slackfake.Server, channel, thread string) []slackfake.Stream {
	var out []slackfake.Stream
	for _, st := range fake.Streams() {
		if st.Channel == channel && st.ThreadTS == thread {
			out = append(out, st)
		}
	}
	return out
}

// taskStatuses are "id=status" of a stream's tasks, in order.
func taskStatuses(st slackfake.Stream) string {
	var b []string
	for _, t := range st.Tasks {
		b = append(b, t.ID+"="+t.Status)
	}
	return strings.Join(b, " ")
}

// progressMessages are the edited progress messages of a thread.
func progressMessages(fake *slackfake.Server, channel, thread string) int {
	n := 0
	for _, m := range fake.Thread(channel, thread) {
		if strings.Contains(raw(m), "*Progress*") {
			n++
		}
	}
	return n
}

// progressStreams reads researchbot_progress_streams_total{outcome} from
// m's registry, as /metrics shows it (0 when absent).
func progressStreams(t *testing.T, m *Metrics, outcome string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "researchbot_progress_streams_total" {
			continue
		}
		for _, metric := range mf.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "outcome" && l.GetValue() == outcome {
					return metric.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

// wantProgressStreams checks every outcome of researchbot_progress_streams_total.
func wantProgressStreams(t *testing.T, m *Metrics, started, feature, refused, replaced float64) {
	t.Helper()
	for outcome, want := range map[string]float64{"started": started, "fallback_feature": feature, "fallback_refused": refused, "replaced": replaced} {
		if got := progressStreams(t, m, outcome); got != want {
			t.Errorf("researchbot_progress_streams_total{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
}

// askInPanel opens the assistant panel for the requester and asks question
// there; it returns the DM and the thread, once the plan waits.
func askInPanel(h *harness, question string) (string, string) {
	h.t.Helper()
	dm := slackfake.DMChannelID(requester)
	thread, err := h.fake.StartAssistantThread(h.ctx, requester, chanIn)
	if err != nil {
		h.t.Fatal(err)
	}
	h.waitFor("the greeting", func() bool { _, ok := inThread(h.fake, dm, thread, "I research questions"); return ok })
	if err := h.fake.PostUserMessage(h.ctx, requester, dm, thread, question); err != nil {
		h.t.Fatal(err)
	}
	h.waitFor("the plan", func() bool { _, ok := inThread(h.fake, dm, thread, blockkit.ActionApprove, "Research plan"); return ok })
	return dm, thread
}

// TestE2EStreamedPlanInAssistantThread: a run asked in the assistant panel
// shows its progress as streamed plans — one stopped before each
// checkpoint is posted, a new one after each decision — and never the
// edited progress message; the last stream ends with every task complete,
// the pages read as URL sources on the reading task, and a summary.
func TestE2EStreamedPlanInAssistantThread(t *testing.T) {
	h := newHarness(t, nil)
	h.engine.mu.Lock()
	h.engine.finishing = func(r *pipeline.Run) {
		r.Plan = &pipeline.Plan{SubQuestions: []string{"What is RAG?", "Why do sources go stale?"}}
		r.Queries = []pipeline.Query{{ID: "q1", SubQuestion: 1, Status: "completed", Results: 5}, {ID: "q2", SubQuestion: 2, Status: "completed", Results: 3}}
		r.Sources = []pipeline.Source{{ID: 1, URL: "https://blog.example.com/rag-fresh", Fetched: true}, {ID: 2, URL: "https://docs.example.org/stale", Fetched: true}}
		r.Pages = []pipeline.Page{{SourceID: 1, URL: "https://blog.example.com/rag-fresh", Title: "Keeping RAG fresh"}, {SourceID: 2, URL: "https://docs.example.org/stale", Title: "Stale sources"}}
	}
	h.engine.mu.Unlock()
	dm, thread := askInPanel(h, "How do RAG systems handle stale sources?")

	// The first stream shows the plan made, and was stopped before the
	// checkpoint was posted.
	h.waitFor("the first stream stopped", func() bool { s := streamsIn(h.fake, dm, thread); return len(s) == 1 && !s[0].Open })
	first := streamsIn(h.fake, dm, thread)[0]
	if first.TaskMode != "plan" || first.RecipientUserID != requester || first.RecipientTeamID != slackfake.TeamID {
		t.Errorf("stream started as %+v", first)
	}
	if p, _ := first.Task("plan"); p.Status != blockkit.TaskComplete {
		t.Errorf("plan task %q at the plan review", p.Status)
	}
	if !strings.Contains(first.Markdown, "Waiting for your decision") {
		t.Errorf("first stream ends with %q", first.Markdown)
	}
	stopped := callIndex(h.fake, -1, "chat.stopStream", func(c slackfake.Call) bool { return c.Error == "" })
	posted := callIndex(h.fake, -1, "chat.postMessage", func(c slackfake.Call) bool { return strings.Contains(c.Params["blocks"], blockkit.ActionApprove) })
	if stopped < 0 || posted < 0 || stopped > posted {
		t.Errorf("stream stopped at call %d, checkpoint posted at %d", stopped, posted)
	}

	plan, _ := inThread(h.fake, dm, thread, blockkit.ActionApprove, "Research plan")
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the draft", func() bool { _, ok := inThread(h.fake, dm, thread, blockkit.ActionApprove, "Draft review"); return ok })
	h.waitFor("a second stream, stopped", func() bool { s := streamsIn(h.fake, dm, thread); return len(s) == 2 && !s[1].Open })
	second := streamsIn(h.fake, dm, thread)[1]
	if d, _ := second.Task("draft"); d.Status != blockkit.TaskComplete {
		t.Errorf("second stream at the draft review: %s", taskStatuses(second))
	}

	draft, _ := inThread(h.fake, dm, thread, blockkit.ActionApprove, "Draft review")
	h.click(requester, draft, blockkit.ActionApprove)
	h.waitFor("the report", func() bool {
		_, ok := inThread(h.fake, dm, thread, "RAG and stale sources", "attached")
		return ok && len(h.fake.Files()) == 1
	})
	h.waitFor("a third stream, stopped", func() bool { s := streamsIn(h.fake, dm, thread); return len(s) == 3 && !s[2].Open })
	last := streamsIn(h.fake, dm, thread)[2]
	want := "plan=complete search-1=complete search-2=complete read=complete analyze=complete draft=complete review=complete"
	if got := taskStatuses(last); got != want {
		t.Errorf("last stream's tasks: %s\nwant %s", got, want)
	}
	read, _ := last.Task("read")
	if len(read.Sources) != 2 || read.Sources[0].URL != "https://blog.example.com/rag-fresh" || read.Sources[0].Text != "Keeping RAG fresh" || read.Sources[1].Type != "url" {
		t.Errorf("reading task's sources = %+v", read.Sources)
	}
	if !strings.Contains(last.Markdown, "**Done.**") || !strings.Contains(last.Markdown, "2 pages read") {
		t.Errorf("summary = %q", last.Markdown)
	}
	for _, st := range h.fake.Streams() {
		if st.Open {
			t.Errorf("stream %s left open", st.TS)
		}
	}
	if n := progressMessages(h.fake, dm, thread); n != 0 {
		t.Errorf("%d progress messages beside the streamed plan", n)
	}
	wantProgressStreams(t, h.cfg.Metrics, 3, 0, 0, 0)
	for _, c := range h.fake.Calls("") {
		if strings.HasSuffix(c.Method, "Stream") && c.Error != "" {
			t.Errorf("%s failed: %s", c.Method, c.Error)
		}
	}
}

// TestE2EStreamedPlanFallback: in a workspace without streaming, the first
// startStream's feature error is remembered: the run shows the edited
// progress message, and the next run does not try to stream again.
func TestE2EStreamedPlanFallback(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.DisableStreaming("team_not_allowed")
	dm, thread := askInPanel(h, "How do RAG systems handle stale sources?")
	h.waitFor("the progress message", func() bool { return progressMessages(h.fake, dm, thread) == 1 })
	if n := len(h.fake.Calls("chat.startStream")); n != 1 {
		t.Fatalf("%d startStream calls, want the one refused", n)
	}
	if _, off, _ := h.cfg.Memory.PlanStreamOff(h.ctx, slackfake.TeamID); !off {
		t.Error("the workspace without streaming is not remembered")
	}
	dm2, thread2 := askInPanel(h, "Is solar cheaper than wind in 2026?")
	h.waitFor("the second run's progress message", func() bool { return progressMessages(h.fake, dm2, thread2) == 1 })
	plan, _ := inThread(h.fake, dm2, thread2, blockkit.ActionApprove, "Research plan")
	h.click(requester, plan, blockkit.ActionApprove)
	h.waitFor("the second run's draft", func() bool {
		_, ok := inThread(h.fake, dm2, thread2, blockkit.ActionApprove, "Draft review")
		return ok
	})
	if n := len(h.fake.Calls("chat.startStream")); n != 1 {
		t.Errorf("%d startStream calls, want no new one after the feature error", n)
	}
	if n := len(h.fake.Streams()); n != 0 {
		t.Errorf("%d streams in a workspace without the feature", n)
	}
	h.waitFor("the progress message at the new stage", func() bool {
		_, ok := inThread(h.fake, dm2, thread2, "*Progress*", "Writing")
		return ok
	})
	if n := progressMessages(h.fake, dm2, thread2); n != 1 {
		t.Errorf("%d progress messages, want the one edited", n)
	}
	wantProgressStreams(t, h.cfg.Metrics, 0, 1, 0, 0) // one feature error, not one per run
}

// crashRun is a run working in the assistant thread at step.
func crashRun(dm, thread string, step pipeline.Step) *pipeline.Run {
	r := &pipeline.Run{ID: "run-crash", Question: "q", RequestedBy: requester, Status: pipeline.StatusRunning, Step: step, CreatedAt: time.Now(),
		Origin: pipeline.Origin{Kind: OriginKind, TeamID: slackfake.TeamID, Channel: dm, ThreadTS: thread}}
	r.Queries = []pipeline.Query{{ID: "q1", SubQuestion: 1, Status: "completed", Results: 4}}
	if step == pipeline.StepAnalyze || step == pipeline.StepDone {
		r.Pages = []pipeline.Page{{SourceID: 1, URL: "https://blog.example.com/rag-fresh", Title: "Keeping RAG fresh"}}
	}
	return r
}

// TestE2EStreamedPlanResumesAfterACrash: a process dies with a stream open;
// a new Presenter over the same Redis memory appends to that stream and
// stops it when the run ends, and when Slack no longer takes appends on it
// the new one replaces it, so no stream is left spinning.
func TestE2EStreamedPlanResumesAfterACrash(t *testing.T) {
	for _, expired := range []bool{false, true} {
		name := "appends"
		if expired {
			name = "replaces"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, nil)
			dm := slackfake.DMChannelID(requester)
			thread, err := h.fake.StartAssistantThread(h.ctx, requester, "")
			if err != nil {
				t.Fatal(err)
			}
			h.waitFor("the greeting", func() bool { _, ok := inThread(h.fake, dm, thread, "I research questions"); return ok })
			first, err := NewPresenter(PresenterConfig{BotToken: h.fake.BotToken(), APIURL: h.fake.APIURL(), Memory: redisstore.NewSlackMemory(h.rdb), MinInterval: time.Millisecond, Metrics: h.cfg.Metrics})
			if err != nil {
				t.Fatal(err)
			}
			first.Progress(h.ctx, crashRun(dm, thread, pipeline.StepSearch))
			h.waitFor("the stream", func() bool { return len(streamsIn(h.fake, dm, thread)) == 1 })
			first.Close() // the process dies: nothing stops the stream
			ts := streamsIn(h.fake, dm, thread)[0].TS
			if expired {
				h.fake.ExpireStream(dm, ts)
			}

			second, err := NewPresenter(PresenterConfig{BotToken: h.fake.BotToken(), APIURL: h.fake.APIURL(), Memory: redisstore.NewSlackMemory(h.rdb), MinInterval: time.Millisecond, Metrics: h.cfg.Metrics})
			if err != nil {
				t.Fatal(err)
			}
			defer second.Close()
			second.Progress(h.ctx, crashRun(dm, thread, pipeline.StepAnalyze))
			done := crashRun(dm, thread, pipeline.StepDone)
			done.Status, done.FinishedAt = pipeline.StatusCompleted, time.Now()
			done.Report = &pipeline.Report{Status: "complete", Title: "RAG", Abstract: "Summary.", Markdown: "# RAG\n", Metadata: pipeline.Metadata{RunID: done.ID}}
			if err := second.Finished(context.Background(), done); err != nil {
				t.Fatal(err)
			}
			streams := streamsIn(h.fake, dm, thread)
			want := 1
			if expired {
				want = 2
			}
			if len(streams) != want {
				t.Fatalf("%d streams, want %d", len(streams), want)
			}
			if streams[0].TS != ts {
				t.Errorf("the first stream is %s, want %s", streams[0].TS, ts)
			}
			for _, st := range streams {
				if st.Open {
					t.Errorf("stream %s left open", st.TS)
				}
			}
			last := streams[len(streams)-1]
			if got := taskStatuses(last); strings.Contains(got, "pending") || strings.Contains(got, "in_progress") || !strings.Contains(last.Markdown, "**Done.**") {
				t.Errorf("final stream: %s / %q", got, last.Markdown)
			}
			if r, _ := last.Task("read"); len(r.Sources) != 1 {
				t.Errorf("reading task sources %+v", r.Sources)
			}
			if !expired && streams[0].Appends == 0 {
				t.Error("the restarted presenter did not append to the open stream")
			}
			if n := len(h.fake.Calls("chat.startStream")); n != want {
				t.Errorf("%d startStream calls, want %d", n, want)
			}
			wantProgressStreams(t, h.cfg.Metrics, 1, 0, 0, float64(want-1)) // the first stream, and its replacement

		})
	}
}

// TestE2EStreamedPlanInChannelThread: with StreamInChannels, a /research
// run's plan is streamed in its channel thread to the requester; without
// it (the default) the channel thread shows the progress message.
func TestE2EStreamedPlanInChannelThread(t *testing.T) {
	h := newHarness(t, nil)
	pres, err := NewPresenter(PresenterConfig{BotToken: h.fake.BotToken(), APIURL: h.fake.APIURL(), Memory: redisstore.NewSlackMemory(h.rdb), MinInterval: time.Millisecond, StreamInChannels: true})
	if err != nil {
		t.Fatal(err)
	}
	defer pres.Close()
	_, root, err := h.app.send.API().PostMessageContext(h.ctx, chanIn, quiet(nil, "root"))
	if err != nil {
		t.Fatal(err)
	}
	r := crashRun(chanIn, root, pipeline.StepSearch)
	pres.Progress(h.ctx, r)
	h.waitFor("the channel stream", func() bool { return len(streamsIn(h.fake, chanIn, root)) == 1 })
	if st := streamsIn(h.fake, chanIn, root)[0]; st.RecipientUserID != requester || st.RecipientTeamID != slackfake.TeamID {
		t.Errorf("recipient = %s/%s", st.RecipientUserID, st.RecipientTeamID)
	}
	other := crashRun(chanIn, root, pipeline.StepSearch)
	other.ID = "run-default"
	h.pres.Progress(h.ctx, other) // the default presenter
	h.waitFor("the progress message", func() bool { return progressMessages(h.fake, chanIn, root) == 1 })
	if n := len(h.fake.Streams()); n != 1 {
		t.Errorf("%d streams, want only the configured presenter's", n)
	}
}
