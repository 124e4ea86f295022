package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var testNow = time.Date(2026, 1, 7, 15, 4, 5, 0, time.UTC)

func start(t *testing.T) Conversation {
	t.Helper()
	c, _ := BeginConversation("U0OWNER", "C0CREATED", "Europe/London", testNow)
	return c
}

// with returns c with the given fields set and settled, and the step set.
func with(t *testing.T, c Conversation, step ConversationStep, values ...FieldValue) Conversation {
	t.Helper()
	c = c.clone()
	for _, v := range values {
		if err := c.setField(v); err != nil {
			t.Fatalf("set %s: %v", v.Field, err)
		}
	}
	c.Step = step
	c.Last = Turn{Step: step}
	if f, ok := step.Field(); ok {
		c.Last.TargetField = f
	}
	return c
}

func text(f SpecField, v string) FieldValue     { return FieldValue{Field: f, Value: v} }
func list(f SpecField, vs ...string) FieldValue { return FieldValue{Field: f, Values: vs} }
func goTo(step ConversationStep) Proposal {
	return Proposal{Mode: ModeQuestion, Message: "ok", NextStep: step}
}
func suggest(step ConversationStep, s ...string) Proposal {
	return Proposal{Mode: ModeSuggestion, Message: "pick", NextStep: step, Suggestions: s}
}
func offerOptions(step ConversationStep, o ...string) Proposal {
	return Proposal{Mode: ModeSuggestion, Message: "tick", NextStep: step, Options: o}
}

// required returns values for every required field.
func required() []FieldValue {
	return []FieldValue{
		text(FieldPurpose, "Track the competitive landscape for strategic planning"),
		list(FieldBusinessGoals, "Inform study design decisions", "Support partnership discussions"),
		text(FieldExpectedOutcomes, "Go/no-go input for the melanocortin programme"),
		text(FieldStreamName, "Palatin Competitive Intelligence"),
		text(FieldStreamType, "competitive"),
		list(FieldFocusAreas, "Dermatology", "Obesity"),
		list(FieldKeywords, "melanocortin", "MC4R agonist"),
		text(FieldReportFrequency, "weekly"),
	}
}

func complete(t *testing.T) Conversation {
	return with(t, start(t), StepExploration, required()...)
}

func steps(ss ...ConversationStep) []ConversationStep { return ss }

func dataStepsExcept(except ...ConversationStep) []ConversationStep {
	var out []ConversationStep
	for _, f := range Fields() {
		if !slices.Contains(except, ConversationStep(f)) {
			out = append(out, ConversationStep(f))
		}
	}
	return out
}

func TestStartDefaults(t *testing.T) {
	c, turn := BeginConversation("U0OWNER", "C0CREATED", "America/New_York", testNow)
	if c.Step != StepExploration || turn.Step != StepExploration || turn.Message == "" {
		t.Fatalf("start: step %q turn %+v", c.Step, turn)
	}
	s := c.Spec
	if s.Owner != "U0OWNER" || s.Channel != "C0CREATED" || s.TimeZone != "America/New_York" ||
		s.TimeOfDay != "09:00" || s.Weekday != time.Monday || s.MonthDay != 1 || !s.CreatedAt.Equal(testNow) {
		t.Errorf("defaults: %+v", s)
	}
	if len(c.Settled) != 0 {
		t.Errorf("defaults must not be settled: %v", c.Settled)
	}
	if len(c.History) != 1 || c.History[0].Role != "assistant" {
		t.Errorf("history %+v", c.History)
	}

	c, _ = BeginConversation("U0OWNER", "#general", "Not/AZone", testNow)
	if c.Spec.TimeZone != DefaultTimeZone {
		t.Errorf("unknown time zone: got %q, want %q", c.Spec.TimeZone, DefaultTimeZone)
	}
	if c.Spec.Channel != "" || !slices.Contains(c.missing(), FieldChannel) {
		t.Errorf("invalid channel should leave the channel missing: %q %v", c.Spec.Channel, c.missing())
	}
}

func TestAllowedTransitions(t *testing.T) {
	all := dataStepsExcept()
	cases := []struct {
		from ConversationStep
		want []ConversationStep
	}{
		{StepExploration, append(append(steps(StepExploration), all...), StepReview)},
		{StepPurpose, append(append(steps(StepExploration), dataStepsExcept(StepPurpose)...), StepReview)},
		{StepCompetitors, append(append(steps(StepExploration), dataStepsExcept(StepCompetitors)...), StepReview)},
		{StepReportFrequency, append(append(steps(StepExploration), dataStepsExcept(StepReportFrequency)...), StepReview)},
		{StepTimeZone, append(append(steps(StepExploration), dataStepsExcept(StepTimeZone)...), StepReview)},
		{StepReview, steps(StepExploration, StepComplete)},
		{StepComplete, nil},
		{"bogus", nil},
	}
	for _, tc := range cases {
		if got := AllowedTransitions(tc.from); !slices.Equal(got, tc.want) {
			t.Errorf("AllowedTransitions(%q) = %v, want %v", tc.from, got, tc.want)
		}
		if tc.from != StepComplete && tc.from.Valid() && !slices.Contains(AllowedTransitions(tc.from), StepExploration) {
			t.Errorf("exploration must always be reachable from %q", tc.from)
		}
	}
	for _, s := range Steps() {
		if s == StepComplete {
			continue
		}
		if got := AllowedTransitions(s); len(got) == 0 {
			t.Errorf("no transitions from %q", s)
		}
	}
}

