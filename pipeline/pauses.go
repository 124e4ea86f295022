package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/researchbot/researchbot/checkpoints"
)

// Pause is where a run stopped for its checkpoints: the position, the step
// that follows once they are all passed, and the definitions still to ask
// there, in sort order. Each checkpoint is decided, skipped or timed out
// before the next one is made, so each sees the run as the one before left
// it.
type Pause struct {
	Position checkpoints.Position `json:"position"`
	Then     Step                 `json:"then"`
	Queue    []string             `json:"queue,omitempty"`
}

// pause asks the checkpoints that apply at pos, one after another: it makes
// the first one the run's current checkpoint and reports true; with none
// that applies it reports false and the run goes on. r.Step must already
// name the step that follows an approval. When the definitions cannot be
// read, the run goes on without them and its report says so.
func (e *Engine) pause(ctx context.Context, r *Run, pos checkpoints.Position) (bool, error) {
	if r.Mode == checkpoints.ModeAuto {
		return false, nil
	}
	defs, err := e.applicable(ctx, r, pos)
	if err != nil {
		e.withoutCheckpoints(r, pos, err)
		return false, nil
	}
	if pos == checkpoints.AfterPlanning {
		defs = r.clarifyFirst(defs)
	}
	if len(defs) == 0 {
		return false, nil
	}
	p := &Pause{Position: pos, Then: r.Step}
	for _, d := range defs[1:] {
		p.Queue = append(p.Queue, d.ID)
	}
	r.Pause = p
	return true, e.ask(r, defs[0])
}

// applicable returns the enabled definitions at pos for the run's mode whose
// breaker has not tripped, in sort order.
func (e *Engine) applicable(ctx context.Context, r *Run, pos checkpoints.Position) ([]checkpoints.Definition, error) {
	defs, err := e.cfg.Store.Definitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint definitions: %w", err)
	}
	now := e.cfg.Clock.Now()
	tripped := func(id string) bool {
		for _, d := range defs {
			if d.ID != id {
				continue
			}
			fails, err := e.cfg.Store.CheckpointFailures(ctx, id, now, d.BreakerWindow)
			if err != nil {
				return false
			}
			return checkpoints.BreakerTripped(d, fails, now)
		}
		return false
	}
	out := checkpoints.Resolve(defs, pos, r.Mode, tripped)
	if pos == checkpoints.AfterSearch && r.ReviewSources {
		out = withSourceReview(defs, out)
	}
	return out, nil
}

