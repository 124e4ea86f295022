package pipeline

// The prompts of the steps that find sources: the planner (first plan and
// re-plans), the ranker of search results and the reformulator of searches
// whose results were all irrelevant.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// plannerData is what the planner templates see; every untrusted value is
// already wrapped.
type plannerData struct {
	Steering     []string // the run's steering notes, each in its requester_note block
	Today        string
	Question     string
	Context      string
	Depth        Depth
	SubQuestions int
	Queries      int
	Since        string
	Round        int
	History      string
	Feedback     []string
	// MayAsk: the planner may give clarifying questions (the run can
	// still ask them); Clarification is the questions asked and the
	// person's answers, wrapped ("" for none).
	MayAsk        bool
	Clarification string
}

// PlannerPrompt renders the planner's prompt for r: the question, its
// context and depth (which fixes how many sub-questions and queries to
// write), the date window when r.Since is set and today's date. When
// re-planning it includes every earlier plan with its sub-questions, queries
// and why it was not kept (seed 000: previous strategies), and every unused
// human Feedback note. Reply with PlanOutput.
func PlannerPrompt(r *Run, now time.Time) (system, user string) {
	sq, q := DepthCounts(r.Depth)
	d := plannerData{
		Today:        now.UTC().Format(promptDateLayout),
		Question:     untrustedBlock("question", r.Question),
		Depth:        depthName(r.Depth),
		SubQuestions: sq,
		Queries:      q,
		Since:        isoDate(r.Since),
		Round:        r.Counters.PlanRounds + 1,
		Feedback:     feedbackBlocks(unusedFeedback(r)),
		Steering:     steeringBlocks(r),
		MayAsk:       r.mayClarify(),
	}
	d.Clarification = clarificationBlock(r)
	if strings.TrimSpace(r.Context) != "" {
		d.Context = untrustedBlock("context", r.Context)
	}
	if h := planHistory(r); len(h) > 0 {
		var b strings.Builder
		for i, a := range h {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "Plan %d — %s\n", a.Round, flatLine(a.Outcome))
			if len(a.SubQuestions) > 0 {
				b.WriteString("Sub-questions:\n" + numberedLines(a.SubQuestions) + "\n")
			}
			if len(a.Queries) > 0 {
				b.WriteString("Search queries:\n" + bulletLines(a.Queries) + "\n")
			}
		}
		d.History = untrustedBlock("earlier_plans", b.String())
	}
	return renderPrompt("planner", d)
}

// planHistory is every earlier plan of r, oldest first. A run that planned
// before plans were recorded shows its last plan, outcome unknown.
func planHistory(r *Run) []PlanAttempt {
	if len(r.PlanHistory) > 0 || r.Plan == nil {
		return r.PlanHistory
	}
	a := PlanAttempt{Round: r.Counters.PlanRounds, SubQuestions: r.Plan.SubQuestions, Outcome: "not accepted"}
	for _, q := range r.Queries {
		a.Queries = append(a.Queries, q.Kind+": "+q.Text)
	}
	return []PlanAttempt{a}
}

// rankerData is what the ranker templates see.
type rankerData struct {
	Steering     []string // the run's steering notes, each in its requester_note block
	Question     string
	SubQuestions string
	Results      []string
	IDs          string
}

// RankerPrompt renders the ranker's prompt for one batch of search results:
// for each source id a relevance judgement from 0 to 1 and a one-line gist,
// following the run's steering notes.
// Reply with RankOutput.
func RankerPrompt(question string, subQuestions []string, notes []SteeringNote, batch []Source) (system, user string) {
	d := rankerData{Question: untrustedBlock("question", question), Steering: noteBlocks(notes)}
	if len(subQuestions) > 0 {
		d.SubQuestions = untrustedBlock("sub_questions", numberedLines(subQuestions))
	}
	ids := make([]int, 0, len(batch))
	for _, s := range batch {
		ids = append(ids, s.ID)
		var b strings.Builder
		fmt.Fprintf(&b, "Title: %s\nURL: %s\n", flatLine(s.Title), flatLine(s.URL))
		if s.Kind != "" {
			fmt.Fprintf(&b, "Type: %s\n", flatLine(s.Kind))
		}
		if !s.Published.IsZero() {
			fmt.Fprintf(&b, "Published: %s\n", isoDate(s.Published))
		}
		if s.Citations > 0 {
			fmt.Fprintf(&b, "Cited by: %d\n", s.Citations)
		}
		fmt.Fprintf(&b, "Snippet: %s", clipText(flatLine(s.Snippet), rankerSnippetChars))
		d.Results = append(d.Results, untrustedBlock("search_result", b.String(), "source_id", strconv.Itoa(s.ID)))
	}
	d.IDs = joinInts(ids)
	return renderPrompt("ranker", d)
}

// reformulatorData is what the reformulator templates see.
type reformulatorData struct {
	Steering     []string // the run's steering notes, each in its requester_note block
	Question     string
	SubQuestions string
	Searches     []string
	IDs          string
	// Kinds are the search types the backends serve, e.g. "web, academic".
	Kinds string
	// OneKind is set when only one type is served: a retry rewords only.
	OneKind bool
}

// ReformulatorPrompt renders the prompt that rewrites searches whose results
// were all irrelevant: the question, the sub-questions, and per search its
// id, type, wording, sub-question and the results it got with their
// relevance, and the search types the backends serve (kinds; nil: all of
// QueryKinds). Reply with ReformulationOutput.
func ReformulatorPrompt(r *Run, qs []Query, kinds []string) (system, user string) {
	if len(kinds) == 0 {
		kinds = QueryKinds
	}
	d := reformulatorData{Question: untrustedBlock("question", r.Question), Steering: steeringBlocks(r), Kinds: strings.Join(kinds, ", "), OneKind: len(kinds) == 1}
	subs := planSubQuestions(r)
	if len(subs) > 0 {
		d.SubQuestions = untrustedBlock("sub_questions", numberedLines(subs))
	}
	ids := make([]string, 0, len(qs))
	for _, q := range qs {
		ids = append(ids, attrSafe(q.ID))
		var b strings.Builder
		fmt.Fprintf(&b, "Search: %s\nType: %s\n", flatLine(q.Text), normalizeKind(q.Kind))
		if q.SubQuestion >= 1 && q.SubQuestion <= len(subs) {
			fmt.Fprintf(&b, "Serves sub-question %d\n", q.SubQuestion)
		}
		hits := r.hitsOf(q)
		if len(hits) == 0 {
			b.WriteString("Results: none\n")
		} else {
			b.WriteString("Results (relevance from 0 to 1):\n")
			for _, s := range hits {
				fmt.Fprintf(&b, "- %.1f %s — %s\n", s.Relevance, flatLine(nonBlank(s.Title, "(untitled)")), hostDomain(s.URL))
			}
		}
		d.Searches = append(d.Searches, untrustedBlock("poor_search", b.String(), "query_id", attrSafe(q.ID)))
	}
	d.IDs = strings.Join(ids, ", ")
	return renderPrompt("reformulator", d)
}
