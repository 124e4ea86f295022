package scheduler

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// recordingModel replays proposals and keeps the conversations it was shown.
type recordingModel struct {
	proposals []Proposal
	seen      []Conversation
}

func (m *recordingModel) Propose(_ context.Context, c Conversation, _ ConversationAction) (Proposal, error) {
	m.seen = append(m.seen, c)
	if len(m.seen) > len(m.proposals) {
		return Proposal{}, errors.New("script exhausted")
	}
	return m.proposals[len(m.seen)-1], nil
}

// TestValidExtractedDataKeptWhenStepInvalid: when only the next step or the
// choices are wrong, the user's stated values are applied anyway (seed 003
// §3–4); the conversation stays on its step and says what was saved.
func TestValidExtractedDataKeptWhenStepInvalid(t *testing.T) {
	data := []FieldValue{text(FieldStreamName, "Heat Watch"), text(FieldReportFrequency, "weekly")}
	for name, p := range map[string]Proposal{
		"bad next step":             {Mode: ModeQuestion, NextStep: "launch_missiles", ExtractedData: data},
		"suggestions without field": {Mode: ModeSuggestion, NextStep: StepExploration, Suggestions: []string{"x"}, ExtractedData: data},
		"bad mode":                  {Mode: "SHOUT", NextStep: StepExploration, ExtractedData: data},
	} {
		t.Run(name, func(t *testing.T) {
			c := start(t)
			c2, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "Call it Heat Watch, weekly please"}, p)
			var pe *ProposalError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a ProposalError", err)
			}
			if !slices.Equal(pe.Kept, []SpecField{FieldStreamName, FieldReportFrequency}) {
				t.Errorf("kept %v", pe.Kept)
			}
			if c2.Spec.Name != "Heat Watch" || c2.Spec.Frequency != Weekly || !c2.IsSettled(FieldStreamName) || c2.Step != StepExploration {
				t.Errorf("valid data lost: name %q frequency %q step %q", c2.Spec.Name, c2.Spec.Frequency, c2.Step)
			}
			if !strings.HasPrefix(turn.Message, "Saved ") || !strings.Contains(turn.Message, FieldStreamName.Label()) || turn.Step != StepExploration {
				t.Errorf("turn %+v", turn)
			}
		})
	}
	// Invalid extracted data still spoils all of it.
	c2, _, err := Apply(start(t), ConversationAction{Kind: ActionTextInput, Text: "x"},
		Proposal{Mode: ModeQuestion, NextStep: "nowhere", ExtractedData: []FieldValue{text(FieldStreamName, "Ok"), text(FieldStreamType, "astrological")}})
	var pe *ProposalError
	if !errors.As(err, &pe) || len(pe.Kept) != 0 || c2.Spec.Name != "" {
		t.Errorf("invalid data applied: %v kept %v name %q", err, pe, c2.Spec.Name)
	}
}