func TestNextSteps(t *testing.T) {
	fresh := start(t)
	freshData := dataStepsExcept(StepWeekday, StepMonthDay) // no frequency yet
	cases := []struct {
		name string
		c    Conversation
		want []ConversationStep
	}{
		{"fresh exploration", fresh, append(steps(StepExploration), freshData...)},
		{"purpose step, nothing settled", with(t, fresh, StepPurpose),
			append(steps(StepExploration), dataStepsExcept(StepPurpose, StepWeekday, StepMonthDay)...)},
		{"settled fields are not offered", with(t, fresh, StepKeywords, text(FieldPurpose, "p"), text(FieldStreamName, "n")),
			append(steps(StepExploration), dataStepsExcept(StepPurpose, StepStreamName, StepKeywords, StepWeekday, StepMonthDay)...)},
		{"weekly offers weekday", with(t, fresh, StepExploration, text(FieldReportFrequency, "weekly")),
			append(steps(StepExploration), dataStepsExcept(StepReportFrequency, StepMonthDay)...)},
		{"monthly offers month day", with(t, fresh, StepExploration, text(FieldReportFrequency, "monthly")),
			append(steps(StepExploration), dataStepsExcept(StepReportFrequency, StepWeekday)...)},
		{"all required: review", complete(t),
			steps(StepExploration, StepCompetitors, StepChannel, StepTimeOfDay, StepTimeZone, StepWeekday, StepReview)},
		{"review", with(t, complete(t), StepReview), steps(StepExploration, StepComplete)},
		{"complete", with(t, complete(t), StepComplete), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.NextSteps(); !slices.Equal(got, tc.want) {
				t.Errorf("NextSteps() = %v\nwant %v", got, tc.want)
			}
		})
	}
}

// TestApplyTransitionRules checks every transition rule of seed 003 §1 through Apply.
func TestApplyTransitionRules(t *testing.T) {
	fresh := start(t)
	done := complete(t)
	cases := []struct {
		name  string
		c     Conversation
		next  ConversationStep
		valid bool
	}{
		{"exploration stays", fresh, StepExploration, true},
		{"exploration to data step", fresh, StepPurpose, true},
		{"exploration to optional data step", fresh, StepCompetitors, true},
		{"exploration to review before required fields", fresh, StepReview, false},
		{"exploration to complete", fresh, StepComplete, false},
		{"exploration to review when complete", done, StepReview, true},
		{"exploration to settled data step", done, StepPurpose, false},
		{"exploration to weekday when daily", with(t, fresh, StepExploration, text(FieldReportFrequency, "daily")), StepWeekday, false},
		{"data step to exploration", with(t, fresh, StepPurpose), StepExploration, true},
		{"data step to other data step", with(t, fresh, StepPurpose), StepBusinessGoals, true},
		{"data step stays", with(t, fresh, StepPurpose), StepPurpose, true},
		{"data step to settled data step", with(t, fresh, StepKeywords, text(FieldPurpose, "p")), StepPurpose, false},
		{"data step to review before required fields", with(t, fresh, StepKeywords), StepReview, false},
		{"data step to review when complete", with(t, done, StepCompetitors), StepReview, true},
		{"data step to complete", with(t, done, StepCompetitors), StepComplete, false},
		{"review to complete", with(t, done, StepReview), StepComplete, true},
		{"review to exploration", with(t, done, StepReview), StepExploration, true},
		{"review stays", with(t, done, StepReview), StepReview, true},
		{"review to data step", with(t, done, StepReview), StepCompetitors, false},
		{"unknown step", fresh, "launch_missiles", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := goTo(tc.next)
			if f, ok := tc.next.Field(); ok {
				p = Proposal{Mode: ModeSuggestion, Message: "ok", TargetField: f, NextStep: tc.next}
			}
			c2, turn, err := Apply(tc.c, ConversationAction{Kind: ActionTextInput, Text: "hello"}, p)
			if tc.valid {
				if err != nil {
					t.Fatalf("valid transition refused: %v", err)
				}
				if c2.Step != tc.next || turn.Step != tc.next {
					t.Errorf("step %q / turn %q, want %q", c2.Step, turn.Step, tc.next)
				}
				return
			}
			if !errors.Is(err, ErrInvalidProposal) {
				t.Fatalf("invalid transition accepted: err=%v step=%q", err, c2.Step)
			}
			if c2.Step != tc.c.Step || turn.Step != tc.c.Step {
				t.Errorf("did not stay put: step %q turn %q, want %q", c2.Step, turn.Step, tc.c.Step)
			}
			if !strings.Contains(turn.Message, "Sorry") {
				t.Errorf("no helpful message: %q", turn.Message)
			}
		})
	}
}

func TestEmptyNextStepStays(t *testing.T) {
	c := with(t, start(t), StepPurpose)
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "why do you ask?"},
		Proposal{Mode: ModeQuestion, Message: "Because it guides the search."})
	if err != nil || c2.Step != StepPurpose || turn.Message != "Because it guides the search." {
		t.Errorf("got %q %q %v", c2.Step, turn.Message, err)
	}
}

