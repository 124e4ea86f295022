package pipeline

// What a run composes from its pages, as its record holds it: the analysis,
// the drafts, the reviewer's critiques and people's feedback.

import "time"

// Analysis is the analyst's synthesis of the pages.
type Analysis struct {
	Findings       []Finding       `json:"findings"`
	Themes         []string        `json:"themes"`
	Contradictions []Contradiction `json:"contradictions"`
	Gaps           []string        `json:"gaps"`
	Confidence     float64         `json:"confidence"`
	Sufficiency    string          `json:"sufficiency"` // sufficient, gaps_minor, gaps_major
	// Coverage says, per sub-question of the plan, whether the pages read
	// answer it (seed 002: per-subtopic status and summaries).
	Coverage []Coverage `json:"coverage,omitempty"`
}

// Coverage is how well the pages read answer one sub-question.
type Coverage struct {
	Question string `json:"question"`
	Status   string `json:"status"` // answered, partly, unanswered, or "" when not assessed
	Summary  string `json:"summary,omitempty"`
	Sources  []int  `json:"sources,omitempty"` // fetched source ids that bear on it
}

// Finding is one key finding with the pages (source ids) that support it.
type Finding struct {
	Text    string `json:"text"`
	Sources []int  `json:"sources"`
	// Grade is the evidence behind the finding: strong, moderate, weak or
	// gap (grading.go), the analyst's grade held to what it cites.
	Grade string `json:"grade,omitempty"`
	// Confidence is the high / medium / low of findings recorded before
	// grades (GradeOf reads it).
	Confidence string `json:"confidence,omitempty"`
}

// Draft is one version of the report written by the writer.
type Draft struct {
	Version    int       `json:"version"`
	Title      string    `json:"title"`
	Abstract   string    `json:"abstract"`
	Sections   []Section `json:"sections"`
	Conclusion string    `json:"conclusion"`
	// Notes are the writer's notes on what changed from the previous version.
	Notes []string `json:"notes,omitempty"`
	// Claims are the draft's cited claims with the writer's supporting
	// quotes, each checked in code against the cited page's text.
	Claims []Claim `json:"claims,omitempty"`
	// ClaimsChecked is set when Claims were verified (a draft the writer
	// wrote); a draft assembled from the analysis is not checked.
	ClaimsChecked bool `json:"claims_checked,omitempty"`
	// Diff is what changed from the previous version and why; nil for the
	// first draft.
	Diff      *DraftDiff `json:"diff,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
}

// Section is one section of a draft. Content cites pages as [n] with n a source id.
type Section struct {
	Title     string `json:"title"`
	Content   string `json:"content"`
	Citations []int  `json:"citations"`
}

// Critique is the reviewer's assessment of a draft (seed 001 §3.3).
type Critique struct {
	DraftVersion   int              `json:"draft_version"`
	Criteria       []CriterionScore `json:"criteria"`
	Items          []CritiqueItem   `json:"items"`
	Score          float64          `json:"score"`          // weighted, 0..10, computed in code
	Recommendation string           `json:"recommendation"` // approve, revise, reject, by the decision rules
	Summary        string           `json:"summary"`
	// Human is set when a person's edit or rejection became this critique;
	// By is who it was.
	Human string `json:"human,omitempty"`
	By    string `json:"by,omitempty"`
	// Unsupported counts the draft's claims whose quotes code could not find
	// in the cited sources; each is also one of Items.
	Unsupported int `json:"unsupported,omitempty"`
}

// CriterionScore is the reviewer's 0..10 score on one weighted criterion.
type CriterionScore struct {
	Name    string  `json:"name"`
	Score   float64 `json:"score"`
	Comment string  `json:"comment"`
}

// CritiqueItem is one issue the reviewer found.
type CritiqueItem struct {
	Category     string `json:"category" jsonschema:"enum=accuracy,enum=completeness,enum=coherence,enum=citation,enum=methodology,enum=style"` // accuracy, completeness, coherence, citation, methodology, style
	Severity     string `json:"severity" jsonschema:"enum=critical,enum=major,enum=minor,enum=suggestion"`                                      // critical, major, minor, suggestion
	Location     string `json:"location"`
	Description  string `json:"description"`
	SuggestedFix string `json:"suggested_fix"`
}

// Feedback is a person's note that the next iteration must take into account.
type Feedback struct {
	Checkpoint string    `json:"checkpoint"` // definition id
	Action     string    `json:"action"`
	Text       string    `json:"text"`
	By         string    `json:"by"`
	At         time.Time `json:"at"`
	Used       bool      `json:"used"`
}
