package pipeline

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

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
	// Assumptions are what the plan assumes where the question is
	// ambiguous (clarifying questions skipped or not asked).
	Assumptions []string `json:"assumptions,omitempty"`
	Estimate    Estimate `json:"estimate"`
	Round       int      `json:"round"` // 1 for the first plan
	// Domains are the run's domain rules as one line ("only example.org ·
	// never spam.example"), "" for none.
	Domains string `json:"domains,omitempty"`
	// Files is how many files were given to the run (read first).
	Files int `json:"files,omitempty"`
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
	// NotPassed is true when the reviewer did not pass this draft (rejected
	// it, or asked for a revision at the revision bound): the person's
	// choices are then publish with a caveat, revise with their
	// instructions, or stop and write what the run has.
	NotPassed bool `json:"not_passed,omitempty"`
	// AtRevisionLimit is true when no revision is left: changes asked for
	// then end the run with a partial report.
	AtRevisionLimit bool `json:"at_revision_limit,omitempty"`
	Major           int  `json:"major"`
	Minor           int  `json:"minor"`
	Sources         int  `json:"sources"`
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
	// Evidence counts the analysis's key findings by evidence grade ("2
	// moderate, 1 weak, 1 gap"), "" when none is graded.
	Evidence string `json:"evidence,omitempty"`
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
	// Also are the other sources the same sentence cites without support:
	// a sentence is listed once.
	Also []ClaimView `json:"also,omitempty"`
}

