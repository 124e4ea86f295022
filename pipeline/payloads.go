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
}

// CriticalPayload is shown at critical_issues.
type CriticalPayload struct {
	Version int            `json:"version"`
	Title   string         `json:"title"`
	Score   float64        `json:"score"`
	Items   []CritiqueItem `json:"items"` // the critical ones first
}
