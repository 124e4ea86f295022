package pipeline

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

// ErrCheckpointLost is returned (wrapped) when a checkpoint named by a
// button is unknown to its run though the run still waits for people: the
// checkpoint belonged to a future the store lost (Redis rolled back to an
// older append-only file, or failed over to a replica that was behind).
// It is an ErrNotCurrent: nothing was changed.
var ErrCheckpointLost = fmt.Errorf("this checkpoint was lost when the bot's storage was restored: %w", ErrNotCurrent)

// LostDecision records that the run's stored state went back in time while
// it waits at a checkpoint, so a decision people made after that point was
// lost with it: the checkpoint is offered again, and says so.
type LostDecision struct {
	// Checkpoint is the id of the checkpoint instance offered again.
	Checkpoint string `json:"checkpoint"`
	// At is when the loss was found.
	At time.Time `json:"at"`
	// Evidence says how it was found, for the trace and the logs.
	Evidence string `json:"evidence"`
}

// LostAt reports whether inst is the checkpoint the run offers again
// because an earlier decision on it (or after it) was lost.
func (r *Run) LostAt(inst *checkpoints.Instance) bool {
	return r.LostDecision != nil && inst != nil && r.LostDecision.Checkpoint == inst.ID
}

// OfferLostAgain is told that the run's stored state went back in time
// (evidence says how that was found: a version lower than one seen, or a
// click on a checkpoint the run no longer has). If the run waits at a
// checkpoint, that checkpoint is marked as offered again after a loss and
// handed to a worker to show (the same path as a checkpoint whose showing
// a crash interrupted), so people are asked to decide again. The same
// report twice (same evidence), or one while the re-offer is on its way,
// changes nothing; a later loss (the run went back again, after the
// checkpoint offered again was decided) is marked and offered again. A run
// that does not wait for people needs nothing: its lost steps are done
// again.
//
// Nothing is applied twice: a decision is still recorded by
// compare-and-set on the run's version, and the decision that was lost is
// not in the stored run to be applied.
func (e *Engine) OfferLostAgain(ctx context.Context, runID, evidence string) (*Run, error) {
	for range maxConflictRetries {
		r, err := e.cfg.Store.Load(ctx, runID)
		if err != nil {
			return nil, err
		}
		inst := r.Current()
		if inst == nil || r.Status.Final() {
			return r, nil
		}
		if r.LostAt(inst) && (r.LostDecision.Evidence == evidence || r.Offering == inst.ID) {
			return r, nil // this loss is marked already, or the re-offer is on its way
		}
		switch inst.State {
		case checkpoints.StateOffered, checkpoints.StateActive, checkpoints.StateTimedOut:
			r.Offering = inst.ID // a worker shows it again
		case checkpoints.StatePending, checkpoints.StateFailed:
			// A worker offers it anyway; the mark makes it say why.
		default:
			return r, nil // decided: the decision stored is applied once
		}
		now := e.cfg.Clock.Now()
		r.LostDecision = &LostDecision{Checkpoint: inst.ID, At: now, Evidence: evidence}
		r.trace(now, r.Step, "checkpoint %s offered again: the stored run went back in time (%s), so a later decision was lost", inst.DefinitionID, evidence)
		err = e.save(ctx, r)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return r, err
		}
		e.log.Warn("a checkpoint is offered again: a decision made after it was lost with the store's writes",
			"run", r.ID, "checkpoint", inst.ID, "definition", inst.DefinitionID, "evidence", evidence)
		e.wake(ctx, r)
		return r, nil
	}
	return nil, fmt.Errorf("offer run %s's checkpoint again: %w", runID, ErrConflict)
}

// lostCheckpoint answers an action on instanceID, a checkpoint run r does
// not have. While the run waits for people, such a checkpoint can only come
// from a future the store lost (instance ids are never removed from a
// run): its current checkpoint is offered again (OfferLostAgain) and the
// answer is ErrCheckpointLost. Otherwise it is ErrNotCurrent.
func (e *Engine) lostCheckpoint(ctx context.Context, r *Run, instanceID string) (*Run, error) {
	if r.Status.Final() || r.Current() == nil {
		return r, ErrNotCurrent
	}
	fresh, err := e.OfferLostAgain(ctx, r.ID, "an action on checkpoint "+instanceID+", which the stored run no longer has")
	if err != nil {
		e.log.Warn("could not offer a checkpoint again after a loss", "run", r.ID, "err", err)
		fresh = r
	}
	return fresh, fmt.Errorf("%s: %w", instanceID, ErrCheckpointLost)
}
