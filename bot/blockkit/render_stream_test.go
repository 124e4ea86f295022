package blockkit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// streamRun is a run at step with a plan of two sub-questions, queries,
// sources and pages.
func streamRun(status pipeline.Status, step pipeline.Step) *pipeline.Run {
	return &pipeline.Run{
		ID: "run-s1", Status: status, Step: step,
		Plan: &pipeline.Plan{SubQuestions: []string{"What is RAG?", "Why do sources go <!channel> stale?"}},
		Queries: []pipeline.Query{
			{ID: "q1", SubQuestion: 1, Status: "completed", Results: 8},
			{ID: "q2", SubQuestion: 2, Status: "pending"},
			{ID: "q3", SubQuestion: 2, Status: "failed"},
		},
		Sources: []pipeline.Source{{ID: 1, Fetched: true}, {ID: 2, Fetched: true}, {ID: 3}},
		Pages: []pipeline.Page{
			{SourceID: 1, URL: "https://blog.example.com/rag-fresh", Title: "Keeping RAG fresh"},
			{SourceID: 2, URL: "https://docs.example.org/a?b=1&c=2", FinalURL: "https://docs.example.org/a?b=1&c=2"},
			{SourceID: 3, URL: "javascript:alert(1)", Title: "not a page"},
			{SourceID: 4, File: "notes.pdf", Title: "a shared file"},
		},
	}
}

// streamView is what golden files hold: the tasks' chunks as Slack gets them.
func streamView(r *pipeline.Run) map[string]any {
	return map[string]any{"chunks": StreamChunks(StreamPlan(r), nil), "summary": StreamSummary(r)}
}

