package scheduler

// The stream creation workflow's steps and the transitions between them
// (seed 003 §1): which steps exist, which follow which, and which are valid
// in a conversation's state (NextSteps).

import "strings"

// ConversationStep is a step of the stream creation workflow (seed 003 §1).
type ConversationStep string

// The workflow steps. Exploration, review and complete collect no data; every other
// step collects the field of the same name.
const (
	StepExploration      ConversationStep = "exploration"
	StepPurpose          ConversationStep = "purpose"
	StepBusinessGoals    ConversationStep = "business_goals"
	StepExpectedOutcomes ConversationStep = "expected_outcomes"
	StepStreamName       ConversationStep = "stream_name"
	StepStreamType       ConversationStep = "stream_type"
	StepFocusAreas       ConversationStep = "focus_areas"
	StepKeywords         ConversationStep = "keywords"
	StepCompetitors      ConversationStep = "competitors"
	StepReportFrequency  ConversationStep = "report_frequency"
	StepChannel          ConversationStep = "channel"
	StepTimeOfDay        ConversationStep = "time_of_day"
	StepTimeZone         ConversationStep = "time_zone"
	StepWeekday          ConversationStep = "weekday"
	StepMonthDay         ConversationStep = "month_day"
	StepReview           ConversationStep = "review"
	StepComplete         ConversationStep = "complete"
)

// Field returns the field a data step collects, and false for the other steps.
func (s ConversationStep) Field() (SpecField, bool) {
	if _, ok := lookupField(SpecField(s)); ok {
		return SpecField(s), true
	}
	return "", false
}

// IsData reports whether s collects a field.
func (s ConversationStep) IsData() bool {
	_, ok := s.Field()
	return ok
}

// Valid reports whether s is a known step.
func (s ConversationStep) Valid() bool {
	return s == StepExploration || s == StepReview || s == StepComplete || s.IsData()
}

// AllowedTransitions returns the steps the workflow graph allows after from, ignoring
// which fields are already filled (seed 003 §1): from exploration, exploration itself,
// every data step and review; from a data step, exploration, every other data step and
// review; from review, exploration and complete; from complete, nothing. Exploration is
// always reachable except from complete. [Conversation.NextSteps] narrows this to the
// steps valid in a given state.
func AllowedTransitions(from ConversationStep) []ConversationStep {
	switch {
	case from == StepComplete || !from.Valid():
		return nil
	case from == StepReview:
		return []ConversationStep{StepExploration, StepComplete}
	}
	out := []ConversationStep{StepExploration}
	for _, d := range fieldDefs {
		if ConversationStep(d.field) != from {
			out = append(out, ConversationStep(d.field))
		}
	}
	return append(out, StepReview)
}

// NextSteps returns the steps valid after the current one (seed 003 §1): from
// exploration or a data step, exploration, every other data step whose field is
// unsettled and applies to the chosen frequency, and review once every required field
// is filled; from review, exploration and complete; from complete, none. Staying on the
// current step is not a transition and is always accepted (except at complete).
func (c Conversation) NextSteps() []ConversationStep {
	var out []ConversationStep
	for _, s := range AllowedTransitions(c.Step) {
		if f, ok := s.Field(); ok && (c.IsSettled(f) || !c.Spec.relevant(f)) {
			continue
		}
		if s == StepReview && !c.RequiredComplete() {
			continue
		}
		out = append(out, s)
	}
	return out
}

func joinSteps(steps []ConversationStep) string {
	s := make([]string, len(steps))
	for i, st := range steps {
		s[i] = string(st)
	}
	return strings.Join(s, ", ")
}