// TestAdvanceRetriesInvalidProposalOnce: an invalid proposal is answered by
// asking the model once more with the problems; a valid second answer moves
// the conversation on.
func TestAdvanceRetriesInvalidProposalOnce(t *testing.T) {
	m := &recordingModel{proposals: []Proposal{
		{Mode: ModeQuestion, NextStep: "launch_missiles", ExtractedData: []FieldValue{text(FieldPurpose, "Track heat pumps")}},
		{Mode: ModeSuggestion, Message: "Goals?", NextStep: StepBusinessGoals, Options: []string{"Pricing"},
			ExtractedData: []FieldValue{text(FieldPurpose, "Track heat pumps")}},
	}}
	a := ConversationAction{Kind: ActionTextInput, Text: "I want to track heat pumps"}
	c, turn, err := Advance(context.Background(), m, start(t), a)
	if err != nil {
		t.Fatalf("Advance: %v", err)
	}
	if len(m.seen) != 2 || c.Step != StepBusinessGoals || c.Spec.Purpose != "Track heat pumps" || turn.Message != "Goals?" {
		t.Fatalf("%d model calls, step %q, purpose %q, turn %q", len(m.seen), c.Step, c.Spec.Purpose, turn.Message)
	}
	if len(m.seen[0].Rejected) != 0 || len(m.seen[1].Rejected) == 0 || !strings.Contains(m.seen[1].Rejected[0], "launch_missiles") {
		t.Errorf("the problems were not fed back: first %v second %v", m.seen[0].Rejected, m.seen[1].Rejected)
	}
	sys, user := RenderPrompt(m.seen[1], a)
	if !strings.Contains(sys, "YOUR PREVIOUS ANSWER WAS REJECTED") || !strings.Contains(user, "previous_proposal_problems") || !strings.Contains(user, "launch_missiles") {
		t.Errorf("the retry prompt lacks the problems:\n%s\n%s", sys, user)
	}
	if sys0, _ := RenderPrompt(m.seen[0], a); strings.Contains(sys0, "REJECTED") {
		t.Error("the first prompt mentions a rejection")
	}
	if len(c.Rejected) != 0 {
		t.Errorf("the stored conversation carries the problems: %v", c.Rejected)
	}

	// Two invalid answers: no third call; the valid data is kept.
	m = &recordingModel{proposals: []Proposal{
		{Mode: ModeQuestion, NextStep: "nowhere", ExtractedData: []FieldValue{text(FieldPurpose, "Track heat pumps")}},
		{Mode: ModeQuestion, NextStep: "still_nowhere", ExtractedData: []FieldValue{text(FieldPurpose, "Track heat pumps")}},
	}}
	c, _, err = Advance(context.Background(), m, start(t), a)
	if !errors.Is(err, ErrInvalidProposal) || len(m.seen) != 2 || c.Spec.Purpose != "Track heat pumps" {
		t.Errorf("two bad answers: %v, %d calls, purpose %q", err, len(m.seen), c.Spec.Purpose)
	}
}

// TestStaleTurnControlsRefused: a button from an older turn is refused, even
// when its value is still on offer, so an old Skip cannot skip the current
// step; the current turn's buttons, and unnumbered ones, work.
func TestStaleTurnControlsRefused(t *testing.T) {
	c, first := BeginConversation("U0OWNER", "C0CREATED", "UTC", testNow)
	if first.Number != 1 || c.Last.Number != 1 {
		t.Fatalf("first turn number %d", first.Number)
	}
	c, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "watch heat pumps"},
		Proposal{Mode: ModeSuggestion, NextStep: StepCompetitors, Options: []string{"Acme"}})
	if err != nil || turn.Number != 2 || c.Last.Number != 2 || !turn.Skippable {
		t.Fatalf("second turn %+v: %v", turn, err)
	}
	// An old button (turn 1) is stale.
	if _, _, err := Apply(c, ConversationAction{Kind: ActionSkipStep, Turn: 1}, goTo(StepExploration)); !errors.Is(err, ErrStaleChoice) {
		t.Errorf("stale skip: %v", err)
	}
	if _, _, err := Apply(c, ConversationAction{Kind: ActionOptionsSelected, Values: []string{"Acme"}, Turn: 1}, goTo(StepExploration)); !errors.Is(err, ErrStaleChoice) {
		t.Errorf("stale options: %v", err)
	}
	// The current turn's Skip works, and numbers the next turn.
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionSkipStep, Turn: 2}, goTo(StepExploration))
	if err != nil || !c2.IsSettled(FieldCompetitors) || turn.Number != 3 {
		t.Fatalf("current skip: %v %+v", err, turn)
	}
	// Now the competitors turn's Skip is old: it cannot skip the new step.
	c3 := c2
	c3.Step = StepWeekday
	if _, _, err := Apply(c3, ConversationAction{Kind: ActionSkipStep, Turn: 2}, goTo(StepExploration)); !errors.Is(err, ErrStaleChoice) {
		t.Errorf("old skip on a new step: %v", err)
	}
	// Unnumbered controls (posted before numbering) are not checked.
	if _, _, err := Apply(c, ConversationAction{Kind: ActionSkipStep}, goTo(StepExploration)); err != nil {
		t.Errorf("unnumbered skip: %v", err)
	}
}
