package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// Role names the part an LLM call plays; each role may use its own model.
type Role string

// LLM roles.
const (
	RolePlanner  Role = "planner"
	RoleRanker   Role = "ranker"
	RoleAnalyst  Role = "analyst"
	RoleWriter   Role = "writer"
	RoleReviewer Role = "reviewer"
)

// Prompt is one structured LLM call.
type Prompt struct {
	Role   Role
	Name   string // schema name of the structured output
	System string
	User   string
}

// Usage is what one LLM call consumed.
type Usage struct {
	Model            string
	PromptTokens     int
	CompletionTokens int
	CostUSD          float64
	Calls            int
	// UnknownPrice is set when the model has no price: its cost counts as 0.
	UnknownPrice bool
}

// Model makes structured LLM calls: it fills out (a pointer to a struct) from
// the model's validated JSON output. Usage is returned even with an error.
type Model interface {
	Generate(ctx context.Context, p Prompt, out any) (Usage, error)
}

// ErrContextLength is returned (wrapped) by a Model when the input is too long
// for the model; the pipeline shrinks the input and tries again.
var ErrContextLength = errors.New("input too long for the model's context window")

// ErrModelUnusable is returned (wrapped) by a Model for failures that
// retrying will not fix: a refusal, an exhausted quota, a rejected key or
// model. The run ends at once, with what it has.
var ErrModelUnusable = errors.New("the model cannot answer")

// Pricer is optionally implemented by a Model to estimate costs before a run.
type Pricer interface {
	// Price returns USD per million input and output tokens for a role.
	Price(role Role) (inPerMTok, outPerMTok float64)
}

// SearchRequest is one query sent to the search backends.
type SearchRequest struct {
	Text  string
	Kind  string // web, academic, news
	Since time.Time
	Limit int
}

// Hit is one search result.
type Hit struct {
	// Key identifies the document across backends: a DOI, an arXiv id or the normalised URL.
	Key       string
	URL       string
	Title     string
	Snippet   string
	Backend   string
	Kind      string
	Published time.Time
	Authors   []string
	Citations int
	// Heuristic is the source's own relevance signal, 0..1.
	Heuristic float64
}

// SearchOutcome is what all backends returned for one query. A backend that
// failed is named in Errors; the others' hits are still there.
type SearchOutcome struct {
	Hits   []Hit
	Errors []string
}

// Searcher searches every configured backend for one query.
type Searcher interface {
	Search(ctx context.Context, r SearchRequest) SearchOutcome
}

// Document is a fetched and extracted page.
type Document struct {
	URL       string
	FinalURL  string
	Title     string
	Author    string
	Published time.Time
	Text      string
	Truncated bool
	Simhash   uint64
}

// Fetcher fetches and extracts one page. Its errors are recorded, not fatal.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (Document, error)
}

// ErrConflict is returned by Store.Save when the run changed since it was loaded.
var ErrConflict = errors.New("run was changed by someone else")

// ErrNotFound is returned when a run does not exist.
var ErrNotFound = errors.New("no such run")

// RunFilter selects runs to list.
type RunFilter struct {
	RequestedBy string // "" = anyone
	Limit       int    // 0 = 50
}

// Store keeps runs and checkpoint definitions.
type Store interface {
	// Create stores a new run at Version 1.
	Create(ctx context.Context, r *Run) error
	// Load returns the run, or ErrNotFound.
	Load(ctx context.Context, id string) (*Run, error)
	// Save writes r if the stored version still equals r.Version, then
	// increments r.Version; otherwise it returns ErrConflict and writes nothing.
	Save(ctx context.Context, r *Run) error
	// List returns runs, newest first.
	List(ctx context.Context, f RunFilter) ([]*Run, error)

	// Definitions returns every stored checkpoint definition.
	Definitions(ctx context.Context) ([]checkpoints.Definition, error)
	// PutDefinition stores a checkpoint definition.
	PutDefinition(ctx context.Context, d checkpoints.Definition) error
	// RecordCheckpointFailure notes a failure of a definition and returns the
	// failure times within window before at.
	RecordCheckpointFailure(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)
	// CheckpointFailures returns the failure times within window before at.
	CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)

	// RequestCancel marks a run to stop at its next step boundary.
	RequestCancel(ctx context.Context, runID, by string) error
	// CancelRequested reports who asked to cancel the run, or "".
	CancelRequested(ctx context.Context, runID string) (string, error)
}

// Queue hands runs to workers.
type Queue interface {
	// Enqueue asks a worker on queue to advance the run.
	Enqueue(ctx context.Context, queue, runID string) error
	// EnqueueTimeout asks a worker to check the checkpoint's timeout at a time.
	EnqueueTimeout(ctx context.Context, queue, runID, instanceID string, at time.Time) error
}

// Locker gives one worker at a time the right to advance a run.
type Locker interface {
	// Lock waits (bounded by ctx) for the run's lease; release gives it back.
	Lock(ctx context.Context, runID string) (release func(), err error)
}

// Presenter shows a run to people: the terminal, Slack, or a stream's channel.
// Its methods are called after the state they show has been saved.
type Presenter interface {
	// Offer shows a checkpoint and returns once it is shown. inst.Attempt > 1
	// means it is offered again after a timeout: a reminder.
	Offer(ctx context.Context, r *Run, inst *checkpoints.Instance) error
	// Decided shows that a checkpoint was decided (collapses it).
	Decided(ctx context.Context, r *Run, inst *checkpoints.Instance) error
	// Progress shows the run's progress; it is best-effort and may coalesce.
	Progress(ctx context.Context, r *Run)
	// Finished shows the final report, the failure or the cancellation.
	Finished(ctx context.Context, r *Run) error
}

// AutoDecider is implemented by a Presenter that decides checkpoints itself
// (unattended runs). The Engine applies its decision at once, without waiting.
type AutoDecider interface {
	AutoDecide(r *Run, inst *checkpoints.Instance) (checkpoints.Decision, bool)
}