func TestOptionSelectedForCurrentStep(t *testing.T) {
	c := with(t, start(t), StepStreamType)
	c.Last.Suggestions = []string{"competitive", "regulatory"}
	if !NeedsModel(c, ConversationAction{Kind: ActionOptionSelected, Value: "competitive"}) {
		t.Fatal("a data step selection needs the model to choose the next step")
	}
	sys, _ := RenderPrompt(c, ConversationAction{Kind: ActionOptionSelected, Value: "competitive"})
	if !strings.Contains(sys, "The field 'stream_type' has been settled") {
		t.Errorf("prompt does not say the step just completed:\n%s", sys)
	}
	if valid := promptLine(sys, "Valid next steps you can transition to: "); slices.Contains(strings.Split(valid, ", "), "stream_type") ||
		!slices.Contains(strings.Split(valid, ", "), "stream_name") {
		t.Errorf("valid next steps after settling stream_type: %q", valid)
	}
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionOptionSelected, Value: "competitive"}, suggest(StepStreamName,
		"Palatin Competitive Intelligence", "Palatin Research Monitor"))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Spec.Type != TypeCompetitive || !c2.IsSettled(FieldStreamType) {
		t.Errorf("stream type not set: %+v", c2.Spec)
	}
	if c2.Step != StepStreamName || turn.TargetField != FieldStreamName || len(turn.Suggestions) != 2 || turn.Skippable {
		t.Errorf("turn %+v", turn)
	}
	if c.Spec.Type != "" {
		t.Error("Apply modified its input")
	}
}

// promptLine returns the rest of the prompt line starting with prefix.
func promptLine(prompt, prefix string) string {
	for line := range strings.Lines(prompt) {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

func TestOptionSelectedStaleOrUnknown(t *testing.T) {
	c := with(t, start(t), StepStreamType)
	c.Last.Suggestions = []string{"competitive", "regulatory"}
	for _, a := range []ConversationAction{
		{Kind: ActionOptionSelected, Value: "clinical"}, // valid type, but not on offer
		{Kind: ActionOptionSelected, Value: ""},
		{Kind: ActionOptionsSelected, Values: []string{"competitive"}}, // no checkboxes offered
	} {
		c2, turn, err := Apply(c, a, goTo(StepExploration))
		if !errors.Is(err, ErrStaleChoice) {
			t.Errorf("%+v: err %v, want ErrStaleChoice", a, err)
		}
		if !reflect.DeepEqual(c2, c) || turn.Message == "" || turn.Step != StepStreamType {
			t.Errorf("%+v: conversation changed or no message: %+v", a, turn)
		}
		if NeedsModel(c, a) {
			t.Errorf("%+v: refused action must not need the model", a)
		}
	}
}

func TestOptionSelectedForAnotherField(t *testing.T) {
	// In exploration the model offered report frequencies; the user clicks one.
	c := start(t)
	c.Last = Turn{Step: StepExploration, TargetField: FieldReportFrequency, Suggestions: []string{"weekly", "monthly"}}
	c2, _, err := Apply(c, ConversationAction{Kind: ActionOptionSelected, Value: "monthly"}, goTo(StepMonthDay))
	if err != nil {
		t.Fatal(err)
	}
	if c2.Spec.Frequency != Monthly || c2.Step != StepMonthDay {
		t.Errorf("frequency %q step %q", c2.Spec.Frequency, c2.Step)
	}
	sys, _ := RenderPrompt(c, ConversationAction{Kind: ActionOptionSelected, Value: "monthly"})
	if strings.Contains(sys, "has been settled") {
		t.Error("a selection outside a data step must not be reported as completing it")
	}
}

func TestOptionSelectedSuggestionForListField(t *testing.T) {
	c := with(t, start(t), StepCompetitors)
	c.Last.Suggestions = []string{"Palatin Technologies"}
	c2, _, err := Apply(c, ConversationAction{Kind: ActionOptionSelected, Value: "Palatin Technologies"}, goTo(StepExploration))
	if err != nil || !slices.Equal(c2.Spec.Competitors, []string{"Palatin Technologies"}) {
		t.Errorf("competitors %v, %v", c2.Spec.Competitors, err)
	}
}

func TestOptionsSelected(t *testing.T) {
	c := with(t, start(t), StepFocusAreas)
	c.Last.Options = []string{"Oncology", "Cardiology", "Dermatology"}
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionOptionsSelected, Values: []string{"Oncology", "Cardiology"}},
		offerOptions(StepKeywords, "MC4R", "melanocortin", "bremelanotide"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c2.Spec.FocusAreas, []string{"Oncology", "Cardiology"}) || !c2.IsSettled(FieldFocusAreas) {
		t.Errorf("focus areas %v", c2.Spec.FocusAreas)
	}
	if turn.Step != StepKeywords || len(turn.Options) != 3 || turn.TargetField != FieldKeywords {
		t.Errorf("turn %+v", turn)
	}

	_, _, err = Apply(c, ConversationAction{Kind: ActionOptionsSelected, Values: []string{"Oncology", "Astrology"}}, goTo(StepExploration))
	if !errors.Is(err, ErrStaleChoice) {
		t.Errorf("value not on offer: %v", err)
	}
	_, turn, err = Apply(c, ConversationAction{Kind: ActionOptionsSelected}, goTo(StepExploration))
	if !errors.Is(err, ErrEmptyInput) || !strings.Contains(turn.Message, "at least one") {
		t.Errorf("nothing ticked: %v %q", err, turn.Message)
	}
}

func TestTextInput(t *testing.T) {
	c := start(t)
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "I want to monitor Palatin Technologies"}, Proposal{
		Mode:     ModeQuestion,
		Message:  "What aspects of Palatin Technologies are you interested in monitoring?",
		NextStep: StepExploration,
	})
	if err != nil || c2.Step != StepExploration || turn.Suggestions != nil {
		t.Fatalf("%v %q %+v", err, c2.Step, turn)
	}
	if n := len(c2.History); n != 3 || c2.History[1].Role != "user" || c2.History[2].Role != "assistant" {
		t.Errorf("history %+v", c2.History)
	}
	if _, _, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "  \n "}, goTo(StepExploration)); !errors.Is(err, ErrEmptyInput) {
		t.Errorf("blank text: %v", err)
	}
	if _, _, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: strings.Repeat("x", MaxInputLen+1)}, goTo(StepExploration)); !errors.Is(err, ErrInputTooLong) {
		t.Errorf("long text: %v", err)
	}
}