func TestStreamPlanGolden(t *testing.T) {
	waiting := streamRun(pipeline.StatusWaiting, pipeline.StepPlan)
	waiting.Plan, waiting.Queries, waiting.Sources, waiting.Pages = nil, nil, nil, nil
	d := checkpoints.Definition{ID: checkpoints.PlanReview, Label: "Research plan"}
	inst := checkpoints.NewInstance(d, "run-s1.cp1", "run-s1", nil, nil, nil, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	waiting.Checkpoints, waiting.Waiting = []checkpoints.Instance{inst}, inst.ID

	done := streamRun(pipeline.StatusCompleted, pipeline.StepDone)
	done.Queries[1].Status = "completed"
	done.Drafts = []pipeline.Draft{{Version: 2}}
	done.Critiques = []pipeline.Critique{{Score: 8.25}}

	failed := streamRun(pipeline.StatusFailed, pipeline.StepAnalyze)
	failed.Failure = "the model <@U123> refused *everything*"

	for name, r := range map[string]*pipeline.Run{
		"stream_searching": streamRun(pipeline.StatusRunning, pipeline.StepSearch),
		"stream_reading":   streamRun(pipeline.StatusRunning, pipeline.StepFetch),
		"stream_waiting":   waiting,
		"stream_done":      done,
		"stream_failed":    failed,
	} {
		t.Run(name, func(t *testing.T) { golden(t, name, streamView(r)) })
	}
}

func TestStreamPlanStatuses(t *testing.T) {
	status := func(r *pipeline.Run) map[string]string {
		out := map[string]string{}
		for _, task := range StreamPlan(r) {
			out[task.ID] = task.Status
		}
		return out
	}
	searching := status(streamRun(pipeline.StatusRunning, pipeline.StepSearch))
	want := map[string]string{"plan": TaskComplete, "search-1": TaskComplete, "search-2": TaskInProgress, "read": TaskPending, "analyze": TaskPending, "draft": TaskPending, "review": TaskPending}
	for id, s := range want {
		if searching[id] != s {
			t.Errorf("searching: task %s is %q, want %q", id, searching[id], s)
		}
	}
	for id, s := range status(streamRun(pipeline.StatusCompleted, pipeline.StepDone)) {
		if s != TaskComplete {
			t.Errorf("done: task %s is %q", id, s)
		}
	}
	// Waiting at the plan review with the searches planned: not done yet.
	review := streamRun(pipeline.StatusWaiting, pipeline.StepSearch)
	review.Queries = []pipeline.Query{{ID: "q1", SubQuestion: 1, Status: "pending"}, {ID: "q2", SubQuestion: 2}}
	if got := status(review); got["plan"] != TaskComplete || got["search-1"] != TaskPending || got["search-2"] != TaskPending {
		t.Errorf("at the plan review: %v", got)
	}
	failed := status(streamRun(pipeline.StatusFailed, pipeline.StepFetch))
	if failed["read"] != TaskError || failed["analyze"] != TaskPending || failed["plan"] != TaskComplete {
		t.Errorf("failed while reading: %v", failed)
	}
}

func TestStreamPlanSourcesAreThePagesRead(t *testing.T) {
	var read StreamTask
	for _, task := range StreamPlan(streamRun(pipeline.StatusRunning, pipeline.StepAnalyze)) {
		if task.ID == "read" {
			read = task
		}
	}
	if len(read.Sources) != 2 || read.Sources[0].URL != "https://blog.example.com/rag-fresh" || read.Sources[1].URL != "https://docs.example.org/a?b=1&c=2" {
		t.Errorf("sources = %+v, want the two web pages (no javascript:, no file)", read.Sources)
	}
	if read.Sources[1].Text != "docs.example.org" {
		t.Errorf("an untitled page is named %q, want its domain", read.Sources[1].Text)
	}
}

func TestStreamPlanLimits(t *testing.T) {
	r := streamRun(pipeline.StatusRunning, pipeline.StepFetch)
	r.Plan.SubQuestions = nil
	for i := range 40 {
		r.Plan.SubQuestions = append(r.Plan.SubQuestions, strings.Repeat("long sub-question ", 30)+fmt.Sprint(i))
	}
	r.Pages = nil
	for i := range 60 {
		r.Pages = append(r.Pages, pipeline.Page{URL: fmt.Sprintf("https://example.com/%d", i), Title: strings.Repeat("t", 400)})
	}
	r.Failure = strings.Repeat("x", 20000)
	tasks := StreamPlan(r)
	if len(tasks) != MaxStreamTasks {
		t.Errorf("%d tasks, want the bound %d", len(tasks), MaxStreamTasks)
	}
	last := tasks[MaxStreamTasks-5]
	if !strings.Contains(last.Title, "26 more sub-questions") {
		t.Errorf("the folded search task is %q", last.Title)
	}
	for _, task := range tasks {
		for name, s := range map[string]string{"title": task.Title, "details": task.Details, "output": task.Output} {
			if n := utf8.RuneCountInString(s); n > 256 {
				t.Errorf("task %s: %s of %d runes", task.ID, name, n)
			}
		}
		if task.ID == "read" {
			if len(task.Sources) != MaxStreamSources || task.Details != "60 pages read" {
				t.Errorf("reading task: %d sources, details %q", len(task.Sources), task.Details)
			}
			for _, s := range task.Sources {
				if utf8.RuneCountInString(s.Text) > MaxStreamTaskTitle {
					t.Errorf("a source's text has %d runes", utf8.RuneCountInString(s.Text))
				}
			}
		}
	}
	// At most MaxStreamChunks per call; what is left goes in the next.
	many := make([]StreamTask, MaxStreamChunks+5)
	for i := range many {
		many[i] = StreamTask{ID: fmt.Sprint(i), Title: "t", Status: TaskPending}
	}
	first := StreamChunks(many, nil)
	if len(first) != MaxStreamChunks {
		t.Fatalf("%d chunks, want %d", len(first), MaxStreamChunks)
	}
	sent := map[string]string{}
	for _, task := range many[:MaxStreamChunks] {
		sent[task.ID] = task.Key()
	}
	if rest := StreamChunks(many, sent); len(rest) != 5 {
		t.Errorf("then %d chunks, want the 5 left", len(rest))
	}
	if again := StreamChunks(many[:3], sent); len(again) != 0 {
		t.Errorf("unchanged tasks sent again: %d chunks", len(again))
	}
	r.Status = pipeline.StatusFailed
	if n := utf8.RuneCountInString(StreamSummary(r)); n > MaxStreamMarkdown {
		t.Errorf("summary of %d runes", n)
	}
}

func TestStreamPlanUntrustedText(t *testing.T) {
	r := streamRun(pipeline.StatusFailed, pipeline.StepSearch)
	r.Failure = "<!channel> see <https://evil.example|here> @everyone"
	b, err := json.Marshal(StreamChunks(StreamPlan(r), nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"<!channel>", "\\u003c!channel", "<https://evil"} {
		if strings.Contains(string(b), bad) || strings.Contains(StreamSummary(r), bad) {
			t.Errorf("%q reached the stream: %s / %s", bad, b, StreamSummary(r))
		}
	}
	var chunks []slack.TaskUpdateChunk
	if err := json.Unmarshal(b, &chunks); err != nil {
		t.Fatal(err)
	}
	if chunks[2].Title != "Searching: Why do sources go ‹!channel› stale?" {
		t.Errorf("title = %q", chunks[2].Title)
	}
}

func TestStreamNoteOnTheTaskInProgress(t *testing.T) {
	tasks := StreamPlan(streamRun(pipeline.StatusRunning, pipeline.StepFetch))
	noted := WithStreamNote(tasks, "the model is not answering <!here> (retry 2 of 4 in 8s)")
	for i, task := range noted {
		switch {
		case task.ID == "read" && task.Details != "4 pages read · ⏳ the model is not answering ‹!here› (retry 2 of 4 in 8s)":
			t.Errorf("the task in progress shows %q", task.Details)
		case task.ID != "read" && strings.Contains(task.Details, "⏳"):
			t.Errorf("task %s shows the note", task.ID)
		case strings.Contains(tasks[i].Details, "⏳"):
			t.Errorf("the plan itself was changed: %+v", tasks[i])
		}
	}
	if got := WithStreamNote(tasks, " "); len(StreamChunks(got, sentAll(tasks))) != 0 {
		t.Error("an empty note changed a task")
	}
	if got := StreamChunks(noted, sentAll(tasks)); len(got) != 1 {
		t.Errorf("the note sent %d chunks, want the one task", len(got))
	}
}

// sentAll is what Slack shows once tasks were all sent.
func sentAll(tasks []StreamTask) map[string]string {
	m := map[string]string{}
	for _, task := range tasks {
		m[task.ID] = task.Key()
	}
	return m
}