// withSourceReview adds the built-in source review to the definitions at
// after_search of a run that asked for it (a guided run with
// --review-sources), unless it is already there or an admin disabled it.
func withSourceReview(all, out []checkpoints.Definition) []checkpoints.Definition {
	if slices.ContainsFunc(out, func(d checkpoints.Definition) bool { return d.ID == checkpoints.SourceReview }) {
		return out
	}
	i := slices.IndexFunc(all, func(d checkpoints.Definition) bool { return d.ID == checkpoints.SourceReview })
	if i < 0 || !all[i].Enabled {
		return out
	}
	out = append(out, all[i])
	slices.SortStableFunc(out, func(a, b checkpoints.Definition) int {
		if a.SortOrder != b.SortOrder {
			return a.SortOrder - b.SortOrder
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

// withoutCheckpoints records that the checkpoints at pos could not be
// resolved and the run went on without them.
func (e *Engine) withoutCheckpoints(r *Run, pos checkpoints.Position, cause error) {
	now := e.cfg.Clock.Now()
	e.log.Warn("resolving checkpoints failed; going on without them", "run", r.ID, "position", pos, "err", cause)
	r.recordError(now, r.Step, "checkpoint", fmt.Sprintf("the checkpoints at %s could not be loaded: %v", pos, cause))
	r.addReviewNote(fmt.Sprintf("The checkpoints at %s could not be loaded, so nobody was asked there; the run went on without them.", pos))
}

// addReviewNote records, once, something the report must say about how the
// run was reviewed by people.
func (r *Run) addReviewNote(msg string) {
	if !slices.Contains(r.ReviewNotes, msg) {
		r.ReviewNotes = append(r.ReviewNotes, msg)
	}
}

// ask makes an instance of def, with the content of the run's pause
// position, the run's current checkpoint.
func (e *Engine) ask(r *Run, def checkpoints.Definition) error {
	payload, fill, values := r.checkpointContent(r.Pause.Position)
	if def.ID == checkpoints.Clarify {
		payload, fill, values = r.clarifyPayload(), r.clarifyFields, nil
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encode checkpoint payload: %w", err)
	}
	fs := cloneFields(def.Fields)
	if fill != nil {
		fs = fill(fs)
	}
	now := e.cfg.Clock.Now()
	inst := checkpoints.NewInstance(def, newInstanceID(r.ID), r.ID, raw, fs, values, now)
	r.Checkpoints = append(r.Checkpoints, inst)
	if def.ID == checkpoints.Clarify && r.Clarification != nil {
		r.Clarification.InstanceID = inst.ID
	}
	r.Waiting = inst.ID
	r.Status = StatusWaiting
	r.trace(now, r.Step, "checkpoint %s: waiting for a person", def.ID)
	return nil
}

// checkpointContent is what every checkpoint at pos shows and pre-fills:
// the payload, a function that fills the run's options into the form, and
// the values of the built-in fields.
func (r *Run) checkpointContent(pos checkpoints.Position) (any, func([]checkpoints.Field) []checkpoints.Field, map[string]any) {
	switch pos {
	case checkpoints.AfterPlanning:
		return r.planPayload(), nil, r.planValues()
	case checkpoints.AfterSearch:
		return r.sourcesPayload(), r.sourceFields, r.sourceValues()
	case checkpoints.AfterReview:
		return r.criticalPayload(r.lastReview()), nil, nil
	case checkpoints.BeforeOutput:
		var v map[string]any
		if len(r.Drafts) > 0 {
			v = map[string]any{checkpoints.KeyTitle: r.Drafts[len(r.Drafts)-1].Title}
		}
		return r.draftPayload(), r.draftFields, v
	}
	return struct{}{}, nil, nil
}

// askNext makes the next queued checkpoint of the run's pause current and
// reports true, or ends the pause and reports false. The queue is dropped
// when a decision sent the run elsewhere (a rejection, a revision): the
// checkpoints there are asked again when the run comes back.
func (e *Engine) askNext(ctx context.Context, r *Run) (bool, error) {
	p := r.Pause
	r.Pause = nil
	if r.Step != p.Then {
		if len(p.Queue) > 0 {
			r.trace(e.cfg.Clock.Now(), r.Step, "not asked, as the run went to %s: %s", r.Step, strings.Join(p.Queue, ", "))
		}
		return false, nil
	}
	for len(p.Queue) > 0 {
		id := p.Queue[0]
		p.Queue = p.Queue[1:]
		defs, err := e.applicable(ctx, r, p.Position)
		if err != nil {
			e.withoutCheckpoints(r, p.Position, err)
			return false, nil
		}
		i := slices.IndexFunc(defs, func(d checkpoints.Definition) bool { return d.ID == id })
		if i < 0 {
			r.trace(e.cfg.Clock.Now(), r.Step, "checkpoint %s no longer applies; not asked", id)
			continue
		}
		r.Pause = &Pause{Position: p.Position, Then: p.Then, Queue: p.Queue}
		if err := e.ask(r, defs[i]); err != nil {
			return false, err
		}
		return true, e.save(ctx, r)
	}
	return e.reviewUnpassedDraft(ctx, r, p)
}

// reviewUnpassedDraft asks the draft review when the critical issues of a
// draft the reviewer did not pass were passed over without a decision
// (skipped, or timed out): a person still judges that draft before a
// partial report (pauseAfterReview). It reports whether it asked.
func (e *Engine) reviewUnpassedDraft(ctx context.Context, r *Run, p *Pause) (bool, error) {
	if p.Position != checkpoints.AfterReview || r.Step != StepFallback || len(r.Checkpoints) == 0 || r.Checkpoints[len(r.Checkpoints)-1].Decision != nil {
		return false, nil
	}
	if _, ok := r.unpassedDraft(); !ok {
		return false, nil
	}
	reason := r.FallbackReason
	r.FallbackReason, r.Step = "", StepOutput
	waiting, err := e.pause(ctx, r, checkpoints.BeforeOutput)
	if err != nil {
		return false, err
	}
	if !waiting {
		r.toFallback(reason)
		return false, nil
	}
	return true, e.save(ctx, r)
}

// leaveCheckpoint clears the run's current checkpoint: the run goes on (to
// the next checkpoint of its pause, or its next step).
func (r *Run) leaveCheckpoint() {
	r.Waiting = ""
	r.Status = StatusRunning
}

func cloneFields(fs []checkpoints.Field) []checkpoints.Field {
	out := make([]checkpoints.Field, len(fs))
	copy(out, fs)
	return out
}
