package pipeline

import "strings"

// Criterion is one weighted review criterion (seed 001 §3.3.2).
type Criterion struct {
	Name        string
	Weight      float64 // the weights of ReviewCriteria sum to 1
	Description string
	Checks      []string
}

// Reviewer recommendations, decided in code by Recommend.
const (
	RecommendApprove = "approve"
	RecommendRevise  = "revise"
	RecommendReject  = "reject"
)

// Decision thresholds of seed 001 §3.3.2.
const (
	// PassThreshold is the lowest weighted score a draft may be approved with.
	PassThreshold = 7.5
	// RevisionThreshold is the lowest score still worth revising when no
	// iteration is left to spend; below it a draft is rejected.
	RevisionThreshold = 5.0
	// MaxMajorIssues is the most major issues an approved draft may have.
	MaxMajorIssues = 3
)

// Issue severities (CritiqueItem.Severity).
const (
	severityCritical   = "critical"
	severityMajor      = "major"
	severityMinor      = "minor"
	severitySuggestion = "suggestion"
)

// ReviewCriteria returns the six weighted criteria the reviewer scores,
// in order: accuracy .25, completeness .20, coherence .20, citation .15,
// methodology .10, style .10.
func ReviewCriteria() []Criterion {
	return []Criterion{
		{Name: "accuracy", Weight: 0.25, Description: "Factual correctness and citation accuracy", Checks: []string{
			"Claims match cited sources", "No unsupported assertions", "Statistics are correctly reported", "No logical fallacies",
			"Findings stated as firmly as their evidence grade in the analysis allows: weak ones as tentative, gaps as missing evidence (a weak finding stated as settled, or a gap filled in, is a major issue)"}},
		{Name: "completeness", Weight: 0.20, Description: "Coverage of research questions", Checks: []string{
			"All sub-questions addressed", "Expected sections present", "Adequate depth per section", "No major gaps"}},
		{Name: "coherence", Weight: 0.20, Description: "Logical flow and structure", Checks: []string{
			"Clear thesis/argument", "Logical section ordering", "Smooth transitions", "Consistent terminology"}},
		{Name: "citation", Weight: 0.15, Description: "Proper attribution and references", Checks: []string{
			"All claims cited", "Citations use only [n] with n from the source list", "Every cited source supports the claim", "No citation fabrication"}},
		{Name: "methodology", Weight: 0.10, Description: "Research approach transparency", Checks: []string{
			"Methods clearly described", "Limitations acknowledged", "Scope appropriate", "Bias awareness"}},
		{Name: "style", Weight: 0.10, Description: "Writing quality and readability", Checks: []string{
			"Clear, concise language", "No banned words", "Appropriate tone", "Grammar and spelling",
			"Length within a quarter of the target", "Follows the house style guide, when there is one"}},
	}
}

// WeightedScore combines per-criterion scores (0..10) with the weights of
// ReviewCriteria. Names match case-insensitively; a criterion that is missing
// counts 0, a name that is not a criterion is ignored, a criterion given
// twice counts once (its first score), and each score and the result are
// clamped to 0..10.
func WeightedScore(scores []CriterionScore) float64 {
	seen := make(map[string]bool, len(scores))
	given := make(map[string]float64, len(scores))
	for _, s := range scores {
		name := strings.ToLower(strings.TrimSpace(s.Name))
		if seen[name] {
			continue
		}
		seen[name] = true
		given[name] = min(max(s.Score, 0), 10)
	}
	total := 0.0
	for _, c := range ReviewCriteria() {
		total += c.Weight * given[c.Name]
	}
	return min(max(total, 0), 10)
}

// severityCount counts the items of a severity (case-insensitive).
func severityCount(items []CritiqueItem, sev string) int {
	n := 0
	for _, it := range items {
		if strings.EqualFold(strings.TrimSpace(it.Severity), sev) {
			n++
		}
	}
	return n
}

// Recommend applies seed 001's decision rules: approve when score >= 7.5
// with no critical issue and at most 3 major ones; otherwise revise when
// score >= 5.0 or another iteration is allowed (canIterate); otherwise reject.
func Recommend(score float64, items []CritiqueItem, canIterate bool) string {
	if score >= PassThreshold && severityCount(items, severityCritical) == 0 && severityCount(items, severityMajor) <= MaxMajorIssues {
		return RecommendApprove
	}
	if score >= RevisionThreshold || canIterate {
		return RecommendRevise
	}
	return RecommendReject
}

// MinImprovementPotential is the reviewer's estimate of what a revision can
// gain below which a low-scoring draft's issues count as not addressable.
const MinImprovementPotential = 0.2

// RecommendWithPotential is Recommend plus the rule of seed 001's reviewer
// prompt, "REJECT: score < 5.0 AND issues are not addressable": a draft
// scoring below RevisionThreshold whose improvement potential (0..1, the
// reviewer's own estimate) is under MinImprovementPotential is rejected
// even while iterations remain, instead of paying for hopeless revisions.
func RecommendWithPotential(score float64, items []CritiqueItem, canIterate bool, potential float64) string {
	rec := Recommend(score, items, canIterate)
	if rec == RecommendRevise && score < RevisionThreshold && potential < MinImprovementPotential {
		return RecommendReject
	}
	return rec
}

// RecommendDraft is RecommendWithPotential plus the evidence rule: a draft
// with claims whose quotes were not found in their sources (unsupported) is
// not approved while a revision can fix or drop them. At the revision bound
// the recommendation stands, and the report lists the unsupported claims.
func RecommendDraft(score float64, items []CritiqueItem, canIterate bool, potential float64, unsupported int) string {
	rec := RecommendWithPotential(score, items, canIterate, potential)
	if rec == RecommendApprove && unsupported > 0 && canIterate {
		return RecommendRevise
	}
	return rec
}