func TestSkipStep(t *testing.T) {
	c := with(t, start(t), StepCompetitors)
	c.Last.Skippable = true
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionSkipStep}, goTo(StepReportFrequency))
	if err != nil {
		t.Fatalf("optional competitors not skippable: %v", err)
	}
	if !c2.IsSettled(FieldCompetitors) || len(c2.Spec.Competitors) != 0 || c2.Step != StepReportFrequency {
		t.Errorf("after skip: %+v", c2)
	}
	// A choice step with no suggestions from the model gets its fixed choices.
	if !slices.Equal(turn.Suggestions, []string{"daily", "weekly", "biweekly", "monthly"}) {
		t.Errorf("frequency suggestions %v", turn.Suggestions)
	}

	// Defaulted fields keep their default when skipped.
	c = with(t, start(t), StepTimeOfDay)
	c2, _, err = Apply(c, ConversationAction{Kind: ActionSkipStep}, goTo(StepExploration))
	if err != nil || c2.Spec.TimeOfDay != "09:00" || !c2.IsSettled(FieldTimeOfDay) {
		t.Errorf("skip time of day: %v %q", err, c2.Spec.TimeOfDay)
	}
}

func TestSkipRequiredFieldRefused(t *testing.T) {
	for _, step := range []ConversationStep{StepPurpose, StepBusinessGoals, StepStreamType, StepKeywords, StepReportFrequency} {
		c := with(t, start(t), step)
		c2, turn, err := Apply(c, ConversationAction{Kind: ActionSkipStep}, goTo(StepExploration))
		if !errors.Is(err, ErrRequiredField) {
			t.Errorf("%s: err %v, want ErrRequiredField", step, err)
		}
		var ae *ActionError
		if !errors.As(err, &ae) || !strings.Contains(ae.Message, "required") || turn.Message != ae.Message {
			t.Errorf("%s: unclear message %q / %q", step, turn.Message, err)
		}
		if !reflect.DeepEqual(c2, c) {
			t.Errorf("%s: conversation changed", step)
		}
	}
	if _, _, err := Apply(start(t), ConversationAction{Kind: ActionSkipStep}, Proposal{}); !errors.Is(err, ErrNothingToSkip) {
		t.Errorf("skip in exploration: %v", err)
	}
	// A defaulted field without a value (invalid channel at start) cannot be skipped.
	c, _ := BeginConversation("U0OWNER", "not-a-channel", "UTC", testNow)
	c = with(t, c, StepChannel)
	if _, _, err := Apply(c, ConversationAction{Kind: ActionSkipStep}, Proposal{}); !errors.Is(err, ErrRequiredField) {
		t.Errorf("skip channel without default: %v", err)
	}
}

func TestUnknownActionAndFinished(t *testing.T) {
	if _, _, err := Apply(start(t), ConversationAction{Kind: "dance"}, Proposal{}); !errors.Is(err, ErrUnknownAction) {
		t.Errorf("unknown action: %v", err)
	}
	done := with(t, complete(t), StepComplete)
	for _, k := range []ActionKind{ActionTextInput, ActionOptionSelected, ActionOptionsSelected, ActionSkipStep} {
		if _, _, err := Apply(done, ConversationAction{Kind: k, Text: "hi"}, goTo(StepExploration)); !errors.Is(err, ErrFinished) {
			t.Errorf("%s after complete: %v", k, err)
		}
	}
}

