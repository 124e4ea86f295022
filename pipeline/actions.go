package pipeline

import (
	"context"
	"encoding/json"
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
		if err := inst.Skip(e.cfg.Clock.Now(), by, "skipped by "+by); err != nil {
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
		r.trace(e.cfg.Clock.Now(), r.Step, "checkpoint %s: %s asked to show it again", inst.DefinitionID, by)
		return nil
	})
}

// ContinueWithout is an admin's "continue without it": the run's current
// checkpoint, a required one that could not be shown after its retries, or
// one nobody decided through all its reminders, or one offered again
// because its earlier decision was lost with the store's writes
// (OfferLostAgain), is passed over, and the
// report says so among its caveats. Callers check that admin is an admin.
func (e *Engine) ContinueWithout(ctx context.Context, instanceID, admin string) (*Run, error) {
	return e.changeCurrent(ctx, instanceID, func(r *Run, inst *checkpoints.Instance) error {
		stopped := inst.State == checkpoints.StateTimedOut && !inst.RemindersStoppedAt.IsZero()
		if r.Stranded != inst.ID && !stopped && !r.LostAt(inst) {
			return ErrNotStranded
		}
		reason := "it could not be shown: " + inst.LastError
		note := fmt.Sprintf("The required %s checkpoint could not be shown (%s); %s, an admin, continued without it.", inst.Label, flatLine(inst.LastError), admin)
		switch {
		case r.Stranded == inst.ID:
		case r.LostAt(inst) && !stopped:
			reason = "its earlier decision was lost when the bot's storage was restored"
			note = fmt.Sprintf("The decision on the required %s checkpoint was lost when the bot's storage was restored; %s, an admin, continued without it.", inst.Label, admin)
		default:
			reason = fmt.Sprintf("nobody decided it through all its reminders (%d)", inst.Reminded)
			note = fmt.Sprintf("Nobody decided the required %s checkpoint through all its reminders (%d); %s, an admin, continued without it.", inst.Label, inst.Reminded, admin)
		}
		waive := inst.Waive
		if r.LostAt(inst) && r.Stranded != inst.ID && !stopped {
			waive = inst.WaiveLost
		}
		if err := waive(e.cfg.Clock.Now(), admin, reason); err != nil {
			return err
		}
		r.Stranded = ""
		r.addReviewNote(note)
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

// Choice labels of the checkpoints whose three decisions are three distinct
// choices rather than approve / edit / reject.
const (
	ChoicePublish       = "Publish as it is"
	ChoicePublishCaveat = "Publish with a caveat"
	ChoiceReviseIssues  = "Revise with these issues"
	ChoiceReviseMine    = "Revise with my instructions"
	ChoiceStop          = "Stop and write what you have"
	ChoiceAnswer        = "Answer"
)

// Choices names what each decision does at inst when its three decisions
// are three real choices: the critical issues, and the draft review of a
// draft the reviewer did not pass (DraftPayload.NotPassed). It returns nil
// for every other checkpoint, whose decisions are approve, edit and reject.
// Both presenters label their buttons and prompts, and record a decision,
// with these words.
func Choices(inst *checkpoints.Instance) map[checkpoints.Action]string {
	switch inst.ControlType {
	case checkpoints.Clarify:
		return map[checkpoints.Action]string{checkpoints.Edit: ChoiceAnswer}
	case checkpoints.CriticalIssues:
		return map[checkpoints.Action]string{checkpoints.Approve: ChoicePublish, checkpoints.Edit: ChoiceReviseIssues, checkpoints.Reject: ChoiceStop}
	case checkpoints.DraftReview:
		var p DraftPayload
		if json.Unmarshal(inst.Payload, &p) == nil && p.NotPassed {
			return map[checkpoints.Action]string{checkpoints.Approve: ChoicePublishCaveat, checkpoints.Edit: ChoiceReviseMine, checkpoints.Reject: ChoiceStop}
		}
	}
	return nil
}
