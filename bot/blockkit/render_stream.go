package blockkit

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// A run's streamed plan: Slack's chat streaming (chat.startStream with
// task_display_mode "plan", chat.appendStream, chat.stopStream) shows a
// plan block whose task cards turn from pending to in progress to complete
// (or error). StreamPlan says what the plan of a run is — one task per
// pipeline stage, and one search task per sub-question — and StreamChunks
// the chunks that bring what Slack shows to it. It means what the edited
// progress message (RenderProgress) means, which stays the fallback.

// Limits of a streamed plan. Slack documents 12,000 characters of
// markdown_text; a task_update chunk's details and output are documented
// (in Slack's SDK types) at 256 characters, and its title is plain text that
// Slack cuts near 256. Slack documents no count of tasks, sources or chunks:
// these bounds are ours, so that a plan stays readable and one call stays
// small.
const (
	MaxStreamMarkdown    = 12000
	MaxStreamTaskTitle   = 256
	MaxStreamTaskDetails = 256
	MaxStreamTaskOutput  = 256
	// MaxStreamTasks bounds the tasks of a plan (search tasks beyond it are
	// folded into the last one).
	MaxStreamTasks = 20
	// MaxStreamSources bounds the URL sources listed on the reading task; the
	// count of every page read is in its details.
	MaxStreamSources = 20
	// MaxStreamChunks bounds the chunks of one streaming call; more changes
	// wait for the next call.
	MaxStreamChunks = 30
	// StreamPlanTitle is the plan's title while the run works.
	StreamPlanTitle = "Researching"
)

// Task statuses of a streamed plan (Slack's values).
const (
	TaskPending    = string(slack.TaskCardStatusPending)
	TaskInProgress = string(slack.TaskCardStatusInProgress)
	TaskComplete   = string(slack.TaskCardStatusComplete)
	TaskError      = string(slack.TaskCardStatusError)
)

// StreamSource is a page a task read.
type StreamSource struct {
	URL, Text string
}

// StreamTask is one task card of a run's streamed plan.
type StreamTask struct {
	ID, Title, Status, Details, Output string
	Sources                            []StreamSource
}

// key is what a task shows; an unchanged key is not sent again.
func (t StreamTask) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\x00%s\x00%s\x00%s\x00%s", t.ID, t.Title, t.Status, t.Details, t.Output)
	for _, s := range t.Sources {
		b.WriteString("\x00" + s.URL + "\x01" + s.Text)
	}
	return b.String()
}

// Key is a short fingerprint of what t shows, for remembering what was sent.
func (t StreamTask) Key() string { return fingerprint(t.key()) }

// fingerprint is a compact FNV-1a hash of s, in hex.
func fingerprint(s string) string {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return fmt.Sprintf("%016x", h)
}

// stage positions of the pipeline's steps, in the order a run goes through
// them (a gap round goes back to searching).
func stagePos(s pipeline.Step) int {
	switch s {
	case pipeline.StepPlan, "":
		return 0
	case pipeline.StepSearch, pipeline.StepRank:
		return 1
	case pipeline.StepFetch:
		return 2
	case pipeline.StepAnalyze:
		return 3
	case pipeline.StepWrite, pipeline.StepFallback:
		return 4
	case pipeline.StepReview:
		return 5
	}
	return 6 // output, done
}

// StreamPlan is the plan of r as its task cards, in order.
func StreamPlan(r *pipeline.Run) []StreamTask {
	pos := stagePos(r.Step)
	running := r.Status == pipeline.StatusRunning || r.Status == pipeline.StatusQueued || r.Status == ""
	success := r.Status == pipeline.StatusCompleted || r.Status == pipeline.StatusPartial
	failed := r.Status == pipeline.StatusFailed || r.Status == pipeline.StatusCancelled
	waitingOn := ""
	if cur := r.Current(); cur != nil && r.Status == pipeline.StatusWaiting {
		waitingOn = cur.DefinitionID
	}
	// status of stage p, with done saying whether its work is there.
	status := func(p int, done bool) string {
		switch {
		case success, p < pos:
			return TaskComplete
		case p > pos:
			return TaskPending
		case failed:
			return TaskError
		case running:
			return TaskInProgress
		case done: // waiting at a checkpoint after this stage's work
			return TaskComplete
		}
		return TaskPending
	}
	fetched, pages := readCounts(r)
	tasks := []StreamTask{{ID: "plan", Title: "Planning the research", Status: status(0, r.Plan != nil || waitingOn == checkpoints.PlanReview)}}
	if r.Plan != nil && len(r.Plan.SubQuestions) > 0 {
		tasks[0].Details = countOf(len(r.Plan.SubQuestions), "sub-question", "sub-questions")
	}
	tasks = append(tasks, searchTasks(r, status(1, len(r.Queries) > 0), success || pos > 1)...)
	read := StreamTask{ID: "read", Title: "Reading pages", Status: status(2, pages > 0)}
	if pages > 0 || fetched > 0 {
		read.Details = countOf(max(pages, fetched), "page", "pages") + " read"
	}
	read.Sources = readSources(r)
	tasks = append(tasks, read,
		StreamTask{ID: "analyze", Title: "Analysing what the pages say", Status: status(3, r.Analysis != nil)},
	)
	draft := StreamTask{ID: "draft", Title: "Drafting the report", Status: status(4, len(r.Drafts) > 0 || waitingOn == checkpoints.DraftReview)}
	if n := len(r.Drafts); n > 0 {
		draft.Details = fmt.Sprintf("draft %d", r.Drafts[n-1].Version)
	}
	review := StreamTask{ID: "review", Title: "Reviewing the draft", Status: status(5, len(r.Critiques) > 0)}
	if n := len(r.Critiques); n > 0 {
		review.Details = fmt.Sprintf("score %.1f/10", r.Critiques[n-1].Score)
	}
	tasks = append(tasks, draft, review)
	if failed {
		for i := range tasks {
			if tasks[i].Status == TaskError {
				reason := FirstNonEmpty(r.Failure, "stopped")
				if r.Status == pipeline.StatusCancelled {
					reason = "cancelled"
				}
				tasks[i].Output = reason
			}
		}
	}
	for i := range tasks {
		if tasks[i].Status == TaskInProgress && tasks[i].Details == "" {
			tasks[i].Details = "working…" // never empty: a note shown there is replaced
		}
		tasks[i] = clampTask(tasks[i])
	}
	return tasks
}

