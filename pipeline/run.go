// Package pipeline is researchbot's research run: its state, its steps, the
// routing rules between them, its budgets, and the Engine that advances a run
// one step at a time and persists it after every step.
//
// A run is a record (Run) that lives in a Store. The Engine is a deterministic
// step sequencer over that record: it loads the run, executes the next step
// (plan, search, rank, fetch, analyze, write, review, output or fallback),
// saves the run with a version check, and goes on until the run finishes or
// reaches a human checkpoint. At a checkpoint it saves the run as waiting,
// asks a Presenter to show the checkpoint, and returns: nothing waits in
// memory. A Decision later resumes the run through the same Engine, on any
// replica.
//
// The package declares the small interfaces it needs (Model, Searcher,
// Fetcher, Store, Queue, Locker, Presenter) and imports neither Slack nor
// Redis nor any LLM SDK.
package pipeline

// What a caller asks for (Request: origin, depth, limits, writing) and the
// Run record itself: its status and step, counters, estimate, spend, errors
// and trace. What it gathers, composes and reports is in run_gathering.go,
// run_composing.go and run_report.go.

import (
	"cmp"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// Status is where a run stands as a whole.
type Status string

// Run statuses. Completed, Partial, Failed and Cancelled are final.
const (
	StatusQueued  Status = "queued"
	StatusRunning Status = "running"
	StatusWaiting Status = "waiting" // at a human checkpoint
	// StatusInterrupted marks a terminal run whose process went away in the
	// middle (Ctrl-C, a crash): nobody works on it until it is resumed
	// (researchbot run --resume), and it is not rescued.
	StatusInterrupted Status = "interrupted"
	StatusCompleted   Status = "completed"
	StatusPartial     Status = "partial" // finished through the fallback, with caveats
	StatusFailed      Status = "failed"
	StatusCancelled   Status = "cancelled"
	// StatusStarting is shown, never stored: a held run (Run.Held) is
	// stored interrupted while its request is being shown, and a person
	// sees it as starting (Run.ShownStatus).
	StatusStarting Status = "starting"
)

// ShownStatus is the status to show a person: a held run is starting, not
// interrupted.
func (r *Run) ShownStatus() Status {
	if r.Held && r.Status == StatusInterrupted {
		return StatusStarting
	}
	return r.Status
}

// Final reports whether the run will never change again.
func (s Status) Final() bool {
	switch s {
	case StatusCompleted, StatusPartial, StatusFailed, StatusCancelled:
		return true
	}
	return false
}

// Step names the next unit of work of a run.
type Step string

// The pipeline's steps, in their usual order.
const (
	StepPlan     Step = "plan"
	StepSearch   Step = "search"
	StepRank     Step = "rank"
	StepFetch    Step = "fetch"
	StepAnalyze  Step = "analyze"
	StepWrite    Step = "write"
	StepReview   Step = "review"
	StepOutput   Step = "output"
	StepFallback Step = "fallback"
	StepDone     Step = "done"
)

// Depth is how thorough a run is (seed 001).
type Depth string

// Depths.
const (
	DepthQuick         Depth = "quick"
	DepthStandard      Depth = "standard"
	DepthComprehensive Depth = "comprehensive"
)

// ParseDepth validates a depth name; "" means standard.
func ParseDepth(s string) (Depth, bool) {
	switch Depth(s) {
	case "", DepthStandard:
		return DepthStandard, true
	case DepthQuick, DepthComprehensive:
		return Depth(s), true
	}
	return "", false
}

// Origin says who asked for a run and where its messages go.
type Origin struct {
	// Kind selects the Presenter: "terminal", "slack" or "stream".
	Kind     string `json:"kind"`
	TeamID   string `json:"team_id,omitempty"`
	Channel  string `json:"channel,omitempty"`
	ThreadTS string `json:"thread_ts,omitempty"`
	StreamID string `json:"stream_id,omitempty"`
	// Direct asks for the run's checkpoints to be offered to its requester
	// privately (a held digest draft goes to the stream owner), not in
	// Channel; everything else still goes to Channel. The presenter decides
	// what private means.
	Direct bool `json:"direct,omitempty"`
	// Queue is the work queue whose workers advance this run.
	Queue string `json:"queue,omitempty"`
}

// Limits bound every loop of a run (invariant 7). Zero values take defaults.
type Limits struct {
	MaxIterations  int           `json:"max_iterations"`   // revisions, plan and source re-rounds; default 3
	MaxGapRounds   int           `json:"max_gap_rounds"`   // analysis → search rounds; default 2
	MaxCostUSD     float64       `json:"max_cost_usd"`     // 0: no cost limit
	MaxWall        time.Duration `json:"max_wall"`         // working time, human waits excluded; 0: none
	MaxSources     int           `json:"max_sources"`      // pages fetched; 0: by depth
	MaxSourceChars int           `json:"max_source_chars"` // page text carried into a prompt; default 6000
	// MaxSourceTokens bounds the page text of one analysis prompt (estimated
	// tokens); the best-ranked pages that fit are used. 0: default 30 000.
	MaxSourceTokens int `json:"max_source_tokens"`
	// MaxSearchErrors is how many searches may fail (every backend erred and
	// nothing was found) before the run stops searching and writes with what
	// it has (seed 002). 0: default 3.
	MaxSearchErrors int `json:"max_search_errors,omitempty"`
}

// Writing is how the report should read: a house style and a length. Both
// reach the writer and the reviewer.
type Writing struct {
	// StyleGuide is the house style, as text; "" means the writer's own.
	StyleGuide string `json:"style_guide,omitempty"`
	// TargetWords is the report's target length; 0 means by depth (quick
	// 800, standard 1500, comprehensive 2500).
	TargetWords int `json:"target_words,omitempty"`
}

// merge fills the zero fields of w from d.
func (w Writing) merge(d Writing) Writing {
	w.StyleGuide = cmp.Or(w.StyleGuide, d.StyleGuide)
	w.TargetWords = cmp.Or(w.TargetWords, d.TargetWords)
	return w
}

// Request is what a caller asks the Engine to research.
type Request struct {
	Question    string
	Mode        string // checkpoints.ModeAuto, ModeGuided (default) or ModeFull
	Depth       Depth
	RequestedBy string
	Origin      Origin
	Limits      Limits
	// Since restricts searches to items newer than this (research streams).
	Since time.Time
	// Known lists what earlier digests already reported, so this run reports only what is new.
	Known Known
	// Context is extra background for the planner (e.g. a stream's purpose).
	Context string
	// Writing is the house style and target length; zero fields take the
	// Engine's defaults.
	Writing Writing
	// ReviewSources asks for the source review in a guided run (in a full
	// run it is asked anyway).
	ReviewSources bool
	// Domains are where the run's sources may come from; they are
	// normalised and validated with the request.
	Domains DomainRules
	// FollowUpOf is the id of a follow-up question (FollowUp.ID) this run
	// researches: the question, mode and depth default to the follow-up's
	// and its parent's, the parent's context is added, and the two runs are
	// linked (Run.Parent, FollowUp.Child).
	FollowUpOf string
	// Files are documents given to the run, read before anything is
	// searched and cited by name (KindFile sources).
	Files []File
	// Audience is who will read what the run writes (set by whoever starts
	// it: a channel, or the asker alone). A source it may not read is
	// withheld (Audience.Permits). The zero Audience admits public sources only.
	Audience Audience
	// PersonToken is the asker's permission to search on their behalf
	// (Slack's action_token), when the run was started by their
	// interaction; it is kept only until the run ends. A Request is never
	// encoded with it.
	PersonToken PersonToken `json:"-"`
	// ID is the run's id, chosen by the caller ("" for a new one): a run
	// with this id already stored is never made again (Start fails).
	ID string
	// Held stores the run held (Run.Held): no worker takes it until its
	// starter releases it (Engine.Release) with where it is shown, or
	// withdraws it (Engine.Withdraw). A Slack request stores its run so
	// before it posts the root message the run's thread hangs under, so a
	// process killed in between loses no request.
	Held bool
}

// Known is what a run must not report again.
type Known struct {
	URLs      []string `json:"urls,omitempty"`      // normalised URLs
	Simhashes []uint64 `json:"simhashes,omitempty"` // content fingerprints
}

// Run is the whole state of one research run. It is saved after every step.
type Run struct {
	ID      string `json:"id"`
	Version int64  `json:"version"` // compare-and-set token, owned by the Store
	// Fence is the fencing token of the lease under which the run was
	// loaded (0: none). The Store refuses to save a run whose Fence is set
	// but is no longer the run's current one. It is never stored.
	Fence int64 `json:"-"`
	// SaveNonce names the Store's save that produced this copy's Version
	// ("" for a copy that was loaded, not saved). A worker holding the copy
	// it saved compares it with the stored one: after lost writes and
	// another writer's save, the stored version can come back to the same
	// number with other contents. It is never stored.
	SaveNonce string `json:"-"`
	// SaveProbe is what the Store's save that produced this copy read in
	// the same step, as ProbeForStep would have right after it: its own
	// version and nonce, and who had asked to cancel the run (nil: the
	// Store did not say; a copy that was loaded, or changed since). The
	// worker that goes straight on to the next step takes it for the probe
	// at the step boundary. It is never stored.
	SaveProbe *StepProbe `json:"-"`
	// attemptSaved says this copy's last save already counted the attempt
	// in Attempt at the step it names (the save that ended the step
	// before): the worker that made it runs that step without another save.
	// It is never stored; a copy read from the store does not have it.
	attemptSaved bool

	Question    string    `json:"question"`
	Context     string    `json:"context,omitempty"`
	Mode        string    `json:"mode"`
	Depth       Depth     `json:"depth"`
	RequestedBy string    `json:"requested_by"`
	Origin      Origin    `json:"origin"`
	Limits      Limits    `json:"limits"`
	Since       time.Time `json:"since,omitzero"`
	Known       Known     `json:"known,omitzero"`
	Writing     Writing   `json:"writing,omitzero"`
	// ReviewSources: the source review is asked in this guided run.
	ReviewSources bool `json:"review_sources,omitempty"`
	// Domains are the run's domain rules (only / never lists).
	Domains DomainRules `json:"domains,omitzero"`
	// Audience is who reads what the run writes (Request.Audience).
	Audience Audience `json:"audience,omitzero"`
	// Withheld counts the sources its audience could not read, which the
	// run never stored nor showed to the model.
	Withheld Withheld `json:"withheld,omitzero"`
	// PersonToken is Request.PersonToken, cleared when the run ends.
	PersonToken PersonToken `json:"person_token,omitempty"`
	// SearchNotes are the backends' notes (SearchOutcome.Notes), each once.
	SearchNotes []string `json:"search_notes,omitempty"`

	Status     Status    `json:"status"`
	Step       Step      `json:"step"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
	FinishedAt time.Time `json:"finished_at,omitzero"`
	// LeasedAt is when the worker that last saved the run took its lease:
	// against CreatedAt, or a checkpoint's DecidedAt, it says how long the
	// run waited for a worker.
	LeasedAt time.Time `json:"leased_at,omitzero"`
	// Active is the working time spent in steps; human waits are not counted.
	Active time.Duration `json:"active"`
	// Attempt counts the attempts at the current step (Step), across
	// workers and queue tasks: a step that keeps failing ends the run.
	Attempt StepAttempt `json:"attempt,omitzero"`

	Counters Counters `json:"counters"`

	Plan *Plan `json:"plan,omitempty"`
	// PlanHistory is every earlier plan and why it was not kept, oldest
	// first; the planner sees all of them (seed 000: previous strategies).
	PlanHistory []PlanAttempt `json:"plan_history,omitempty"`
	Queries     []Query       `json:"queries,omitempty"`
	Sources     []Source      `json:"sources,omitempty"`
	Pages       []Page        `json:"pages,omitempty"`
	// Files are the documents given to the run (Request.Files); their
	// texts move to Pages when the run starts working.
	Files     []File     `json:"files,omitempty"`
	Analysis  *Analysis  `json:"analysis,omitempty"`
	Drafts    []Draft    `json:"drafts,omitempty"`
	Critiques []Critique `json:"critiques,omitempty"`
	Feedback  []Feedback `json:"feedback,omitempty"`
	// Notes are the steering notes people gave while the run ran, oldest
	// first (Engine.Steer); every later prompt carries them.
	Notes []SteeringNote `json:"notes,omitempty"`
	// Clarification is the planner's clarifying questions, once they were
	// asked (at most once a run), and the person's answers.
	Clarification *Clarification `json:"clarification,omitempty"`
	Estimate      *Estimate      `json:"estimate,omitempty"`
	Report        *Report        `json:"report,omitempty"`
	Spend         Spend          `json:"spend"`
	Errors        []RunError     `json:"errors,omitempty"`
	Bounds        []string       `json:"bounds,omitempty"` // every bound the run hit, stated in the report
	Trace         []TraceEntry   `json:"trace,omitempty"`  // provenance: what happened, in order

	Checkpoints []checkpoints.Instance `json:"checkpoints,omitempty"`
	// Waiting is the id of the checkpoint instance the run waits on, or "".
	Waiting string `json:"waiting,omitempty"`
	// Stranded is the id of the current checkpoint when it is required and
	// could not be shown after its retries: the run waits for a person's
	// Retry or an admin's "continue without it".
	Stranded string `json:"stranded,omitempty"`
	// Pause is the position the run stopped at for checkpoints, while it
	// asks them; nil otherwise.
	Pause *Pause `json:"pause,omitempty"`
	// ReviewNotes say where people could not review the run as its
	// checkpoints intend (checkpoints that could not be loaded or shown);
	// the report states them among its caveats.
	ReviewNotes []string `json:"review_notes,omitempty"`
	// Offering is the id of a checkpoint instance saved as offered whose
	// presentation is not confirmed yet: it is saved before the presenter
	// shows the checkpoint and cleared after, so a worker that dies in
	// between is replaced by one that shows it (again).
	Offering string `json:"offering,omitempty"`
	// LostDecision is set when the run's stored state was found to have
	// gone back (Redis lost acknowledged writes) while it waits at a
	// checkpoint: that checkpoint is offered again, saying so.
	LostDecision *LostDecision `json:"lost_decision,omitempty"`
	// EscalationRetry is set while the escalation of the checkpoint the run
	// waits at (its reminders used up) failed and waits to be tried again.
	EscalationRetry *EscalationRetry `json:"escalation_retry,omitempty"`

	// FallbackReason is why the run is heading to (or ended in) the fallback.
	FallbackReason string `json:"fallback_reason,omitempty"`
	// Failure is why a failed run failed, for people.
	Failure string `json:"failure,omitempty"`
	// CancelledBy names who cancelled the run.
	CancelledBy string `json:"cancelled_by,omitempty"`
	// Held marks a run stored before the place it is shown in was made
	// (Request.Held): its status is interrupted, so no worker takes it,
	// until Engine.Release or Engine.Withdraw.
	Held bool `json:"held,omitempty"`
	// Presented is set once the final outcome was shown to people (the
	// report posted). A finished run that is not presented yet is still
	// work for a worker: a failed post or a crash does not lose the report.
	Presented bool `json:"presented,omitempty"`
	// PresentAttempts counts failed attempts to show the outcome.
	PresentAttempts int `json:"present_attempts,omitempty"`
	// Verdicts are what people said about the report, one each.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// FollowUps are the questions people asked about the report, with
	// their answers; their cost is in Spend.
	FollowUps []FollowUp `json:"follow_ups,omitempty"`
	// Parent is the run whose follow-up question this run researches.
	Parent string `json:"parent,omitempty"`
	// TraceContext is the run's trace context (opaque, the Tracer's), so
	// that every process that advances the run adds to one trace.
	TraceContext string `json:"trace_context,omitempty"`
}

// StepAttempt records the attempts at one step. Each attempt is saved
// before the step runs, so crashes count too.
type StepAttempt struct {
	Step Step `json:"step,omitempty"`
	N    int  `json:"n,omitempty"` // attempts started
	// LastError says why the last attempt failed, for people.
	LastError string `json:"last_error,omitempty"`
	// ModelWait is the time the step's attempts spent in model calls that
	// brought no answer (timeouts, errors, the waits between retries),
	// bounded by Config.ModelWait.
	ModelWait time.Duration `json:"model_wait,omitempty"`
	// HeldBack counts the rounds in which our own shared rate limit held
	// back all the step had to do; they use up no attempt, up to
	// MaxHeldBackRounds.
	HeldBack int `json:"held_back,omitempty"`
}

// Counters count the loops of a run; each is bounded by Limits.
type Counters struct {
	Iteration   int `json:"iteration"`    // writer revisions done
	PlanRounds  int `json:"plan_rounds"`  // plans made
	SearchRound int `json:"search_round"` // search rounds done
	GapRounds   int `json:"gap_rounds"`   // analysis → search rounds done
	Reviews     int `json:"reviews"`      // reviews done
	Shrinks     int `json:"shrinks"`      // inputs shrunk after context-length errors
	// CriticalAsked counts the critical-issue checkpoints asked (at most one a run).
	CriticalAsked int `json:"critical_asked,omitempty"`
}

// Estimate is the expected cost and time of an approved plan.
type Estimate struct {
	LLMCalls    int           `json:"llm_calls"`
	Tokens      int           `json:"tokens"`
	CostUSD     float64       `json:"cost_usd"`
	Duration    time.Duration `json:"duration"`
	Searches    int           `json:"searches"`
	PagesToRead int           `json:"pages_to_read"`
}

// Spend is what a run has consumed so far, from the usage the API returned.
type Spend struct {
	PromptTokens     int     `json:"prompt_tokens"`
	CompletionTokens int     `json:"completion_tokens"`
	CostUSD          float64 `json:"cost_usd"`
	LLMCalls         int     `json:"llm_calls"`
	Searches         int     `json:"searches"`
	Fetches          int     `json:"fetches"`
}

// RunError is one error a run met and recorded (most are not fatal).
type RunError struct {
	At      time.Time `json:"at"`
	Step    Step      `json:"step"`
	Kind    string    `json:"kind"` // search, fetch, llm, checkpoint, internal
	Message string    `json:"message"`
}

// TraceEntry is one line of a run's provenance.
type TraceEntry struct {
	At      time.Time `json:"at"`
	Step    Step      `json:"step"`
	Message string    `json:"message"`
}