// Unlisted counts the unsupported claims the list leaves out.
func (s ClaimSummary) Unlisted() int {
	listed := 0
	for _, v := range s.Unsupported {
		listed += 1 + len(v.Also)
	}
	return max(s.ClaimTally.Unsupported-listed, 0)
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

// ---- builders: what each built-in checkpoint shows and pre-fills ----

func (r *Run) planPayload() PlanPayload {
	p := PlanPayload{Question: r.Question, Round: r.Counters.PlanRounds, Domains: r.Domains.String(), Files: len(admittedFiles(r.Files))}
	if r.Plan != nil {
		p.SubQuestions = r.Plan.SubQuestions
		p.Sections = r.Plan.Sections
		p.Methodology = r.Plan.Methodology
		p.Warnings = r.Plan.Warnings
		p.Assumptions = r.Plan.Assumptions
	}
	for _, i := range r.pendingQueries() {
		p.Queries = append(p.Queries, QueryView{Text: r.Queries[i].Text, Kind: r.Queries[i].Kind})
	}
	if r.Estimate != nil {
		p.Estimate = *r.Estimate
	}
	return p
}

func (r *Run) planValues() map[string]any {
	var qs []string
	for _, i := range r.pendingQueries() {
		qs = append(qs, r.Queries[i].Kind+": "+r.Queries[i].Text)
	}
	v := map[string]any{
		checkpoints.KeyQueries: strings.Join(qs, "\n"),
		checkpoints.KeyDepth:   string(r.Depth),
	}
	if r.Plan != nil {
		v[checkpoints.KeySubQuestions] = strings.Join(r.Plan.SubQuestions, "\n")
		v[checkpoints.KeySections] = strings.Join(r.Plan.Sections, "\n")
	}
	return v
}

func (r *Run) sourcesPayload() SourcesPayload {
	p := SourcesPayload{Question: r.Question, Total: len(r.Sources), ToFetch: r.countSelected()}
	for _, i := range r.ranked() {
		s := r.Sources[i]
		if s.Excluded || s.Fetched {
			continue
		}
		p.Sources = append(p.Sources, SourceView{
			ID: s.ID, Title: s.Title, URL: s.URL, Domain: hostDomain(s.URL), Published: s.Published,
			Gist: s.Gist, Score: s.Score, Kind: s.Kind, Backend: s.Backend, Selected: s.Selected, Relevant: s.Relevant,
		})
		if len(p.Sources) == sourceReviewOptions {
			break
		}
	}
	seen := map[string]bool{}
	for _, e := range r.Errors {
		if e.Kind == "search" && !seen[e.Message] {
			seen[e.Message] = true
			p.Errors = append(p.Errors, e.Message)
		}
	}
	return p
}

// maxOptionLabel is the longest option label offered (Slack's limit on an
// option's text is 75 characters).
const maxOptionLabel = 75

// optionLabel cuts an option label to maxOptionLabel characters.
func optionLabel(s string) string {
	if rs := []rune(s); len(rs) > maxOptionLabel {
		return string(rs[:maxOptionLabel-1]) + "…"
	}
	return s
}

// sourceFields fills the source-review form's options with this run's sources.
func (r *Run) sourceFields(fs []checkpoints.Field) []checkpoints.Field {
	var opts []checkpoints.Option
	for _, v := range r.sourcesPayload().Sources {
		opts = append(opts, checkpoints.Option{Value: fmt.Sprint(v.ID), Label: optionLabel(fmt.Sprintf("%d. %s", v.ID, v.Title))})
	}
	for i := range fs {
		if fs[i].Type == checkpoints.FieldMultiSelect && len(fs[i].Options) == 0 {
			fs[i].Options = opts
		}
	}
	return fs
}

func (r *Run) sourceValues() map[string]any {
	var rel []string
	for _, s := range r.Sources {
		if s.Relevant && !s.Fetched {
			rel = append(rel, fmt.Sprint(s.ID))
		}
	}
	if len(rel) == 0 {
		return nil
	}
	return map[string]any{checkpoints.KeyRelevant: rel}
}

func (r *Run) criticalPayload(c Critique) CriticalPayload {
	p := CriticalPayload{Version: c.DraftVersion, Score: c.Score}
	if len(r.Drafts) > 0 {
		p.Title = r.Drafts[len(r.Drafts)-1].Title
	}
	items := append([]CritiqueItem(nil), c.Items...)
	rank := map[string]int{severityCritical: 0, severityMajor: 1, severityMinor: 2, severitySuggestion: 3}
	sort.SliceStable(items, func(a, b int) bool { return rank[items[a].Severity] < rank[items[b].Severity] })
	p.Items = items
	return p
}

func (r *Run) draftPayload() DraftPayload {
	d := r.Drafts[len(r.Drafts)-1]
	p := DraftPayload{Version: d.Version, Title: d.Title, Abstract: d.Abstract, Sources: len(r.Pages)}
	for _, s := range d.Sections {
		p.Sections = append(p.Sections, s.Title)
		p.WordCount += len(strings.Fields(s.Content))
	}
	if len(r.Critiques) > 0 {
		c := r.Critiques[len(r.Critiques)-1]
		p.Score, p.Recommendation, p.Summary = c.Score, c.Recommendation, c.Summary
		p.Major, p.Minor = severityCount(c.Items, severityMajor), severityCount(c.Items, severityMinor)
	}
	_, p.NotPassed = r.unpassedDraft()
	p.AtRevisionLimit = !r.canIterate()
	rep := BuildReport(r, time.Time{})
	p.Markdown = rep.Markdown
	p.Claims = claimSummary(d, r.Pages)
	p.Disagreements = disagreementViews(r)
	p.Diff = d.Diff
	if r.Analysis != nil {
		p.Coverage = r.Analysis.Coverage
	}
	p.Evidence = GradeCounts(r.Analysis)
	return p
}

// draftFields fills the draft review's readings field with this run's
// disagreements, and leaves it and its note out when there are none.
func (r *Run) draftFields(fs []checkpoints.Field) []checkpoints.Field {
	opts := readingOptions(r.Analysis)
	out := fs[:0]
	for _, f := range fs {
		switch f.Key {
		case checkpoints.KeyReadings:
			if len(opts) == 0 {
				continue
			}
			f.Options = opts
		case checkpoints.KeyReadingNote:
			if len(opts) == 0 {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}