func TestInvalidProposalsRejected(t *testing.T) {
	base := with(t, start(t), StepPurpose)
	cases := []struct {
		name string
		p    Proposal
		want string
	}{
		{"bad mode", Proposal{Mode: "SHOUT", NextStep: StepExploration}, "mode"},
		{"bad next step", goTo("launch_missiles"), "not a step"},
		{"transition not allowed", goTo(StepComplete), "not a valid transition"},
		{"unknown field", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text("budget", "1M")}}, "unknown field"},
		{"list field given as text", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldKeywords, "a, b")}}, "list"},
		{"text field given as list", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{list(FieldPurpose, "a", "b")}}, "single value"},
		{"choice out of range", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldStreamType, "astrological")}}, "not one of"},
		{"twice a month is not biweekly", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldReportFrequency, "twice a month")}}, "not one of"},
		{"bad time", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldTimeOfDay, "9am")}}, "HH:MM"},
		{"bad zone", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldTimeZone, "Eastern")}}, "IANA"},
		{"bad month day", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldMonthDay, "32")}}, "1 to 31"},
		{"empty value", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldPurpose, " ")}}, "empty"},
		{"duplicate field", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldPurpose, "a"), text(FieldPurpose, "b")}}, "twice"},
		{"hallucinated channel", Proposal{Mode: ModeQuestion, NextStep: StepExploration,
			ExtractedData: []FieldValue{text(FieldChannel, "C0SECRET")}}, "not mentioned"},
		{"target does not match step", Proposal{Mode: ModeSuggestion, NextStep: StepKeywords,
			TargetField: FieldFocusAreas, Options: []string{"x"}}, "does not match"},
		{"unknown target", Proposal{Mode: ModeSuggestion, NextStep: StepExploration,
			TargetField: "mood", Suggestions: []string{"x"}}, "not a field"},
		{"options for a single-valued field", Proposal{Mode: ModeSuggestion, NextStep: StepStreamName,
			Options: []string{"A", "B"}}, "only for list fields"},
		{"suggestions without target", Proposal{Mode: ModeSuggestion, NextStep: StepExploration,
			Suggestions: []string{"x"}}, "need a target_field"},
		// One bad item spoils the whole proposal: the valid purpose is not applied either.
		{"all or nothing", Proposal{Mode: ModeQuestion, NextStep: StepBusinessGoals,
			ExtractedData: []FieldValue{text(FieldPurpose, "valid purpose"), text("nonsense", "x")}}, "unknown field"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c2, turn, err := Apply(base, ConversationAction{Kind: ActionTextInput, Text: "my purpose is X"}, tc.p)
			var pe *ProposalError
			if !errors.As(err, &pe) || !errors.Is(err, ErrInvalidProposal) {
				t.Fatalf("err = %v, want a ProposalError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if c2.Step != StepPurpose || turn.Step != StepPurpose {
				t.Errorf("did not stay put: %q", c2.Step)
			}
			if !reflect.DeepEqual(c2.Spec, base.Spec) || !slices.Equal(c2.Settled, base.Settled) {
				t.Errorf("spec changed by an invalid proposal: %+v", c2.Spec)
			}
			if !strings.HasPrefix(turn.Message, "Sorry") || !strings.Contains(turn.Message, "purpose") ||
				turn.TargetField != FieldPurpose {
				t.Errorf("unhelpful stay turn %+v", turn)
			}
			if last := c2.History[len(c2.History)-1]; last.Role != "assistant" || last.Text != turn.Message {
				t.Errorf("stay turn not recorded: %+v", last)
			}
		})
	}
}

func TestInvalidProposalKeepsUserSelection(t *testing.T) {
	c := with(t, start(t), StepStreamType)
	c.Last.Suggestions = []string{"competitive", "regulatory"}
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionOptionSelected, Value: "regulatory"}, goTo("nowhere"))
	if !errors.Is(err, ErrInvalidProposal) {
		t.Fatalf("err %v", err)
	}
	if c2.Spec.Type != TypeRegulatory || c2.Step != StepStreamType {
		t.Errorf("user's choice lost or moved: %q %q", c2.Spec.Type, c2.Step)
	}
	if !strings.Contains(turn.Message, "Saved Type") || !strings.Contains(turn.Message, "Still needed") {
		t.Errorf("message %q", turn.Message)
	}
}

func TestInvalidProposalAtReviewShowsReviewAgain(t *testing.T) {
	c := with(t, complete(t), StepReview)
	_, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "hmm"}, goTo(StepPurpose))
	if !errors.Is(err, ErrInvalidProposal) || turn.Step != StepReview ||
		!slices.Equal(turn.Suggestions, []string{ReviewConfirm, ReviewChange}) || len(turn.Review) == 0 {
		t.Errorf("%v %+v", err, turn)
	}
}

// Scenario C of seed 003: the user changes an earlier field by typing.
func TestScenarioCChangeEarlierField(t *testing.T) {
	c := with(t, start(t), StepKeywords, required()[:6]...)
	a := ConversationAction{Kind: ActionTextInput, Text: "Actually, change the purpose to 'Monitor regulatory changes'"}
	c2, turn, err := Apply(c, a, Proposal{
		Mode:          ModeQuestion,
		Message:       `Got it, I've updated the purpose to "Monitor regulatory changes". Now, back to keywords.`,
		ExtractedData: []FieldValue{text(FieldPurpose, "Monitor regulatory changes")},
		NextStep:      StepExploration,
	})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Spec.Purpose != "Monitor regulatory changes" || c2.Step != StepExploration || !strings.Contains(turn.Message, "updated") {
		t.Errorf("purpose %q step %q", c2.Spec.Purpose, c2.Step)
	}
	if c2.Spec.Name != c.Spec.Name || !slices.Equal(c2.Spec.FocusAreas, c.Spec.FocusAreas) {
		t.Error("other fields changed")
	}
	// Keywords is still unsettled, so the conversation can return to it.
	if !slices.Contains(c2.NextSteps(), StepKeywords) {
		t.Errorf("keywords not offered after the detour: %v", c2.NextSteps())
	}
}

