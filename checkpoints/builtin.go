package checkpoints

import "time"

// IDs (and control types) of the built-in checkpoint definitions.
const (
	PlanReview     = "plan_review"     // after planning: approve, edit or reject the research plan
	SourceReview   = "source_review"   // after search: choose and exclude sources, or ask for another round
	DraftReview    = "draft_review"    // before output: review the draft before it is published
	CriticalIssues = "critical_issues" // after review: the reviewer found critical issues
	Clarify        = "clarify"         // before the plan is shown: the planner's clarifying questions
)

// MaxClarifyingQuestions is how many clarifying questions the clarify
// checkpoint asks at most, one answer field each.
const MaxClarifyingQuestions = 3

// ClarifyTimeout is how long the clarify checkpoint waits for answers
// before it is skipped: the run plans on its stated assumptions.
const ClarifyTimeout = time.Hour

// Builtins returns the five built-in definitions, enabled, with CreatedAt and
// UpdatedAt set to now. Each call returns fresh values the caller may change.
//
// The source_review fields relevant and exclude have RuntimeOptions: their
// options are the sources of the run, filled in when the instance is made.
// So does draft_review's readings: one option per side of each place where
// the sources disagree ("1a", "1b", …); a run without disagreements leaves
// it and reading_note out.
//
// clarify is offered only when the planner found the question ambiguous:
// its answer fields are labelled with the planner's questions when the
// instance is made, and unused ones are left out. Its one decision is Edit
// ("Answer"); being optional it may be skipped, and the run then plans on
// its stated assumptions, which is also what its timeout does (an
// optional checkpoint that times out is skipped).
func Builtins(now time.Time) []Definition {
	defs := []Definition{
		{
			ID:          PlanReview,
			ControlType: PlanReview,
			Label:       "Research plan",
			Description: "Review the research plan before anything is searched: the sub-questions, the search queries, the expected sections and the depth.",
			Position:    AfterPlanning,
			SortOrder:   10,
			Modes:       []string{ModeGuided, ModeFull},
			Required:    true,
			Timeout:     24 * time.Hour,
			MaxRetries:  3,
			Fields: []Field{
				{Key: KeySubQuestions, Type: FieldTextarea, Label: "Sub-questions, one per line", Required: true},
				{Key: KeyQueries, Type: FieldTextarea, Label: "Search queries, one per line as `type: query` where type is web, academic or news", Required: true, Placeholder: "web: …"},
				{Key: KeySections, Type: FieldTextarea, Label: "Expected report sections, one per line"},
				{Key: KeyDepth, Type: FieldSelect, Label: "Depth", Default: "standard", Options: []Option{
					{Value: "quick", Label: "Quick"},
					{Value: "standard", Label: "Standard"},
					{Value: "comprehensive", Label: "Comprehensive"},
				}},
				{Key: KeyNote, Type: FieldTextarea, Label: "Anything the researcher should know"},
			},
		},
		{
			ID:          SourceReview,
			ControlType: SourceReview,
			Label:       "Sources",
			Description: "Review the ranked sources before they are read: mark the relevant ones, exclude the ones to drop, or ask for another search round.",
			Position:    AfterSearch,
			SortOrder:   10,
			Modes:       []string{ModeFull},
			Required:    true,
			Timeout:     24 * time.Hour,
			MaxRetries:  3,
			Fields: []Field{
				{Key: KeyRelevant, Type: FieldMultiSelect, Label: "Relevant sources", RuntimeOptions: true},
				{Key: KeyExclude, Type: FieldMultiSelect, Label: "Sources to exclude", RuntimeOptions: true},
				{Key: KeyFeedback, Type: FieldTextarea, Label: "Feedback for another search round; leave empty to continue"},
			},
		},
		{
			ID:          CriticalIssues,
			ControlType: CriticalIssues,
			Label:       "Critical issues found",
			Description: "The reviewer found critical issues in the draft: say how the writer should fix them.",
			Position:    AfterReview,
			SortOrder:   10,
			Modes:       []string{ModeGuided, ModeFull},
			Required:    false,
			Timeout:     2 * time.Hour,
			MaxRetries:  1,
			Fields: []Field{
				{Key: KeyGuidance, Type: FieldTextarea, Label: "How should the writer fix these issues?"},
			},
		},
		{
			ID:          DraftReview,
			ControlType: DraftReview,
			Label:       "Draft review",
			Description: "Review the draft before the report is published.",
			Position:    BeforeOutput,
			SortOrder:   10,
			Modes:       []string{ModeGuided, ModeFull},
			Required:    true,
			Timeout:     48 * time.Hour,
			MaxRetries:  3,
			Fields: []Field{
				{Key: KeyTitle, Type: FieldText, Label: "Title", MaxLength: 200},
				{Key: KeyChanges, Type: FieldTextarea, Label: "Changes you want before publishing"},
				{Key: KeyReadings, Type: FieldCheckbox, Label: "Where sources disagree: the reading the report should take", RuntimeOptions: true},
				{Key: KeyReadingNote, Type: FieldTextarea, Label: "Or say how the report should treat the disagreements"},
			},
		},
		{
			ID:          Clarify,
			ControlType: Clarify,
			Label:       "Clarifying questions",
			Description: "Before the plan: the planner found the question ambiguous or under-specified and asks at most three questions. Answer them, or skip and the run plans on its stated assumptions.",
			Position:    AfterPlanning,
			SortOrder:   1,
			Modes:       []string{ModeGuided, ModeFull},
			Required:    false,
			Timeout:     ClarifyTimeout,
			MaxRetries:  1,
			Actions:     []Action{Edit},
			Fields: []Field{
				{Key: KeyAnswer1, Type: FieldTextarea, Label: "Answer to question 1", MaxLength: 1000},
				{Key: KeyAnswer2, Type: FieldTextarea, Label: "Answer to question 2", MaxLength: 1000},
				{Key: KeyAnswer3, Type: FieldTextarea, Label: "Answer to question 3", MaxLength: 1000},
				{Key: KeyReply, Type: FieldTextarea, Label: "Or answer in your own words", MaxLength: 1000},
			},
		},
	}
	for i := range defs {
		if defs[i].Actions == nil {
			defs[i].Actions = []Action{Approve, Edit, Reject}
		}
		defs[i].BreakerThreshold = 5
		defs[i].BreakerWindow = time.Hour
		defs[i].Enabled = true
		defs[i].CreatedAt = now
		defs[i].UpdatedAt = now
	}
	return defs
}
