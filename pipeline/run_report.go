package pipeline

// The final report as a run's record holds it: its sections, numbered
// references, metadata and provenance.

import "time"

// Report is a run's final output (seed 001 §4.4.2–4.4.3).
type Report struct {
	Status     string      `json:"status"`     // complete or partial
	Confidence string      `json:"confidence"` // high, medium, low
	Reason     string      `json:"reason,omitempty"`
	Title      string      `json:"title"`
	Abstract   string      `json:"abstract"`
	Sections   []Section   `json:"sections"`
	Conclusion string      `json:"conclusion"`
	References []Reference `json:"references"`
	Caveats    []string    `json:"caveats,omitempty"`
	// NothingNew is set when a run restricted to new material found none.
	NothingNew bool `json:"nothing_new,omitempty"`
	// Claims are the report's cited claims as checked against their
	// sources; Sentence carries the report's citation numbers and Ref the
	// reference number of the source.
	Claims []Claim `json:"claims,omitempty"`
	// AlsoRelevant lists sources a person marked relevant that the report
	// does not cite (seed 000: accumulated sources are kept in the output).
	AlsoRelevant []AlsoRelevant `json:"also_relevant,omitempty"`
	Metadata     Metadata       `json:"metadata"`
	Provenance   Provenance     `json:"provenance"`
	Markdown     string         `json:"markdown"`
}

// Reference is one numbered citation; it always points at a fetched page.
type Reference struct {
	N         int       `json:"n"`
	SourceID  int       `json:"source_id"`
	Title     string    `json:"title"`
	URL       string    `json:"url"`
	Domain    string    `json:"domain"`
	Published time.Time `json:"published,omitzero"`
	// Kind and Pages describe a source that is not a web page (a PDF and
	// its page count); Kind is "" for a web page.
	Kind  string `json:"kind,omitempty"`
	Pages int    `json:"pages,omitempty"`
	// File reports a file given to the run (Title is its name; no URL).
	File bool `json:"file,omitempty"`
	// SharedBy is the Slack user id of who shared the file, "" for a file
	// given otherwise: cited as "shared by" them.
	SharedBy string `json:"shared_by,omitempty"`
}

// KindText describes the reference's kind for people: "PDF, 42 pages", or
// "" for a web page.
func (r Reference) KindText() string { return sourceKind(r.Kind, r.Pages) }

// AlsoRelevant is a source a person marked relevant but the report does not
// cite. It is listed, not cited: Read says whether the run read it.
type AlsoRelevant struct {
	Title  string `json:"title"`
	URL    string `json:"url"`
	Domain string `json:"domain"`
	Read   bool   `json:"read"`
}

// Metadata describes how a report was made.
type Metadata struct {
	RunID       string    `json:"run_id"`
	CreatedAt   time.Time `json:"created_at"`
	CompletedAt time.Time `json:"completed_at"`
	Iterations  int       `json:"iterations"`
	FinalScore  float64   `json:"final_score"`
	SourcesUsed int       `json:"sources_used"`
	WordCount   int       `json:"word_count"`
	CostUSD     float64   `json:"cost_usd"`
	Tokens      int       `json:"tokens"`
}

// Provenance records what the report rests on.
type Provenance struct {
	Question        string   `json:"question"`
	SubQuestions    []string `json:"sub_questions"`
	QueriesExecuted int      `json:"queries_executed"`
	// Files lists the files given to the run: "2 files given: a.pdf (PDF,
	// 12 pages), notes.md"; "" for none.
	Files     string   `json:"files,omitempty"`
	Decisions []string `json:"decisions"`
	Trace     []string `json:"trace"`
	// Coverage says which sub-questions the sources answered.
	Coverage []Coverage `json:"coverage,omitempty"`
	// Claims counts the cited claims checked against their sources; nil when
	// the content was not checked.
	Claims *ClaimTally `json:"claims,omitempty"`
	// Steering lists the steering notes people gave while the run ran.
	Steering []string `json:"steering,omitempty"`
	// Clarified is the conversation before the plan: the clarifying
	// questions, what became of them, and the assumptions the plan made.
	Clarified []string `json:"clarified,omitempty"`
	// Evidence counts the analysis's key findings by evidence grade ("2
	// strong, 1 weak, 1 gap"); "" when none is graded.
	Evidence string `json:"evidence,omitempty"`
	// Unread names each selected source the run could not read and why
	// ("https://… — unreadable: encrypted PDF"), at most maxUnreadListed.
	Unread []string `json:"unread,omitempty"`
	// Withheld says how many sources the report's readers could not all
	// read, and so were withheld (WithheldText); "" for none.
	Withheld string `json:"withheld,omitempty"`
	// SearchNotes say what searches left out on purpose (Run.SearchNotes).
	SearchNotes []string `json:"search_notes,omitempty"`
	// Retried lists the searches retried after poor results, each with its
	// retry's type and wording and what it found (retriedSearches).
	Retried []string `json:"retried,omitempty"`
}