// Scenario D: the user answers the current field in text; the model extracts it and moves on.
func TestScenarioDTextAnswersCurrentField(t *testing.T) {
	c := with(t, start(t), StepPurpose)
	a := ConversationAction{Kind: ActionTextInput, Text: "I want to track competitive landscape for strategic planning"}
	c2, turn, err := Apply(c, a, Proposal{
		Mode:          ModeSuggestion,
		TargetField:   FieldBusinessGoals,
		Message:       "Excellent! Now let's define what business goals this will support:",
		Options:       []string{"Inform study design decisions", "Track competitive landscape", "", "Track competitive landscape"},
		ExtractedData: []FieldValue{text(FieldPurpose, "Track competitive landscape for strategic planning")},
		NextStep:      StepBusinessGoals,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !c2.IsSettled(FieldPurpose) || c2.Step != StepBusinessGoals {
		t.Errorf("step %q settled %v", c2.Step, c2.Settled)
	}
	if !slices.Equal(turn.Options, []string{"Inform study design decisions", "Track competitive landscape"}) {
		t.Errorf("options not cleaned: %q", turn.Options)
	}
}

// Scenario B: a step completed, the model needs more context and goes to exploration.
func TestScenarioBDataStepToExploration(t *testing.T) {
	c := with(t, start(t), StepStreamType)
	c.Last.Suggestions = []string{"competitive"}
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionOptionSelected, Value: "competitive"}, Proposal{
		Mode: ModeQuestion, Message: "Great choice! What business decisions will this support?", NextStep: StepExploration,
		Suggestions: []string{"ignored in QUESTION mode"},
	})
	if err != nil || c2.Step != StepExploration || turn.Suggestions != nil || turn.TargetField != "" {
		t.Errorf("%v %q %+v", err, c2.Step, turn)
	}
}

func TestChoiceSuggestionsNormalised(t *testing.T) {
	c := start(t)
	_, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "how often can you post?"},
		suggest(StepReportFrequency, "Weekly", "twice a month", "BIWEEKLY", "weekly"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(turn.Suggestions, []string{"weekly", "biweekly"}) {
		t.Errorf("suggestions %q", turn.Suggestions)
	}
	many := make([]string, 30)
	for i := range many {
		many[i] = strings.Repeat("k", i+1)
	}
	many = append(many, strings.Repeat("x", MaxChoiceLen+1))
	_, turn, err = Apply(c, ConversationAction{Kind: ActionTextInput, Text: "keywords?"}, offerOptions(StepKeywords, many...))
	if err != nil || len(turn.Options) != MaxChoices {
		t.Errorf("options not capped: %d %v", len(turn.Options), err)
	}
}

func TestChannelTimeAndZoneFromText(t *testing.T) {
	c := start(t)
	a := ConversationAction{Kind: ActionTextInput, Text: "Post it in <#C0RESEARCH|research> at 7:30 New York time"}
	c2, _, err := Apply(c, a, Proposal{Mode: ModeQuestion, Message: "Done.", NextStep: StepExploration,
		ExtractedData: []FieldValue{
			text(FieldChannel, "<#C0RESEARCH|research>"),
			text(FieldTimeOfDay, "7:30"),
			text(FieldTimeZone, "America/New_York"),
		}})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Spec.Channel != "C0RESEARCH" || c2.Spec.TimeOfDay != "07:30" || c2.Spec.TimeZone != "America/New_York" {
		t.Errorf("spec %+v", c2.Spec)
	}
	for _, f := range []SpecField{FieldChannel, FieldTimeOfDay, FieldTimeZone} {
		if !c2.IsSettled(f) {
			t.Errorf("%s not settled", f)
		}
	}
}

func TestReviewStep(t *testing.T) {
	c := complete(t)
	c2, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "that's all"},
		Proposal{Mode: ModeQuestion, Message: "", NextStep: StepReview, TargetField: FieldPurpose})
	if err != nil {
		t.Fatal(err)
	}
	if c2.Step != StepReview || !slices.Equal(turn.Suggestions, []string{ReviewConfirm, ReviewChange}) ||
		turn.TargetField != "" || turn.Message == "" {
		t.Fatalf("review turn %+v", turn)
	}
	var got []string
	for _, l := range turn.Review {
		got = append(got, l.Label+": "+l.Value)
	}
	want := []string{
		"Purpose: Track the competitive landscape for strategic planning",
		"Business goals: Inform study design decisions, Support partnership discussions",
		"Expected outcomes: Go/no-go input for the melanocortin programme",
		"Name: Palatin Competitive Intelligence",
		"Type: competitive",
		"Focus areas: Dermatology, Obesity",
		"Keywords: melanocortin, MC4R agonist",
		"Competitors: —",
		"Frequency: weekly",
		"Channel: C0CREATED",
		"Time of day: 09:00",
		"Time zone: Europe/London",
		"Weekday: monday",
		"Schedule: every Monday at 09:00 (Europe/London)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("review lines:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Confirm is deterministic: no model needed, and the proposal is ignored.
	confirm := ConversationAction{Kind: ActionOptionSelected, Value: ReviewConfirm}
	if NeedsModel(c2, confirm) {
		t.Error("Confirm should not need the model")
	}
	c3, turn, err := Apply(c2, confirm, goTo("garbage"))
	if err != nil || c3.Step != StepComplete || turn.Step != StepComplete || !strings.Contains(turn.Message, "Palatin") {
		t.Errorf("confirm: %v %q %q", err, c3.Step, turn.Message)
	}
	if err := c3.Spec.Validate(); err != nil {
		t.Errorf("completed spec invalid: %v", err)
	}

	change := ConversationAction{Kind: ActionOptionSelected, Value: ReviewChange}
	c4, turn, err := Apply(c2, change, Proposal{})
	if err != nil || c4.Step != StepExploration || !strings.Contains(turn.Message, "change") {
		t.Errorf("change: %v %q %q", err, c4.Step, turn.Message)
	}
	if _, _, err := Apply(c2, ConversationAction{Kind: ActionOptionSelected, Value: "Delete everything"}, Proposal{}); !errors.Is(err, ErrStaleChoice) {
		t.Errorf("unknown review button: %v", err)
	}
}

