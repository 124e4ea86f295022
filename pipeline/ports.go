package pipeline

import (
	"context"
	"errors"
	"fmt"
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
	// OnRetry, when set, is told before the Model waits to try a failed
	// call again, so the wait shows as progress rather than silence.
	OnRetry func(ModelRetry)
}

// ModelRetry describes one retry of an LLM call that failed.
type ModelRetry struct {
	Retry int           // 1 for the first retry
	Of    int           // retries the Model allows
	Wait  time.Duration // until the retry
	Cause error         // what failed
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

// Pricer knows the model's prices, to estimate a plan's cost (Config.Prices).
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
	// Asker is who started the run (a Slack user id); PersonToken is their
	// permission to search what they can read (empty when the run has
	// none: a digest, a run resumed without them). Backends that search
	// on a person's behalf need both; the others ignore them.
	Asker       string
	PersonToken PersonToken
	// Audience is who will read what the run writes; a backend may use it
	// to decide whether to search at all (the pipeline enforces the
	// boundary on every hit whatever the backend does).
	Audience Audience
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
	// Visibility is who may read the hit (the zero value: anyone). The
	// pipeline drops a hit the run's audience may not read.
	Visibility Visibility
	// Text is the whole text of an item its backend returns whole (a
	// workspace message): the source is read from it, not fetched.
	Text string
}

// SearchOutcome is what all backends returned for one query. A backend that
// failed is named in Errors; the others' hits are still there.
type SearchOutcome struct {
	Hits   []Hit
	Errors []string
	// Notes say what a backend left out on purpose and why ("Workspace
	// search skipped: no permission token from the person who asked"); the
	// report states each once.
	Notes []string
	// Interrupted is set when backends could not be asked for a reason of
	// our own, not of the sources: the shared rate limiter's store failed
	// (a worker cut off from Redis) or the search was cancelled. The search
	// step then fails and is tried again (within its attempts) instead of
	// recording the search as failed: such failures never count toward
	// Limits.MaxSearchErrors. Errors still lists them.
	Interrupted error
	// Paced is set when the search found nothing only because our shared
	// search rate limit had no room for any backend within its wait (many
	// runs at once). When every search of a step attempt is Paced, nothing
	// was searched at all: the step fails and is tried again, instead of
	// the run ending with "the searches found no sources". Otherwise such a
	// search is recorded as failed, as any other.
	Paced error
}

// Searcher searches every configured backend for one query.
type Searcher interface {
	Search(ctx context.Context, r SearchRequest) SearchOutcome
}

// SearchReserver is optionally implemented by a Searcher whose backends
// are paced by shared rate budgets: told every request a search step is
// about to make, Reserve takes what they need of each budget in one ask,
// and returns the Searcher that then makes them (each request at most
// once), drawing on what was reserved. A budget that cannot hold them all
// reserves nothing, and each search asks for itself, as without Reserve.
// What is reserved for a search that then does not call its backend is
// spent (budgets are over-spent by at most one call per request and
// backend, never under-spent). Reserve itself never fails: a failure is
// met and reported by the searches.
type SearchReserver interface {
	Searcher
	Reserve(ctx context.Context, rs []SearchRequest) Searcher
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
	// Kind is KindPDF for a PDF, "" for a web page.
	Kind string
	// PageCount is how many pages a paged document has; PageStarts holds
	// the byte offset in Text at which each page read starts (page n, from
	// 1, at PageStarts[n-1]).
	PageCount  int
	PageStarts []int
	// Note says what the reading left out ("more than 300 pages: read the
	// first 300").
	Note string
}

// Fetcher fetches and extracts one page. Its errors are recorded, not fatal.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (Document, error)
}

// ErrConflict is returned by Store.Save when the run changed since it was loaded.
var ErrConflict = errors.New("run was changed by someone else")

// ErrLeaseBusy is returned by Locker.Lock when another worker holds the run.
var ErrLeaseBusy = errors.New("another worker is advancing this run")

