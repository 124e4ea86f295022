package bot

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// fakeEngine is a small, faithful stand-in for *pipeline.Engine on the
// Slack side: runs live in memory, checkpoints follow the real checkpoints
// lifecycle (so Edit values are validated for real), decisions are a
// compare-and-set under a lock, and it calls the Presenter like the engine
// does: Offer after a checkpoint is saved, Decided after a decision, Progress
// while it works and Finished at the end. A run offers plan_review, then
// draft_review, then finishes with a report.
type fakeEngine struct {
	pres pipeline.Presenter
	now  func() time.Time
	// report is the report a finishing run gets (its Markdown too).
	report pipeline.Report

	// loadHold, when set, makes Load wait (ignoring ctx) until it is
	// closed, like a struggling store; see holdLoads.
	loadHold chan struct{}
	// decideErr, when set, is what Decide answers, changing nothing.
	decideErr error
	// keepIDs names a run by the id its request chose (pipeline.Request.ID),
	// as the engine does; without it runs are run-1, run-2, ….
	keepIDs bool
	// direct makes the runs it starts private (Origin.Direct), like a held digest.
	direct bool
	// finishing, when set, adds to a run what it found before it finishes
	// (its plan, queries, pages), under the engine's lock.
	finishing func(r *pipeline.Run)

	mu        sync.Mutex
	runs      map[string]*pipeline.Run
	seq       int
	decisions []checkpoints.Decision
	opened    []string
	cancels   []string
}

var _ Engine = (*fakeEngine)(nil)

func newFakeEngine(pres pipeline.Presenter) *fakeEngine {
	return &fakeEngine{pres: pres, now: time.Now, runs: map[string]*pipeline.Run{}, report: pipeline.Report{
		Status: "complete", Confidence: "high", Title: "RAG and stale sources",
		Abstract:   "Summary of what the pages said.",
		References: []pipeline.Reference{{N: 1, SourceID: 1, Title: "Keeping RAG fresh", URL: "https://blog.example.com/rag-fresh", Domain: "blog.example.com"}},
		Markdown:   "# RAG and stale sources\n\nFull report.\n",
	}}
}

func (e *fakeEngine) clone(r *pipeline.Run) *pipeline.Run {
	c := *r
	c.Checkpoints = append([]checkpoints.Instance(nil), r.Checkpoints...)
	return &c
}

func (e *fakeEngine) Start(ctx context.Context, req pipeline.Request) (*pipeline.Run, error) {
	e.mu.Lock()
	e.seq++
	id := fmt.Sprintf("run-%d", e.seq)
	if e.keepIDs && req.ID != "" {
		id = req.ID
	}
	r := &pipeline.Run{ID: id, Question: req.Question, Mode: req.Mode, Depth: req.Depth,
		RequestedBy: req.RequestedBy, Origin: req.Origin, Status: pipeline.StatusRunning, Step: pipeline.StepPlan, CreatedAt: e.now(), Domains: req.Domains}
	r.Origin.Direct = r.Origin.Direct || e.direct
	e.runs[r.ID] = r
	if req.Held {
		// Like the engine: stored, and nothing shown until Release.
		r.Status, r.Held = pipeline.StatusInterrupted, true
		snap := e.clone(r)
		e.mu.Unlock()
		return snap, nil
	}
	return e.begin(ctx, r)
}

// Release lets a held run go on in its thread: it offers its plan review.
func (e *fakeEngine) Release(ctx context.Context, runID, threadTS string) (*pipeline.Run, error) {
	e.mu.Lock()
	r, ok := e.runs[runID]
	if !ok {
		e.mu.Unlock()
		return nil, pipeline.ErrNotFound
	}
	if !r.Held {
		defer e.mu.Unlock()
		return e.clone(r), nil
	}
	r.Held, r.Status, r.Origin.ThreadTS = false, pipeline.StatusRunning, threadTS
	return e.begin(ctx, r)
}

// Withdraw cancels a held run.
func (e *fakeEngine) Withdraw(ctx context.Context, runID, reason string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r, ok := e.runs[runID]; ok && r.Held {
		r.Held, r.Status, r.Presented = false, pipeline.StatusCancelled, true
	}
	return nil
}

// begin offers the plan review of run r; it is called with e.mu held and
// releases it.
func (e *fakeEngine) begin(ctx context.Context, r *pipeline.Run) (*pipeline.Run, error) {
	e.offerLocked(r, checkpoints.PlanReview, planPayload(), map[string]any{
		"sub_questions": "What is RAG?\nWhy do sources go stale?", "queries": "web: RAG staleness", "depth": "standard"})
	snap := e.clone(r)
	inst := snap.Current()
	e.mu.Unlock()
	e.pres.Progress(ctx, snap)
	if err := e.pres.Offer(ctx, snap, inst); err != nil {
		return nil, err
	}
	return snap, nil
}

// offerLocked adds an offered instance of a built-in definition and makes it current.
func (e *fakeEngine) offerLocked(r *pipeline.Run, defID string, payload any, values map[string]any) {
	d := builtin(defID)
	inst := checkpoints.NewInstance(d, fmt.Sprintf("%s.cp%d", r.ID, len(r.Checkpoints)+1), r.ID, mustJSON(payload), d.Fields, values, e.now())
	if err := inst.Offer(e.now(), "system"); err != nil {
		panic(err)
	}
	r.Checkpoints = append(r.Checkpoints, inst)
	r.Waiting, r.Status = inst.ID, pipeline.StatusWaiting
}

// supersede offers a new plan review, leaving the current one undecided
// (as when a checkpoint is offered again and the old message kept its buttons).
func (e *fakeEngine) supersede(ctx context.Context, runID string) {
	e.mu.Lock()
	r := e.runs[runID]
	e.offerLocked(r, checkpoints.PlanReview, planPayload(), nil)
	snap := e.clone(r)
	e.mu.Unlock()
	_ = e.pres.Offer(ctx, snap, snap.Current())
}

