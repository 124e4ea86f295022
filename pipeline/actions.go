package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/researchbot/researchbot/checkpoints"
)

// ErrNotStranded is returned when an admin's "continue without it" names a
// checkpoint that can still be shown (or is optional: skip it instead).
var ErrNotStranded = errors.New("this checkpoint can still be shown: it can be answered or, if optional, skipped")

// Skip passes over the run's current checkpoint because a person chose to
// (optional checkpoints only: a required one refuses with
// checkpoints.ErrCannotSkipRequired). The run goes on to the next
// checkpoint at its position or its next step.
func (e *Engine) Skip(ctx context.Context, instanceID, by string) (*Run, error) {
	return e.changeCurrent(ctx, instanceID, func(r *Run, inst *checkpoints.Instance) error {
		if err := inst.Skip(e.cfg.Now(), by, "skipped by "+by); err != nil {
			return err
		}
		r.Stranded = ""
		return nil
	})
}

// Retry offers a checkpoint that could not be shown once more, because a
// person asked (its automatic retries may be used up).
func (e *Engine) Retry(ctx context.Context, instanceID, by string) (*Run, error) {
	return e.changeCurrent(ctx, instanceID, func(r *Run, inst *checkpoints.Instance) error {
		if err := inst.Retry(); err != nil {
			return err
		}
		r.Stranded = ""
		r.trace(e.cfg.Now(), r.Step, "checkpoint %s: %s asked to show it again", inst.DefinitionID, by)
		return nil
	})
}

// ContinueWithout is an admin's "continue without it": the run's current
// checkpoint, a required one that could not be shown after its retries, is
// passed over, and the report says so among its caveats. Callers check that
// admin is an admin.
func (e *Engine) ContinueWithout(ctx context.Context, instanceID, admin string) (*Run, error) {
	return e.changeCurrent(ctx, instanceID, func(r *Run, inst *checkpoints.Instance) error {
		if r.Stranded != inst.ID {
			return ErrNotStranded
		}
		reason := "it could not be shown: " + inst.LastError
		if err := inst.Waive(e.cfg.Now(), admin, reason); err != nil {
			return err
		}
		r.Stranded = ""
		r.addReviewNote(fmt.Sprintf("The required %s checkpoint could not be shown (%s); %s, an admin, continued without it.", inst.Label, flatLine(inst.LastError), admin))
		return nil
	})
}

// changeCurrent applies change to the run's current checkpoint (named by
// instanceID), saves with a version check, and wakes the run.
func (e *Engine) changeCurrent(ctx context.Context, instanceID string, change func(*Run, *checkpoints.Instance) error) (*Run, error) {
	runID := RunIDOf(instanceID)
	if runID == "" {
		return nil, ErrNotCurrent
	}
	for range maxConflictRetries {
		r, err := e.cfg.Store.Load(ctx, runID)
		if err != nil {
			return nil, err
		}
		inst := r.Instance(instanceID)
		if inst == nil || r.Status.Final() || r.Waiting != instanceID {
			return r, ErrNotCurrent
		}
		if err := change(r, inst); err != nil {
			return r, err
		}
		err = e.save(ctx, r)
		if errors.Is(err, ErrConflict) {
			continue
		}
		if err != nil {
			return r, err
		}
		e.wake(ctx, r)
		return r, nil
	}
	return nil, fmt.Errorf("change checkpoint %s: %w", instanceID, ErrConflict)
}

// CurrentCheckpoint returns the id of the run's current checkpoint instance
// when it is named by its instance id or its definition id.
func (r *Run) CurrentCheckpoint(id string) (string, bool) {
	inst := r.Current()
	if inst == nil || (inst.ID != id && inst.DefinitionID != id) {
		return "", false
	}
	return inst.ID, true
}