// searchTasks is one search task per sub-question of r's plan (one task
// when there is no plan yet), folded to fit MaxStreamTasks; passed says
// the run is past searching.
func searchTasks(r *pipeline.Run, stage string, passed bool) []StreamTask {
	var subs []string
	if r.Plan != nil {
		subs = r.Plan.SubQuestions
	}
	if len(subs) == 0 {
		t := StreamTask{ID: "search", Title: "Searching for sources", Status: stage}
		if n := len(r.Queries); n > 0 {
			t.Details = queryDetails(r.Queries)
		}
		return []StreamTask{t}
	}
	room := MaxStreamTasks - 5 // plan, reading, analysis, drafting, review
	byIndex := make([][]pipeline.Query, len(subs))
	for _, q := range r.Queries {
		i := q.SubQuestion - 1
		if i < 0 || i >= len(subs) {
			i = len(subs) - 1 // a query of no sub-question counts with the last
		}
		byIndex[i] = append(byIndex[i], q)
	}
	var tasks []StreamTask
	for i, sq := range subs {
		if i == room-1 && len(subs) > room {
			var rest []pipeline.Query
			for _, qs := range byIndex[i:] {
				rest = append(rest, qs...)
			}
			t := StreamTask{ID: fmt.Sprintf("search-%d", i+1), Title: fmt.Sprintf("Searching for %d more sub-questions", len(subs)-i), Status: queryStatus(stage, rest, passed)}
			if len(rest) > 0 {
				t.Details = queryDetails(rest)
			}
			return append(tasks, t)
		}
		t := StreamTask{ID: fmt.Sprintf("search-%d", i+1), Title: "Searching: " + sq, Status: queryStatus(stage, byIndex[i], passed)}
		if len(byIndex[i]) > 0 {
			t.Details = queryDetails(byIndex[i])
		}
		tasks = append(tasks, t)
	}
	return tasks
}

// queryStatus refines the search stage's status for one sub-question by its
// queries: done when none is pending, an error when every one failed. A
// search planned but not run (at the plan review) is pending.
func queryStatus(stage string, qs []pipeline.Query, passed bool) string {
	if len(qs) == 0 || stage == TaskPending || stage == TaskError {
		return stage
	}
	if passed { // the run is past searching: what did not run will not
		if allFailed(qs) {
			return TaskError
		}
		return TaskComplete
	}
	for _, q := range qs {
		if q.Status == "" || q.Status == "pending" {
			if stage == TaskInProgress {
				return TaskInProgress
			}
			return TaskPending
		}
	}
	if allFailed(qs) {
		return TaskError
	}
	return TaskComplete
}

func allFailed(qs []pipeline.Query) bool {
	for _, q := range qs {
		if q.Status != "failed" {
			return false
		}
	}
	return true
}

// queryDetails counts queries and their results.
func queryDetails(qs []pipeline.Query) string {
	results, failed := 0, 0
	for _, q := range qs {
		results += q.Results
		if q.Status == "failed" {
			failed++
		}
	}
	s := countOf(len(qs), "query", "queries") + " · " + countOf(results, "result", "results")
	if failed > 0 {
		s += fmt.Sprintf(" · %d failed", failed)
	}
	return s
}

// countOf is n with the noun in its number.
func countOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return Count(n) + " " + many
}

// readCounts counts r's fetched sources and read pages.
func readCounts(r *pipeline.Run) (fetched, pages int) {
	for _, s := range r.Sources {
		if s.Fetched {
			fetched++
		}
	}
	return fetched, len(r.Pages)
}