func TestReviewByText(t *testing.T) {
	c := with(t, complete(t), StepReview)
	c2, _, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "looks good"}, goTo(StepComplete))
	if err != nil || c2.Step != StepComplete {
		t.Errorf("confirm by text: %v %q", err, c2.Step)
	}
	// A change and completion in one go is refused: the user must see the new configuration.
	change := ConversationAction{Kind: ActionTextInput, Text: "make it monthly"}
	withChange := Proposal{Mode: ModeQuestion, NextStep: StepComplete, ExtractedData: []FieldValue{text(FieldReportFrequency, "monthly")}}
	if _, _, err := Apply(c, change, withChange); !errors.Is(err, ErrInvalidProposal) {
		t.Errorf("change+complete accepted: %v", err)
	}
	withChange.NextStep = StepReview
	c3, turn, err := Apply(c, change, withChange)
	if err != nil || c3.Spec.Frequency != Monthly || c3.Step != StepReview {
		t.Fatalf("change in review: %v %+v", err, c3.Spec)
	}
	if !slices.ContainsFunc(turn.Review, func(l ReviewLine) bool { return l.Field == FieldMonthDay && l.Value == "1" }) {
		t.Errorf("review not refreshed: %+v", turn.Review)
	}
}

func TestSkippableFlag(t *testing.T) {
	c := start(t)
	for step, want := range map[ConversationStep]bool{StepCompetitors: true, StepPurpose: false, StepChannel: true, StepStreamType: false} {
		p := Proposal{Mode: ModeQuestion, NextStep: step}
		_, turn, err := Apply(c, ConversationAction{Kind: ActionTextInput, Text: "next"}, p)
		if err != nil || turn.Skippable != want {
			t.Errorf("%s: skippable %v, want %v (%v)", step, turn.Skippable, want, err)
		}
	}
}

// scripted is a TurnProposer that replays proposals and records what it was asked.
type scripted struct {
	proposals []Proposal
	calls     int
	err       error
}

func (s *scripted) Propose(_ context.Context, c Conversation, a ConversationAction) (Proposal, error) {
	if s.err != nil {
		return Proposal{}, s.err
	}
	if s.calls >= len(s.proposals) {
		return Proposal{}, errors.New("script exhausted")
	}
	s.calls++
	return s.proposals[s.calls-1], nil
}

func TestAdvanceWholeConversation(t *testing.T) {
	c, _ := BeginConversation("U0OWNER", "C0CREATED", "America/New_York", testNow)
	m := &scripted{proposals: []Proposal{
		{Mode: ModeQuestion, Message: "What aspects of Palatin?", NextStep: StepExploration},
		{Mode: ModeSuggestion, Message: "Purpose?", NextStep: StepPurpose, Suggestions: []string{"Track Palatin's pipeline"}},
		{Mode: ModeSuggestion, Message: "Goals?", NextStep: StepBusinessGoals, Options: []string{"Partnering", "Study design"}},
		{Mode: ModeQuestion, Message: "Outcomes and name noted.", NextStep: StepStreamType, ExtractedData: []FieldValue{
			text(FieldExpectedOutcomes, "Partnering decisions"), text(FieldStreamName, "Palatin Watch")}},
		{Mode: ModeSuggestion, Message: "Focus?", NextStep: StepFocusAreas, Options: []string{"Dermatology", "Obesity"}},
		{Mode: ModeSuggestion, Message: "Keywords?", NextStep: StepKeywords, Options: []string{"MC4R", "bremelanotide"}},
		{Mode: ModeSuggestion, Message: "Competitors?", NextStep: StepCompetitors, Options: []string{"Rhythm"}},
		{Mode: ModeQuestion, Message: "How often?", NextStep: StepReportFrequency},
		{Mode: ModeQuestion, Message: "Which day?", NextStep: StepWeekday},
		{Mode: ModeQuestion, Message: "Here it is.", NextStep: StepReview},
	}}
	actions := []ConversationAction{
		{Kind: ActionTextInput, Text: "I want to monitor Palatin Technologies"},
		{Kind: ActionTextInput, Text: "their pipeline, for partnering"},
		{Kind: ActionOptionSelected, Value: "Track Palatin's pipeline"},
		{Kind: ActionOptionsSelected, Values: []string{"Partnering"}},
		{Kind: ActionOptionSelected, Value: "competitive"},
		{Kind: ActionOptionsSelected, Values: []string{"Dermatology", "Obesity"}},
		{Kind: ActionOptionsSelected, Values: []string{"MC4R"}},
		{Kind: ActionSkipStep},
		{Kind: ActionOptionSelected, Value: "biweekly"},
		{Kind: ActionOptionSelected, Value: "thursday"},
		{Kind: ActionOptionSelected, Value: ReviewConfirm},
	}
	wantSteps := []ConversationStep{StepExploration, StepPurpose, StepBusinessGoals, StepStreamType, StepFocusAreas, StepKeywords,
		StepCompetitors, StepReportFrequency, StepWeekday, StepReview, StepComplete}
	ctx := context.Background()
	for i, a := range actions {
		var turn Turn
		var err error
		c, turn, err = Advance(ctx, m, c, a)
		if err != nil {
			t.Fatalf("action %d %+v: %v", i, a, err)
		}
		if turn.Step != wantSteps[i] {
			t.Fatalf("action %d: step %q, want %q", i, turn.Step, wantSteps[i])
		}
	}
	if m.calls != len(m.proposals) {
		t.Errorf("model called %d times, want %d (Confirm needs no model)", m.calls, len(m.proposals))
	}
	s := c.Spec
	if s.Name != "Palatin Watch" || s.Type != TypeCompetitive || s.Frequency != Biweekly || s.Weekday != time.Thursday ||
		len(s.Competitors) != 0 || s.TimeZone != "America/New_York" || s.Channel != "C0CREATED" {
		t.Errorf("final spec %+v", s)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	first, err := NextFire(s.Schedule(), testNow)
	if err != nil || first.Weekday() != time.Thursday || first.Format("15:04") != "09:00" {
		t.Errorf("first digest %v %v", first, err)
	}

	// The conversation survives a JSON round trip (it is stored between turns).
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back Conversation
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Spec.Schedule().Describe(), c.Spec.Schedule().Describe()) || back.Step != c.Step ||
		!slices.Equal(back.Settled, c.Settled) {
		t.Errorf("round trip lost data")
	}
}

