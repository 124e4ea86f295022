package pipeline

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Evidence grading per finding (seed 001's analyst): the analyst grades
// the evidence behind each key finding, and code holds the grade to what
// the finding cites, so a grade can never claim more support than the run
// has read:
//
//   - strong: multiple independent sources agree, including primary data
//     (at least two sources from different sites);
//   - moderate: two or three sources agree, mostly secondary analysis (at
//     least two sources);
//   - weak: a single source, or conflicting information;
//   - gap: no relevant evidence found (a finding that cites no page read is
//     a gap, whatever its grade).
//
// The writer states each finding as firmly as its grade allows and names
// gaps as gaps; the reviewer checks that it did (an accuracy check); the
// report's "How this report was made" counts the grades.

// The evidence grades, strongest first.
const (
	GradeStrong   = "strong"
	GradeModerate = "moderate"
	GradeWeak     = "weak"
	GradeGap      = "gap"
)

// EvidenceGrades lists the grades, strongest first.
func EvidenceGrades() []string { return []string{GradeStrong, GradeModerate, GradeWeak, GradeGap} }

// legacyGrades maps the confidence of findings recorded before grading
// (high, medium, low) to grades.
var legacyGrades = map[string]string{"high": GradeStrong, "medium": GradeModerate, "low": GradeWeak}

// gradeRank orders the grades: 0 is strongest.
func gradeRank(g string) int {
	for i, x := range EvidenceGrades() {
		if x == g {
			return i
		}
	}
	return len(EvidenceGrades())
}

// GradeOf is a finding's grade: its Grade, or for a finding recorded
// before grading the grade its confidence maps to; "" when it has neither.
func GradeOf(f Finding) string {
	if f.Grade != "" {
		return f.Grade
	}
	return legacyGrades[strings.ToLower(strings.TrimSpace(f.Confidence))]
}

// gradeFinding holds the analyst's grade to the sources the finding cites
// (ids of pages read): no source is a gap, one source is at most weak,
// sources from one site are at most moderate, and strong needs two sites.
// An unknown or missing grade is read from the sources alone, as strong as
// they allow but never strong (nobody judged the sources' quality). It
// reports the grade and whether the analyst's grade was lowered.
func gradeFinding(given string, ids []int, siteOf func(int) string) (string, bool) {
	given = strings.ToLower(strings.TrimSpace(given))
	if g, ok := legacyGrades[given]; ok {
		given = g
	}
	sites := map[string]bool{}
	for _, id := range ids {
		s := siteOf(id)
		if s == "" {
			s = "#" + strconv.Itoa(id) // a file, or a page without a host: its own site
		}
		sites[s] = true
	}
	ceiling := GradeStrong
	switch {
	case len(ids) == 0:
		ceiling = GradeGap
	case len(ids) == 1:
		ceiling = GradeWeak
	case len(sites) == 1:
		ceiling = GradeModerate
	}
	if gradeRank(given) >= len(EvidenceGrades()) {
		// Ungraded: as the sources allow, short of strong.
		return EvidenceGrades()[max(gradeRank(ceiling), gradeRank(GradeModerate))], false
	}
	if gradeRank(given) < gradeRank(ceiling) {
		return ceiling, true
	}
	return given, false
}

// gradeFindings grades r's analysis findings from the analyst's grades
// and records how many grades were lowered.
func (r *Run) gradeFindings(a *Analysis, given []string, now time.Time) {
	site := map[int]string{}
	for _, s := range r.Sources {
		site[s.ID] = hostDomain(s.URL)
	}
	lowered := 0
	for i := range a.Findings {
		g := ""
		if i < len(given) {
			g = given[i]
		}
		grade, low := gradeFinding(g, a.Findings[i].Sources, func(id int) string { return site[id] })
		a.Findings[i].Grade = grade
		if low {
			lowered++
		}
	}
	if lowered > 0 {
		r.trace(now, StepAnalyze, "%d finding grade(s) lowered to what their cited sources allow", lowered)
	}
}

// GradeCounts counts the analysis's findings by grade, in EvidenceGrades
// order, as one line for people: "2 strong, 1 moderate, 1 weak, 1 gap";
// "" when no finding is graded.
func GradeCounts(a *Analysis) string {
	if a == nil {
		return ""
	}
	n := map[string]int{}
	for _, f := range a.Findings {
		if g := GradeOf(f); g != "" {
			n[g]++
		}
	}
	var parts []string
	for _, g := range EvidenceGrades() {
		if n[g] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[g], g))
		}
	}
	return strings.Join(parts, ", ")
}