// readSources are the pages r read (web pages only: a file given to the run
// has no URL to show), up to MaxStreamSources, first read first.
func readSources(r *pipeline.Run) []StreamSource {
	var out []StreamSource
	seen := map[string]bool{}
	for _, p := range r.Pages {
		u := streamURL(FirstNonEmpty(p.FinalURL, p.URL))
		if p.File != "" || u == "" || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, StreamSource{URL: u, Text: FirstNonEmpty(strings.TrimSpace(p.Title), domainOf(u), u)})
		if len(out) == MaxStreamSources {
			break
		}
	}
	return out
}

// streamURL is u when it is an absolute http(s) URL, else "".
func streamURL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	return p.String()
}

// streamPlain makes untrusted text safe plain text on one line: invisible
// characters dropped, angle brackets replaced by look-alikes (no mention or
// link can hide in it), cut to limit runes.
func streamPlain(s string, limit int) string {
	return CutRunes(plainSafe.Replace(OneLine(Visible(strings.ToValidUTF8(s, "\uFFFD")))), limit)
}

// clampTask applies Slack's limits to a task's texts.
func clampTask(t StreamTask) StreamTask {
	t.Title = streamPlain(t.Title, MaxStreamTaskTitle)
	t.Details = streamPlain(t.Details, MaxStreamTaskDetails)
	t.Output = streamPlain(t.Output, MaxStreamTaskOutput)
	for i := range t.Sources {
		t.Sources[i].Text = streamPlain(t.Sources[i].Text, MaxStreamTaskTitle)
	}
	return t
}

// WithStreamNote shows a passing note (a model call being retried) in the
// details of the task in progress, as the progress message shows it under
// its stage until the next update (a task in progress always has details,
// so the next update without the note replaces them). Without a note, or a
// task in progress, tasks are returned as they are.
func WithStreamNote(tasks []StreamTask, note string) []StreamTask {
	if strings.TrimSpace(note) == "" {
		return tasks
	}
	out := slices.Clone(tasks)
	for i := range out {
		if out[i].Status == TaskInProgress {
			out[i].Details = streamPlain(out[i].Details+" · ⏳ "+note, MaxStreamTaskDetails)
			break
		}
	}
	return out
}

// StreamChunks are the task_update chunks that bring the tasks Slack shows
// (sent: task id → Key of what was last sent) to tasks, in plan order,
// at most MaxStreamChunks of them; the rest wait for the next call.
func StreamChunks(tasks []StreamTask, sent map[string]string) []slack.StreamChunk {
	var out []slack.StreamChunk
	for _, t := range tasks {
		if sent[t.ID] == t.Key() {
			continue
		}
		if len(out) == MaxStreamChunks {
			break
		}
		out = append(out, TaskChunk(t))
	}
	return out
}

// TaskChunk is the task_update chunk of t.
func TaskChunk(t StreamTask) slack.TaskUpdateChunk {
	c := slack.NewTaskUpdateChunk(t.ID, t.Title)
	c.Status = slack.TaskCardStatus(t.Status)
	c.Details, c.Output = t.Details, t.Output
	for _, s := range t.Sources {
		c.Sources = append(c.Sources, slack.NewTaskCardSource(s.URL, s.Text))
	}
	return c
}

// StreamSummary is the Markdown a run's stream ends with: what the run
// did, and where its result is. Only counts and this package's words go
// in; a failure reason is shown as text (Markdown escaped).
func StreamSummary(r *pipeline.Run) string {
	fetched, pages := readCounts(r)
	did := countOf(len(r.Queries), "query", "queries") + " · " + countOf(len(r.Sources), "source", "sources") + " · " + countOf(max(pages, fetched), "page", "pages") + " read"
	var head string
	switch r.Status {
	case pipeline.StatusCompleted:
		head = "**Done.** The report is below."
	case pipeline.StatusPartial:
		head = "**Done, partially.** The partial report and its reasons are below."
	case pipeline.StatusCancelled:
		head = "**Cancelled.** What was found so far is kept."
	case pipeline.StatusFailed:
		reason, _ := MarkdownBlockText(OneLine(FirstNonEmpty(r.Failure, "an unexpected error")), nil, 1500)
		head = "**Failed:** " + FirstNonEmpty(reason, "an unexpected error")
	default:
		head = "**So far:**"
	}
	return CutRunes(head+"\n"+did, MaxStreamMarkdown)
}

// StreamCheckpointNote is the Markdown a stream stopped at a checkpoint
// ends with.
func StreamCheckpointNote(r *pipeline.Run) string {
	label := "a checkpoint"
	if cur := r.Current(); cur != nil {
		if l, ok := MarkdownBlockText(OneLine(FirstNonEmpty(cur.Label, cur.DefinitionID)), nil, 200); ok {
			label = "“" + l + "”"
		}
	}
	return "Waiting for your decision on " + label + " below."
}
