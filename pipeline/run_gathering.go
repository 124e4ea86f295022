package pipeline

// What a run gathers, as its record holds it: the plan and the plans before
// it, the queries, the sources they found and the pages read from them.

import (
	"fmt"
	"time"
)

// Plan is the planner's research plan.
type Plan struct {
	SubQuestions []string `json:"sub_questions"`
	Sections     []string `json:"sections"`
	Methodology  string   `json:"methodology"`
	Warnings     []string `json:"warnings,omitempty"`
	// Assumptions are what the plan assumes where the question is
	// ambiguous or under-specified (the clarifying questions not asked
	// or not answered); the plan review and the report name them.
	Assumptions []string  `json:"assumptions,omitempty"`
	Confidence  float64   `json:"confidence"`
	EditedBy    string    `json:"edited_by,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
}

// PlanAttempt is an earlier plan that was rejected or sent back for a new
// search, with the reason.
type PlanAttempt struct {
	Round        int       `json:"round"`
	SubQuestions []string  `json:"sub_questions"`
	Queries      []string  `json:"queries"` // "kind: text"
	Outcome      string    `json:"outcome"` // e.g. "rejected at plan review by U1: too broad"
	At           time.Time `json:"at"`
}

// Query is one search the run makes.
type Query struct {
	ID          string `json:"id"`
	Text        string `json:"text"`
	Kind        string `json:"kind"` // web, academic or news
	SubQuestion int    `json:"sub_question"`
	Round       int    `json:"round"`
	Status      string `json:"status"` // pending, completed, failed
	Results     int    `json:"results"`
	// Hits are the source ids of the query's results, including results
	// another query found first.
	Hits   []int     `json:"hits,omitempty"`
	Errors []string  `json:"errors,omitempty"`
	DoneAt time.Time `json:"done_at,omitzero"`
	// ReformulationOf is the id of the query this one rewrites, or "".
	ReformulationOf string `json:"reformulation_of,omitempty"`
	// Reformulated is set once a query whose results were all irrelevant
	// has been rewritten (a query is rewritten at most once).
	Reformulated bool `json:"reformulated,omitempty"`
}

// Source is one search result, deduplicated across queries and backends.
type Source struct {
	ID        int       `json:"id"` // stable within the run, from 1
	Key       string    `json:"key"`
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Snippet   string    `json:"snippet"`
	Backend   string    `json:"backend"`
	Kind      string    `json:"kind"`
	Published time.Time `json:"published,omitzero"`
	Authors   []string  `json:"authors,omitempty"`
	Citations int       `json:"citations,omitempty"`
	QueryID   string    `json:"query_id"`
	Heuristic float64   `json:"heuristic"`
	Relevance float64   `json:"relevance"` // the model's judgement, 0..1
	Score     float64   `json:"score"`     // combined ranking score
	Gist      string    `json:"gist,omitempty"`
	Ranked    bool      `json:"ranked"`
	Selected  bool      `json:"selected"` // chosen for fetching
	Relevant  bool      `json:"relevant"` // marked relevant by a person; kept across iterations
	Excluded  bool      `json:"excluded"` // excluded by a person or by the run's domain rules
	Fetched   bool      `json:"fetched"`
	FetchErr  string    `json:"fetch_err,omitempty"`
	// Visibility is who may read the source (the zero value: anyone).
	Visibility Visibility `json:"visibility,omitzero"`
	// Content is the text its backend returned with it (Hit.Text): the
	// source is read from it, not fetched; it moves to the page when read.
	Content string `json:"content,omitempty"`
	// Author is who wrote it, when its backend says (a workspace message's
	// author).
	Author string `json:"author,omitempty"`
}

// Page is the extracted text of a fetched source.
type Page struct {
	SourceID  int       `json:"source_id"`
	URL       string    `json:"url"`
	FinalURL  string    `json:"final_url"`
	Title     string    `json:"title"`
	Author    string    `json:"author,omitempty"`
	Published time.Time `json:"published,omitzero"`
	Text      string    `json:"text"`
	Truncated bool      `json:"truncated,omitempty"`
	Simhash   uint64    `json:"simhash"`
	FetchedAt time.Time `json:"fetched_at"`
	// Kind, PageCount and PageStarts are the Document's: a PDF's pages, so
	// a quote found in Text cites its page.
	Kind       string `json:"kind,omitempty"`
	PageCount  int    `json:"page_count,omitempty"`
	PageStarts []int  `json:"page_starts,omitempty"`
	// File is the base name of a file given to the run, "" for a fetched page.
	File string `json:"file,omitempty"`
	// SharedBy and SharedIn are the File's: who shared it in Slack, and where.
	SharedBy string `json:"shared_by,omitempty"`
	SharedIn string `json:"shared_in,omitempty"`
}

// KindPDF is the Kind of a page that is a PDF.
const KindPDF = "pdf"

// KindWorkspace is the Kind of a source and page that is a message or file
// of the team's own Slack workspace; its Title reads "#infra — @dana".
const KindWorkspace = "workspace"

// pageAt returns the page (from 1) of p on which byte offset off of its
// Text lies, or 0 for a page without pages.
func (p Page) pageAt(off int) int {
	n := 0
	for i, s := range p.PageStarts {
		if s > off {
			break
		}
		n = i + 1
	}
	return n
}

// sourceKind describes a source's kind for people: "PDF, 42 pages", or ""
// for a web page.
func sourceKind(kind string, pages int) string {
	if kind != KindPDF {
		return ""
	}
	switch pages {
	case 0:
		return "PDF"
	case 1:
		return "PDF, 1 page"
	}
	return fmt.Sprintf("PDF, %d pages", pages)
}
