package checkpoints

import (
	"errors"
	"testing"
	"time"
)

func TestReopenLetsAPersonAnswerAfterRemindersRanOut(t *testing.T) {
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	def := Builtins(now)[0]
	def.MaxRetries = 0
	in := NewInstance(def, "r-1.x", "r-1", nil, nil, map[string]any{KeySubQuestions: "Why?", KeyQueries: "web: why"}, now)
	if err := in.Offer(now, "engine"); err != nil {
		t.Fatal(err)
	}
	if err := in.TimeOut(in.DeadlineAt); err != nil {
		t.Fatal(err)
	}
	if err := in.Offer(in.DeadlineAt, "engine"); !errors.Is(err, ErrRetriesExhausted) {
		t.Fatalf("automatic re-offer = %v, want ErrRetriesExhausted", err)
	}
	if err := in.Reopen(in.DeadlineAt.Add(time.Hour), "U1"); err != nil {
		t.Fatalf("Reopen: %v", err)
	}
	if in.State != StateOffered || !in.DeadlineAt.IsZero() {
		t.Fatalf("after Reopen: state %s deadline %v, want offered without deadline", in.State, in.DeadlineAt)
	}
	if err := in.Decide(Decision{Action: Approve, By: "U1", At: now.Add(2 * time.Hour)}); err != nil {
		t.Fatalf("Decide after Reopen: %v", err)
	}
	if err := in.Reopen(now, "U1"); !errors.Is(err, ErrAlreadyDecided) {
		t.Fatalf("Reopen of a decided instance = %v, want ErrAlreadyDecided", err)
	}
}