func TestAdvanceModelFailure(t *testing.T) {
	c := start(t)
	c2, turn, err := Advance(context.Background(), &scripted{err: errors.New("503")}, c, ConversationAction{Kind: ActionTextInput, Text: "hi"})
	if !errors.Is(err, ErrModelUnavailable) || !reflect.DeepEqual(c2, c) || !strings.Contains(turn.Message, "try again") {
		t.Errorf("%v %q", err, turn.Message)
	}
}

func TestApplyDoesNotModifyInput(t *testing.T) {
	c := with(t, start(t), StepFocusAreas, required()[:3]...)
	c.Last.Options = []string{"A", "B"}
	before, _ := json.Marshal(c)
	_, _, _ = Apply(c, ConversationAction{Kind: ActionOptionsSelected, Values: []string{"A"}},
		Proposal{Mode: ModeQuestion, NextStep: StepExploration, ExtractedData: []FieldValue{list(FieldBusinessGoals, "X")}})
	after, _ := json.Marshal(c)
	if string(before) != string(after) {
		t.Error("Apply modified its input conversation")
	}
}

func TestHistoryBounded(t *testing.T) {
	c := start(t)
	for range MaxHistory {
		c, _, _ = Apply(c, ConversationAction{Kind: ActionTextInput, Text: "more"}, goTo(StepExploration))
	}
	if len(c.History) != MaxHistory {
		t.Errorf("history %d entries, want %d", len(c.History), MaxHistory)
	}
}

func TestSpecValidateReportsEverything(t *testing.T) {
	s := start(t).Spec
	err := s.Validate()
	if !errors.Is(err, ErrIncompleteSpec) {
		t.Fatalf("err %v", err)
	}
	for _, label := range []string{"Purpose", "Business goals", "Name", "Type", "Keywords", "Frequency"} {
		if !strings.Contains(err.Error(), label) {
			t.Errorf("error does not mention %s: %v", label, err)
		}
	}
	if err := complete(t).Spec.Validate(); err != nil {
		t.Errorf("complete spec: %v", err)
	}
}

// TestProposalFitsStrictSchema checks the structured output type has no maps or
// interfaces and that every JSON field is always present (no omitempty), as strict
// JSON-schema structured output requires.
func TestProposalFitsStrictSchema(t *testing.T) {
	var walk func(reflect.Type, string)
	walk = func(rt reflect.Type, path string) {
		switch rt.Kind() {
		case reflect.Map, reflect.Interface:
			t.Errorf("%s: %s is not allowed in a strict schema", path, rt.Kind())
		case reflect.Slice:
			walk(rt.Elem(), path+"[]")
		case reflect.Struct:
			for i := range rt.NumField() {
				f := rt.Field(i)
				tag := f.Tag.Get("json")
				if tag == "" || tag == "-" || strings.Contains(tag, "omitempty") {
					t.Errorf("%s.%s: json tag %q must name a required field", path, f.Name, tag)
				}
				walk(f.Type, path+"."+f.Name)
			}
		}
	}
	walk(reflect.TypeOf(Proposal{}), "Proposal")

	var p Proposal
	if err := json.Unmarshal([]byte(`{"mode":"SUGGESTION","message":"m","target_field":"keywords",
		"extracted_data":[{"field":"purpose","value":"p","values":[]}],"suggestions":[],"options":["a"],"next_step":"keywords"}`), &p); err != nil {
		t.Fatal(err)
	}
	if p.ExtractedData[0].Field != FieldPurpose || p.NextStep != StepKeywords {
		t.Errorf("decoded %+v", p)
	}
}

func TestTurnDoesNotAliasFieldTable(t *testing.T) {
	_, turn, err := Apply(start(t), ConversationAction{Kind: ActionTextInput, Text: "frequency?"}, goTo(StepReportFrequency))
	if err != nil || len(turn.Suggestions) == 0 {
		t.Fatalf("%v %+v", err, turn)
	}
	turn.Suggestions[0] = "hourly"
	_, turn, _ = Apply(start(t), ConversationAction{Kind: ActionTextInput, Text: "frequency?"}, goTo(StepReportFrequency))
	if turn.Suggestions[0] != "daily" {
		t.Errorf("mutating a turn changed the field table: %v", turn.Suggestions)
	}
}

// Steps lists every step: exploration, the data steps in workflow order, review, complete.
func Steps() []ConversationStep {
	out := []ConversationStep{StepExploration}
	for _, d := range fieldDefs {
		out = append(out, ConversationStep(d.field))
	}
	return append(out, StepReview, StepComplete)
}
