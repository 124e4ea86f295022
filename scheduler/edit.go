package scheduler

import (
	"context"
	"errors"
	"fmt"
)

// ErrNameFixed is returned when an edit would rename a stream: a stream's
// name is fixed when it is created.
var ErrNameFixed = errors.New("scheduler: a stream's name cannot be changed")

// StartEdit begins a conversation that edits st: it opens at the review
// with st's current values, every field settled, so Confirm saves them as
// they are and Change lets the owner change any of them.
func StartEdit(st *Stream) (Conversation, Turn) {
	c := Conversation{Step: StepReview, Spec: st.Spec.clone(), Settled: Fields(), Editing: st.ID}
	t := Turn{
		Step:        StepReview,
		Message:     fmt.Sprintf("Here is %q as it is now. Choose Change to edit anything (tell me in your own words), or Confirm to keep it.", st.Spec.Name),
		Suggestions: []string{ReviewConfirm, ReviewChange},
		Review:      c.Spec.ReviewLines(),
		Number:      1,
	}
	c.Last = t
	c.History = []Entry{{Role: "assistant", Step: StepReview, Text: t.Message}}
	return c, t
}

// Edit replaces the spec of the stream with id by spec, in one
// compare-and-set write: every changed field is saved together or none is.
// The owner, creation time and name stay (a new name is ErrNameFixed); the
// digests, what they reported and the policy are kept. A changed schedule
// applies from the next tick: no digest is owed for times of the new
// schedule that passed before the edit. Only the owner or an admin may edit
// (ErrNotAllowed); an invalid spec gives its validation error.
func (s *Service) Edit(ctx context.Context, id, actor string, isAdmin bool, spec Spec) (*Stream, error) {
	var out *Stream
	err := updateStream(ctx, s.cfg.Store, id, func(st *Stream) (bool, error) {
		if !st.CanChange(actor, isAdmin) {
			return false, fmt.Errorf("%w (stream %q belongs to %s)", ErrNotAllowed, st.Spec.Name, st.Owner)
		}
		next := spec.clone()
		if NameKey(next.Name) != NameKey(st.Spec.Name) {
			return false, fmt.Errorf("%w (it is %q)", ErrNameFixed, st.Spec.Name)
		}
		next.Name, next.Owner, next.CreatedAt = st.Spec.Name, st.Spec.Owner, st.Spec.CreatedAt
		if err := next.Validate(); err != nil {
			return false, err
		}
		now := s.cfg.Clock.Now()
		if next.Schedule() != st.Spec.Schedule() && now.After(st.LastFire) {
			// Fires of the new schedule before now are not owed: the
			// next digest is its first time after the edit.
			st.LastFire = now
		}
		st.Spec = next
		st.NextFire = s.nextFire(st, now)
		out = st.Clone()
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	s.log.Info("stream edited", "stream", id, "by", actor)
	return out, nil
}