// ErrLeaseLost is returned by Store.Save when the fencing token of the save
// is not the run's current one (another worker took the run over), and is
// the cause of a lease's context when the lease could not be kept.
var ErrLeaseLost = errors.New("this worker lost its lease on the run")

// ErrUnknownOutcome is returned (wrapped) by Store.Save when the write was
// sent but its reply was lost (a timeout, a dropped connection): the save
// may or may not have happened. Reading the run again tells which.
var ErrUnknownOutcome = errors.New("the store did not confirm the write")

// ErrNotFound is returned when a run does not exist.
var ErrNotFound = errors.New("no such run")

// RunFilter selects runs to list.
type RunFilter struct {
	RequestedBy string // "" = anyone
	Limit       int    // 0 = 50
}

// Store keeps runs and checkpoint definitions.
type Store interface {
	// Create stores a new run at Version 1, with its indexes, in one step:
	// a crash cannot leave a run that is stored but never listed or queued.
	Create(ctx context.Context, r *Run) error
	// CreateLeased is Create for a run this process's worker will advance
	// at once (Queue.RunsHereAtOnce): it also takes the run's lease, which
	// the Locker of this process hands to the worker's first Lock, with
	// the fence the create wrote, while it is certainly still held (and
	// takes anew otherwise). A process that dies before its worker started
	// leaves a lease that expires as any dead worker's does. It reports
	// false, having stored nothing, when it cannot take the lease with the
	// create (the caller then creates the run with Create).
	CreateLeased(ctx context.Context, r *Run) (bool, error)
	// Load returns the run, or ErrNotFound.
	Load(ctx context.Context, id string) (*Run, error)
	// Save writes r if the stored version still equals r.Version and, when
	// r.Fence is set, the run's fencing token still equals r.Fence; then it
	// increments r.Version. Otherwise it writes nothing and returns
	// ErrConflict (the version moved) or ErrLeaseLost (the fence moved). An
	// error wrapping ErrUnknownOutcome means the write may have happened.
	Save(ctx context.Context, r *Run) error
	// List returns runs, newest first.
	List(ctx context.Context, f RunFilter) ([]*Run, error)

	// Definitions returns every stored checkpoint definition.
	Definitions(ctx context.Context) ([]checkpoints.Definition, error)
	// PutDefinition stores a checkpoint definition.
	PutDefinition(ctx context.Context, d checkpoints.Definition) error
	// CreateDefinition stores a definition whose id is not taken, or returns
	// checkpoints.ErrDefinitionExists and changes nothing.
	CreateDefinition(ctx context.Context, d checkpoints.Definition) error
	// CreateDefinitionsIfNone stores defs in one step when no definition is
	// stored at all, and reports whether it did (false: some are stored by
	// now, and nothing was written).
	CreateDefinitionsIfNone(ctx context.Context, defs []checkpoints.Definition) (bool, error)
	// RecordCheckpointFailure notes a failure of a definition and returns the
	// failure times within window before at.
	RecordCheckpointFailure(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)
	// CheckpointFailures returns the failure times within window before at.
	CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)

	// RequestCancel marks a run to stop at its next step boundary; a
	// worker reads who asked with LoadForStep or ProbeForStep.
	RequestCancel(ctx context.Context, runID, by string) error

	// LoadForStep returns the run and who asked to cancel it ("" for no
	// one), in one round trip: what a worker reads before each step.
	LoadForStep(ctx context.Context, id string) (*Run, string, error)
	// ProbeForStep returns a StepProbe of the run in one round trip,
	// without reading the run: what a worker that saved the run itself
	// reads before its next step when that save's reply did not say
	// (Run.SaveProbe), and after it released the lease. A missing run is
	// ErrNotFound.
	ProbeForStep(ctx context.Context, id string) (StepProbe, error)
}

