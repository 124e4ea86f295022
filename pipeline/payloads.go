package pipeline

import "time"

// The payloads below are what a checkpoint instance carries for rendering
// (checkpoints.Instance.Payload holds one of them as JSON, by ControlType).

// PlanPayload is shown at plan_review.
type PlanPayload struct {
	Question     string      `json:"question"`
	SubQuestions []string    `json:"sub_questions"`
	Queries      []QueryView `json:"queries"`
	Sections     []string    `json:"sections"`
	Methodology  string      `json:"methodology"`
	Warnings     []string    `json:"warnings,omitempty"`
	Estimate     Estimate    `json:"estimate"`
	Round        int         `json:"round"` // 1 for the first plan
}

// QueryView is a query as shown to a person.
type QueryView struct {
	Text string `json:"text"`
	Kind string `json:"kind"`
}

// SourcesPayload is shown at source_review: the ranked sources.
type SourcesPayload struct {
	Question string       `json:"question"`
	Sources  []SourceView `json:"sources"` // best first
	Total    int          `json:"total"`   // sources found, before the cut
	ToFetch  int          `json:"to_fetch"`
	Errors   []string     `json:"errors,omitempty"` // backends that failed
}

// SourceView is one ranked source as shown to a person.
type SourceView struct {
	ID        int       `json:"id"`
	Title     string    `json:"title"`
	URL       string    `json:"url"`
	Domain    string    `json:"domain"`
	Published time.Time `json:"published,omitzero"`
	Gist      string    `json:"gist"`
	Score     float64   `json:"score"`
	Kind      string    `json:"kind"`
	Backend   string    `json:"backend"`
	Selected  bool      `json:"selected"`
	Relevant  bool      `json:"relevant"`
}

// DraftPayload is shown at draft_review.
type DraftPayload struct {
	Version        int      `json:"version"`
	Title          string   `json:"title"`
	Abstract       string   `json:"abstract"`
	Sections       []string `json:"sections"` // titles
	WordCount      int      `json:"word_count"`
	Score          float64  `json:"score"`
	Recommendation string   `json:"recommendation"`
	Summary        string   `json:"summary"` // the reviewer's summary
	Major          int      `json:"major"`
	Minor          int      `json:"minor"`
	Sources        int      `json:"sources"`
	// Markdown is the whole draft, for people who want to read it all.
	Markdown string `json:"markdown"`
	// Claims is how the draft's cited claims fared when code checked their
	// quotes against the sources.
	Claims ClaimSummary `json:"claims"`
	// Disagreements are where the sources disagree; a person may choose the
	// reading the report should take.
	Disagreements []DisagreementView `json:"disagreements,omitempty"`
	// Diff is what this version changed from the previous one, and why.
	Diff *DraftDiff `json:"diff,omitempty"`
	// Coverage says which sub-questions the sources answered.
	Coverage []Coverage `json:"coverage,omitempty"`
}

// ClaimSummary counts a draft's checked claims and lists the unsupported ones.
type ClaimSummary struct {
	Checked bool `json:"checked"` // false: the draft's claims were not checked
	ClaimTally
	Unsupported []ClaimView `json:"unsupported_claims,omitempty"` // at most maxListedClaims
}

// ClaimView is one claim as shown to a person.
type ClaimView struct {
	Location string `json:"location"`
	Sentence string `json:"sentence"`
	SourceID int    `json:"source_id"`
	Source   string `json:"source"` // the source's title
	Quote    string `json:"quote,omitempty"`
	Reason   string `json:"reason,omitempty"`
}

// DisagreementView is one disagreement between sources as shown to a person;
// N numbers it for the readings field ("1a", "1b").
type DisagreementView struct {
	N          int      `json:"n"`
	Topic      string   `json:"topic"`
	A          SideView `json:"a"`
	B          SideView `json:"b"`
	Assessment string   `json:"assessment,omitempty"`
	Chosen     string   `json:"chosen,omitempty"` // "a" or "b" once chosen
}

// SideView is one side of a disagreement: the claim and its sources.
type SideView struct {
	Claim   string      `json:"claim"`
	Sources []SourceRef `json:"sources"`
}

// SourceRef names a source read by the run.
type SourceRef struct {
	ID     int    `json:"id"`
	Title  string `json:"title"`
	Domain string `json:"domain"`
}

// CriticalPayload is shown at critical_issues.
type CriticalPayload struct {
	Version int            `json:"version"`
	Title   string         `json:"title"`
	Score   float64        `json:"score"`
	Items   []CritiqueItem `json:"items"` // the critical ones first
}
