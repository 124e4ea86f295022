package pipeline

// Saving a run: a version-checked save, an update that re-reads the run
// and applies its change again when another writer saved first, and the
// lease holder's read of the run (loadLeased).

import (
	"context"
	"errors"
	"fmt"
)

// maxConflictRetries bounds how often a writer that lost a compare-and-set
// re-reads the run and tries again.
const maxConflictRetries = 8

// loadLeased loads the run for the holder of the lease with this fence.
func (e *Engine) loadLeased(ctx context.Context, runID string, fence int64) (*Run, error) {
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	r.Fence = fence
	return r, nil
}

// save stores r with a version check (and the fence, when r was loaded under
// a lease) and stamps UpdatedAt. A save that lost only to steering notes
// takes them and saves again (rebaseNotes).
func (e *Engine) save(ctx context.Context, r *Run) error {
	if r.Status.Final() || r.Status == StatusInterrupted {
		r.PersonToken = "" // the person's permission lasts as long as their run
	}
	for range MaxSteeringNotes + 1 {
		r.UpdatedAt = e.cfg.Clock.Now()
		err := e.cfg.Store.Save(ctx, r)
		if !errors.Is(err, ErrConflict) || !e.rebaseNotes(ctx, r) {
			return err
		}
	}
	return fmt.Errorf("save run %s: %w", r.ID, ErrConflict)
}

// update applies change to r and saves it; when someone else saved the run
// in between, it re-reads the run (keeping r's fence) and applies change
// again. change reports false when there is nothing to do. r ends up as
// stored.
func (e *Engine) update(ctx context.Context, r *Run, change func(*Run) bool) error {
	for range maxConflictRetries {
		if !change(r) {
			return nil
		}
		err := e.save(ctx, r)
		if !errors.Is(err, ErrConflict) {
			return err
		}
		fresh, err := e.loadLeased(ctx, r.ID, r.Fence)
		if err != nil {
			return err
		}
		*r = *fresh
	}
	return fmt.Errorf("update run %s: %w", r.ID, ErrConflict)
}

// updateLeased is update on a fresh copy of the run.
func (e *Engine) updateLeased(ctx context.Context, runID string, fence int64, change func(*Run) bool) error {
	r, err := e.loadLeased(ctx, runID, fence)
	if err != nil {
		return err
	}
	return e.update(ctx, r, change)
}