// Queue hints to workers that a run has work. The run itself, saved before
// either call, is the durable work: the store indexes a run with work, and
// a checkpoint's deadline, with every save, and workers find them there.
// These hints only make a worker look at once, so one that fails or is
// lost costs time, never the run.
type Queue interface {
	// Wake hints that a worker serving queue should advance the run now.
	// Waking twice is waking once: wake-ups of a run that is being
	// advanced collapse into that advance.
	Wake(ctx context.Context, queue, runID string) error
	// WakeAt hints that a run of queue has a deadline at, saved with the
	// run (Run.Deadline: a checkpoint's timeout, an escalation to try
	// again), so that a worker serving queue advances it then: never
	// before.
	WakeAt(ctx context.Context, queue string, at time.Time) error
	// RunsHereAtOnce reports whether a run of queue woken now would be
	// advanced at once by this process's worker and by no other (a queue
	// made for this process alone, with a free slot): such a run is
	// created with its lease taken (Store.CreateLeased).
	RunsHereAtOnce(queue string) bool
}

// Locker gives one worker at a time the right to advance a run.
type Locker interface {
	// Lock takes the run's lease, or returns ErrLeaseBusy at once when
	// another worker holds it. The lease's Fence must go with every save the
	// holder makes (Run.Fence). The returned context is ctx, cancelled with
	// the cause ErrLeaseLost as soon as the lease cannot be kept (and before
	// another worker could take it): the step in flight stops.
	Lock(ctx context.Context, runID string) (context.Context, Lease, error)
}

// Lease is a worker's exclusive right to advance one run.
type Lease interface {
	// Fence is the lease's fencing token: it grows with every acquisition
	// of the run's lease, and the store refuses saves that carry an older one.
	Fence() int64
	// Release gives the lease back and cancels its context. It is idempotent.
	Release()
}

// RetryError is returned by Engine.Advance when a step failed and will be
// tried again: the worker should call Advance again after After.
type RetryError struct {
	Step    Step
	Attempt int // attempts made so far
	After   time.Duration
	Err     error
}

func (e *RetryError) Error() string {
	return fmt.Sprintf("step %s failed (attempt %d of %d; again in %s): %v", e.Step, e.Attempt, MaxStepAttempts, e.After, e.Err)
}

func (e *RetryError) Unwrap() error { return e.Err }

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
	// RemindersStopped acts when a required checkpoint's reminders are
	// used up (checkpoints.ReminderPolicy): it says in the checkpoint's
	// message that reminders have stopped and how to decide or skip it,
	// and tells whom the policy's Escalate names. It is called once per
	// instance, after the state is saved; an error is logged.
	RemindersStopped(ctx context.Context, r *Run, inst *checkpoints.Instance) error
	// Notice shows a passing note about a run, such as "the model is not
	// answering (retry 2 of 4 in 8s)": waiting shows as progress, not as
	// silence or log lines. A presenter with nowhere to show it does nothing.
	Notice(ctx context.Context, r *Run, text string)
	// Stranded says that the required checkpoint inst could not be shown
	// after its retries, and offers Retry and (to admins) "continue
	// without it". It is called after the state is saved; an error is
	// logged.
	Stranded(ctx context.Context, r *Run, inst *checkpoints.Instance) error
	// BreakerTripped alerts the people who manage checkpoints that a
	// failure to show one of this presenter's checkpoints tripped the
	// definition's circuit breaker: runs go on without it until it is
	// reset. It is called for every failure that finds the breaker open;
	// alerting once is its job. An error is logged.
	BreakerTripped(ctx context.Context, d checkpoints.Definition, failures int) error
}

// SilentFinisher is a Presenter whose Finished shows nothing and cannot
// fail (the terminal's: its command prints the outcome it follows in the
// store). A run that ends at the end of a step is then saved finished and
// shown in one save: there is no side effect to record before or after.
type SilentFinisher interface {
	// FinishesSilently reports that Finished shows nothing.
	FinishesSilently() bool
}

// AutoDecider decides the checkpoints of unattended runs (Config.AutoDeciders).
// The Engine applies its decision at once, without waiting or showing them.
type AutoDecider interface {
	AutoDecide(r *Run, inst *checkpoints.Instance) (checkpoints.Decision, bool)
}
