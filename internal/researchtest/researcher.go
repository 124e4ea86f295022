package researchtest

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// Researcher is a scripted model: it answers each structured call by its
// schema name with a plausible, valid output built from the ids in the
// prompt. Its knobs script reviews, gaps, bad citations and failures.
type Researcher struct {
	// ReviewScores are the scores of successive reviews; the last repeats
	// (default 8.5: approve at once).
	ReviewScores []float64
	// CriticalOnReview lists 1-based review numbers that report a critical issue.
	CriticalOnReview map[int]bool
	// GapsOnAnalysis lists 1-based analysis numbers that report 3 gaps.
	GapsOnAnalysis map[int]bool
	// BadCitations makes the writer cite [99] and link an unfetched URL.
	BadCitations bool
	// QuoteUntrusted makes the writer repeat hostile page text verbatim.
	QuoteUntrusted bool
	// Before may replace the reply to call n (1-based) of a schema, e.g.
	// with a 429 or malformed JSON; nil keeps the scripted reply.
	Before func(schema string, n int) *llmtest.Reply
	// Delay is a fixed latency per call (benchmarks).
	Delay time.Duration
	// DelayFor, when set, adds a latency to call n of a schema (crash tests).
	DelayFor func(schema string, n int) time.Duration
	// Tokens per call, for cost accounting (default 1000 in, 300 out).
	PromptTokens, CompletionTokens int
	// TextTokens reports tokens measured from the text sent and returned
	// (about four characters a token, as the fake server estimates them)
	// instead of fixed counts, so benchmarks see what prompts and answers cost.
	TextTokens bool

	mu    sync.Mutex
	calls map[string]int
}

// Respond implements llmtest.Responder.
func (r *Researcher) Respond(c llmtest.Call) llmtest.Reply {
	r.mu.Lock()
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[c.SchemaName]++
	n := r.calls[c.SchemaName]
	r.mu.Unlock()
	if r.Before != nil {
		if rep := r.Before(c.SchemaName, n); rep != nil {
			return *rep
		}
	}
	reply := r.answer(c, n)
	reply.Delay = r.Delay
	if r.DelayFor != nil {
		reply.Delay += r.DelayFor(c.SchemaName, n)
	}
	reply.PromptTokens, reply.CompletionTokens = r.PromptTokens, r.CompletionTokens
	if reply.PromptTokens == 0 && !r.TextTokens {
		reply.PromptTokens, reply.CompletionTokens = 1000, 300
	}
	return reply
}

// Count returns how many calls of a schema were received.
func (r *Researcher) Count(schema string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[schema]
}

var sourceIDRe = regexp.MustCompile(`source_id="(\d+)"`)

func idsIn(text string) []int {
	var ids []int
	seen := map[int]bool{}
	for _, m := range sourceIDRe.FindAllStringSubmatch(text, -1) {
		n, _ := strconv.Atoi(m[1])
		if !seen[n] {
			seen[n] = true
			ids = append(ids, n)
		}
	}
	return ids
}

