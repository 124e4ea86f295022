package pipeline

// Creating a run that this process's worker will advance at once: the
// create takes the run's lease for that worker, so the worker's first take
// is made in memory (a terminal run on its private queue), and counts the
// attempt at the run's first step, so the worker goes straight on to it
// without a save of its own.

import (
	"context"
	"sync"
)

// createRun stores the new run r: created leased when this process's
// worker will advance it at once and only here (Wake follows at once), and
// as usual otherwise — a held run (nobody advances it until it is
// released), or a run of a shared queue, which any replica's worker may
// take: a lease held by its creator would only make those wait.
//
// A run created leased also carries the first attempt at its first step,
// counted as the save that ends a step counts the next one
// (countNextAttempt): the worker here that takes the run as created goes
// straight on to the step (countedAtCreate). Like such a count, it is an
// attempt handed to a worker: if this process dies before the step
// ended, the worker that takes the run over counts its own attempt after
// it, within the step's bound.
func (e *Engine) createRun(ctx context.Context, r *Run) error {
	if r.Held || !e.cfg.Queue.RunsHereAtOnce(r.Origin.Queue) {
		return e.cfg.Store.Create(ctx, r)
	}
	status, attempt := r.Status, r.Attempt
	counted := e.steps.lookup(r.Step).Retry > 0
	if counted {
		r.Attempt, r.Status = StepAttempt{Step: r.Step, N: 1}, StatusRunning
	}
	leased, err := e.cfg.Store.CreateLeased(ctx, r)
	if err != nil || !leased {
		r.Status, r.Attempt = status, attempt
		if err != nil {
			return err
		}
		return e.cfg.Store.Create(ctx, r)
	}
	if counted {
		e.countedAtCreate.put(r.ID)
	}
	return nil
}

// countedAtCreate are the runs created here with the attempt at their
// first step counted (createRun) that no worker here has read yet.
type countedAtCreate struct {
	mu   sync.Mutex
	runs map[string]bool
}

// maxCountedAtCreate bounds the runs remembered; past it, the oldest are
// forgotten, and their worker saves the attempt again, as before.
const maxCountedAtCreate = 1024

func (c *countedAtCreate) put(runID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.runs == nil || len(c.runs) >= maxCountedAtCreate {
		c.runs = map[string]bool{}
	}
	c.runs[runID] = true
}

// take reports (and forgets) whether the run was created here with its
// first attempt counted.
func (c *countedAtCreate) take(runID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	ok := c.runs[runID]
	delete(c.runs, runID)
	return ok
}

// adoptCreatedAttempt marks r, a worker's first read under its lease, as
// carrying a counted attempt at its step (attemptSaved) when it is the
// run as this process created it with that attempt: still version 1 (no
// one saved it since, so no worker started the step: a worker counts and
// saves its attempt before it starts), the attempt at its step the first.
// The worker then runs the step without saving the attempt again. Any
// other read of the run is left as it is (its attempt is counted anew).
func (e *Engine) adoptCreatedAttempt(r *Run) {
	if !e.countedAtCreate.take(r.ID) {
		return
	}
	if r.Version == 1 && r.Status == StatusRunning && r.Attempt.Step == r.Step && r.Attempt.N == 1 {
		r.attemptSaved = true
	}
}
