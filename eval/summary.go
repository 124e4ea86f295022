package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Result is what one evaluation produced: the settings it ran with, each
// question's score and the totals.
type Result struct {
	// Model names the model (or models) the runs used; Depth their depth.
	Model     string  `json:"model"`
	Depth     string  `json:"depth"`
	Questions []Score `json:"questions"`
	Total     Total   `json:"total"`
}

// Total sums the questions' scores: shares are over all claims and all
// facts together (a question with many claims weighs more), and nil when
// there is nothing to measure.
type Total struct {
	Questions     int      `json:"questions"`
	Reports       int      `json:"reports"` // questions whose run ended with a report
	Claims        int      `json:"claims"`
	Verified      int      `json:"verified"`
	Precise       int      `json:"precise"`
	Facts         int      `json:"facts"`
	FactsFound    int      `json:"facts_found"`
	VerifiedShare *float64 `json:"verified_share"`
	Precision     *float64 `json:"citation_precision"`
	FactShare     *float64 `json:"facts_found_share"`
	CostUSD       float64  `json:"cost_usd"`
	Seconds       float64  `json:"seconds"`
}

// Summarize returns the result of scores.
func Summarize(model, depth string, scores []Score) Result {
	r := Result{Model: model, Depth: depth, Questions: scores}
	t := &r.Total
	for _, s := range scores {
		t.Questions++
		if s.Error == "" && (s.Claims > 0 || s.Status == "completed" || s.Status == "partial") {
			t.Reports++
		}
		t.Claims += s.Claims
		t.Verified += s.Verified
		t.Precise += s.Precise
		t.Facts += len(s.Facts)
		t.FactsFound += s.FactsFound()
		t.CostUSD += s.CostUSD
		t.Seconds += s.Seconds
	}
	t.VerifiedShare = share(t.Verified, t.Claims)
	t.Precision = share(t.Precise, t.Claims)
	t.FactShare = share(t.FactsFound, t.Facts)
	return r
}

func share(n, of int) *float64 {
	v, ok := ratio(n, of)
	if !ok {
		return nil
	}
	return &v
}

// MarshalJSON adds each question's shares (null when there is nothing to
// measure) and missing facts to its fields.
func (s Score) MarshalJSON() ([]byte, error) {
	type plain Score
	missing := s.Missing()
	if missing == nil {
		missing = []string{}
	}
	return json.Marshal(struct {
		plain
		VerifiedShare *float64 `json:"verified_share"`
		Precision     *float64 `json:"citation_precision"`
		FactShare     *float64 `json:"facts_found_share"`
		Missing       []string `json:"missing_facts"`
	}{plain(s), share(s.Verified, s.Claims), share(s.Precise, s.Claims), share(s.FactsFound(), len(s.Facts)), missing})
}

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable writes r as a table for people: a row per question (its run's
// status, claims, verified quotes, citation precision, facts found) and
// the totals, then the facts each report missed.
func WriteTable(w io.Writer, r Result) error {
	fmt.Fprintf(w, "model %s · depth %s · %d questions\n\n", r.Model, r.Depth, r.Total.Questions)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "question\tstatus\tclaims\tverified quotes\tcitation precision\tfacts found\tcost")
	for _, s := range r.Questions {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t$%.4f\n", s.ID, s.Status, s.Claims,
			fraction(s.Verified, s.Claims), fraction(s.Precise, s.Claims), fraction(s.FactsFound(), len(s.Facts)), s.CostUSD)
	}
	t := r.Total
	fmt.Fprintf(tw, "all\t%d/%d reports\t%d\t%s\t%s\t%s\t$%.4f\n", t.Reports, t.Questions, t.Claims,
		fraction(t.Verified, t.Claims), fraction(t.Precise, t.Claims), fraction(t.FactsFound, t.Facts), t.CostUSD)
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	for _, s := range r.Questions {
		if s.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: %s", s.ID, s.Error))
		}
		if m := s.Missing(); len(m) > 0 {
			notes = append(notes, fmt.Sprintf("%s: missing %s", s.ID, strings.Join(m, "; ")))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	_, err := fmt.Fprintln(w, "\nverified quotes: cited claims whose quote is in the cited source · citation precision: cited claims citing a document that holds the answer · facts found: expected facts the report states")
	return err
}

// fraction is "3/4 (75%)", or "–" when there is nothing to measure.
func fraction(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", n, of, 100*float64(n)/float64(of))
}