func (r *Researcher) answer(c llmtest.Call, n int) llmtest.Reply {
	ids := idsIn(c.User)
	switch c.SchemaName {
	case "research_plan":
		return llmtest.JSON(pipeline.PlanOutput{
			Reasoning:    "Split into performance, cost and grid effects.",
			SubQuestions: []string{"How efficient are heat pumps in cold weather?", "What do they cost to install?", "How do they affect the grid?"},
			Queries: []pipeline.PlannedQuery{
				{Text: "heat pump efficiency cold climate", Kind: "web", SubQuestion: 1},
				{Text: "cold climate heat pump field trial COP", Kind: "academic", SubQuestion: 1},
				{Text: "air source heat pump installation cost", Kind: "web", SubQuestion: 2},
				{Text: "heat pump subsidies 2026", Kind: "news", SubQuestion: 2},
				{Text: "electrified heating winter peak demand", Kind: "web", SubQuestion: 3},
			},
			Sections:    []string{"Performance", "Cost", "Grid"},
			Methodology: "Compare field trials, price surveys and utility reports.",
			Warnings:    []string{},
			Confidence:  0.8,
		})
	case "source_relevance":
		out := pipeline.RankOutput{Judgements: []pipeline.Judgement{}}
		for i, id := range ids {
			out.Judgements = append(out.Judgements, pipeline.Judgement{SourceID: id, Relevance: 0.9 - 0.05*float64(i%10), Gist: fmt.Sprintf("Evidence item %d on the question.", id)})
		}
		return llmtest.JSON(out)
	case "analysis":
		if len(ids) == 0 { // e.g. a repair call, whose prompt carries no pages
			ids = []int{1}
		}
		out := pipeline.AnalysisOutput{
			Findings: []pipeline.FindingOutput{},
			Themes:   []string{"Efficiency holds up in the cold", "Upfront cost is the barrier"}, Contradictions: []string{},
			Gaps: []string{}, Confidence: 0.75, Sufficiency: "sufficient", RecommendedQueries: []pipeline.PlannedQuery{},
		}
		for i, id := range ids {
			if i == 4 {
				break
			}
			out.Findings = append(out.Findings, pipeline.FindingOutput{Text: fmt.Sprintf("Finding supported by source %d.", id), SourceIDs: []int{id}, Confidence: "high"})
		}
		if r.GapsOnAnalysis[n] {
			out.Gaps = []string{"long-term reliability", "performance in humid cold", "maintenance costs"}
			out.Sufficiency = "gaps_major"
			out.RecommendedQueries = []pipeline.PlannedQuery{{Text: "heat pump reliability ten years", Kind: "web", SubQuestion: 1}}
		}
		return llmtest.JSON(out)
	case "research_draft":
		cite := func(i int) string {
			if len(ids) == 0 {
				return ""
			}
			return fmt.Sprintf(" [%d]", ids[i%len(ids)])
		}
		perf := "Cold-climate units keep a useful coefficient of performance well below freezing" + cite(0) + "."
		if r.BadCitations {
			perf += " A vendor claims more [99], see [the brochure](http://unfetched.example/brochure)."
		}
		if r.QuoteUntrusted {
			perf += " One owner wrote: <!channel> see <http://evil.example|your bank> & more."
		}
		return llmtest.JSON(pipeline.DraftOutput{
			Title:    "Heat pumps in cold climates",
			Abstract: "Heat pumps work in cold climates; cost and grid peaks are the main concerns.",
			Sections: []pipeline.SectionOutput{
				{Title: "Performance", Content: perf},
				{Title: "Cost", Content: "Installed costs vary widely and subsidies matter" + cite(1) + "."},
				{Title: "Grid", Content: "Winter peaks rise with adoption" + cite(2) + "."},
			},
			Conclusion:    "Heat pumps are a sound choice in the cold, with planning for cost and peaks.",
			RevisionNotes: []string{},
		})
	case "critique":
		score := 8.5
		if len(r.ReviewScores) > 0 {
			score = r.ReviewScores[min(n, len(r.ReviewScores))-1]
		}
		out := pipeline.CritiqueOutput{Summary: fmt.Sprintf("Review %d.", n), ImprovementPotential: 0.3, Items: []pipeline.CritiqueItem{}}
		for _, name := range []string{"accuracy", "completeness", "coherence", "citation", "methodology", "style"} {
			out.Criteria = append(out.Criteria, pipeline.CriterionScore{Name: name, Score: score, Comment: "ok"})
		}
		if score < 7.5 {
			out.Items = append(out.Items, pipeline.CritiqueItem{Category: "completeness", Severity: "major", Location: "Cost", Description: "Cost section is thin.", SuggestedFix: "Add ranges."})
		}
		if r.CriticalOnReview[n] {
			out.Items = append(out.Items, pipeline.CritiqueItem{Category: "accuracy", Severity: "critical", Location: "Performance", Description: "A figure does not match its source.", SuggestedFix: "Quote the source's figure."})
		}
		return llmtest.JSON(out)
	}
	return llmtest.Reply{Status: 400, ErrorCode: "unknown_schema", ErrorMessage: "the fake researcher does not know schema " + c.SchemaName}
}