func (e *fakeEngine) Decide(ctx context.Context, instanceID string, d checkpoints.Decision) (*pipeline.Run, error) {
	e.mu.Lock()
	if e.decideErr != nil {
		defer e.mu.Unlock()
		return nil, e.decideErr
	}
	r, ok := e.runs[pipeline.RunIDOf(instanceID)]
	if !ok {
		e.mu.Unlock()
		return nil, pipeline.ErrNotFound
	}
	var inst *checkpoints.Instance
	for i := range r.Checkpoints {
		if r.Checkpoints[i].ID == instanceID {
			inst = &r.Checkpoints[i]
		}
	}
	switch {
	case inst == nil:
		e.mu.Unlock()
		return nil, pipeline.ErrNotCurrent
	case inst.Final():
		e.mu.Unlock()
		return nil, checkpoints.ErrAlreadyDecided
	case r.Status.Final():
		e.mu.Unlock()
		return nil, pipeline.ErrNotCurrent // as the real engine: a finished run waits on nothing
	case r.Waiting != instanceID:
		e.mu.Unlock()
		return nil, pipeline.ErrNotCurrent
	}
	if err := inst.Decide(d); err != nil {
		e.mu.Unlock()
		return nil, err
	}
	_ = inst.Collapse(e.now())
	e.decisions = append(e.decisions, *inst.Decision)
	decided := *inst
	r.Waiting, r.Status = "", pipeline.StatusRunning
	finish := false
	switch {
	case decided.DefinitionID == checkpoints.PlanReview && d.Action != checkpoints.Reject:
		r.Step = pipeline.StepWrite
		e.offerLocked(r, checkpoints.DraftReview, pipeline.DraftPayload{Version: 1, Title: "RAG and stale sources", Abstract: "Draft abstract.", Score: 8, Recommendation: "approve"}, map[string]any{"title": "RAG and stale sources"})
	case decided.DefinitionID == checkpoints.PlanReview:
		e.offerLocked(r, checkpoints.PlanReview, planPayload(), nil)
	default:
		if e.finishing != nil {
			e.finishing(r)
		}
		rep := e.report
		rep.Metadata.RunID = r.ID
		r.Report, r.Status, r.Step, r.FinishedAt = &rep, pipeline.StatusCompleted, pipeline.StepDone, e.now()
		finish = true
	}
	snap := e.clone(r)
	e.mu.Unlock()
	_ = e.pres.Decided(ctx, snap, &decided)
	if finish {
		_ = e.pres.Finished(ctx, snap)
	} else {
		e.pres.Progress(ctx, snap)
		_ = e.pres.Offer(ctx, snap, snap.Current())
	}
	return snap, nil
}

func (e *fakeEngine) Opened(_ context.Context, instanceID, actor string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.opened = append(e.opened, instanceID+" by "+actor)
	return nil
}

func (e *fakeEngine) Cancel(ctx context.Context, runID, by string) error {
	e.mu.Lock()
	r, ok := e.runs[runID]
	if !ok {
		e.mu.Unlock()
		return pipeline.ErrNotFound
	}
	if r.Status.Final() {
		e.mu.Unlock()
		return pipeline.ErrRunFinished
	}
	e.cancels = append(e.cancels, runID+" by "+by)
	r.Status, r.Waiting, r.FinishedAt = pipeline.StatusCancelled, "", e.now()
	snap := e.clone(r)
	e.mu.Unlock()
	return e.pres.Finished(ctx, snap)
}

func (e *fakeEngine) Load(_ context.Context, runID string) (*pipeline.Run, error) {
	e.mu.Lock()
	hold := e.loadHold
	e.mu.Unlock()
	if hold != nil {
		<-hold
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.runs[runID]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	return e.clone(r), nil
}

func (e *fakeEngine) List(_ context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []*pipeline.Run
	for _, r := range e.runs {
		if f.RequestedBy == "" || r.RequestedBy == f.RequestedBy {
			out = append(out, e.clone(r))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID > out[j].ID })
	return out, nil
}

// decisionsCopy returns the decisions recorded so far.
func (e *fakeEngine) decisionsCopy() []checkpoints.Decision {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]checkpoints.Decision(nil), e.decisions...)
}

// Skip, Retry and ContinueWithout: the fake's checkpoints are all required
// and always shown, as the engine would answer for them.
func (e *fakeEngine) Skip(context.Context, string, string) (*pipeline.Run, error) {
	return nil, checkpoints.ErrCannotSkipRequired
}

func (e *fakeEngine) Retry(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotCurrent
}

func (e *fakeEngine) OfferLostAgain(_ context.Context, runID, _ string) (*pipeline.Run, error) {
	return e.Load(context.Background(), runID)
}

func (e *fakeEngine) ContinueWithout(context.Context, string, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotStranded
}

// holdLoads makes every Load from now on wait until the returned release is
// called (idempotent; also called when the test ends).
func (e *fakeEngine) holdLoads(t *testing.T) (release func()) {
	hold := make(chan struct{})
	e.mu.Lock()
	e.loadHold = hold
	e.mu.Unlock()
	var once sync.Once
	release = func() {
		once.Do(func() {
			e.mu.Lock()
			if e.loadHold == hold {
				e.loadHold = nil
			}
			e.mu.Unlock()
			close(hold)
		})
	}
	t.Cleanup(release)
	return release
}

// NeverDomain is the engine's answer outside a source review, which the
// fake never offers.
func (e *fakeEngine) NeverDomain(context.Context, string, string, string) (*pipeline.Run, string, error) {
	return nil, "", pipeline.ErrNotSourceReview
}
