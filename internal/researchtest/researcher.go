package researchtest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
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
	// MadeUpClaim makes the first draft add a cited sentence whose quote is
	// in no page (MadeUpSentence); a revision drops it when its prompt names
	// it as unsupported.
	MadeUpClaim bool
	// FuzzyQuote makes the writer change the case, punctuation and one word
	// of the quote for its first cited sentence.
	FuzzyQuote bool
	// Contradiction makes the analysis report that the first two pages
	// disagree.
	Contradiction bool
	// ClarifyingQuestions are what every plan asks the person before
	// researching, with Assumptions its plan makes (none: a clear question).
	ClarifyingQuestions []pipeline.ClarifyingQuestion
	Assumptions         []string
	// IrrelevantOnRank lists 1-based ranker calls that judge every result
	// irrelevant (relevance 0.1).
	IrrelevantOnRank map[int]bool
	// Before may replace the reply to call n (1-based) of a schema, e.g.
	// with a 429 or malformed JSON; nil keeps the scripted reply.
	Before func(schema string, n int) *llmtest.Reply
	// Seen, when set, is shown every call as it arrives (a test checks what
	// the prompts carried).
	Seen func(c llmtest.Call)
	// Delay is a fixed latency per call (benchmarks).
	Delay time.Duration
	// DelayFor, when set, adds a latency to call n of a schema (crash tests).
	DelayFor func(schema string, n int) time.Duration
	// Queries, when set, replace the plan's search queries (a test whose
	// sources are not about heat pumps, such as a document collection).
	Queries []pipeline.PlannedQuery
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
	if r.Seen != nil {
		r.Seen(c)
	}
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

// MadeUpSentence is the cited sentence MadeUpClaim adds, before its citation.
const MadeUpSentence = "Heat pumps cut heating bills by ninety percent in every home"

// madeUpQuote is the quote MadeUpClaim gives for it: in no page.
const madeUpQuote = "heat pumps cut every heating bill by ninety percent in all homes"

var (
	pageBlockRe = regexp.MustCompile(`(?s)<untrusted_data kind="web_page" source_id="(\d+)">\n(.*?)\n</untrusted_data>`)
	itemRe      = regexp.MustCompile(`(?m)^\[(\d+)\] (?:CRITICAL|MAJOR|MINOR|SUGGESTION|ISSUE|From a person)`)
	searchRe    = regexp.MustCompile(`(?s)<untrusted_data kind="poor_search" query_id="(q\d+)">\nSearch: ([^\n]*)`)
)

// quotes returns, per source id, the first twelve words of each page excerpt
// in a writer prompt: text the page really holds.
func quotes(prompt string) map[int]string {
	out := map[int]string{}
	for _, m := range pageBlockRe.FindAllStringSubmatch(prompt, -1) {
		id, _ := strconv.Atoi(m[1])
		_, body, ok := strings.Cut(m[2], "\n\n")
		if !ok {
			continue
		}
		words := strings.Fields(strings.ReplaceAll(body, "[…truncated]", ""))
		out[id] = strings.Join(words[:min(12, len(words))], " ")
	}
	return out
}

// fuzz changes a quote's case and punctuation and replaces one word.
func fuzz(q string) string {
	words := strings.Fields(strings.ToUpper(q))
	if len(words) > 3 {
		words[2] = "SOMETHING"
	}
	return strings.Join(words, " ") + "!"
}

func (r *Researcher) answer(c llmtest.Call, n int) llmtest.Reply {
	ids := idsIn(c.User)
	switch c.SchemaName {
	case "research_plan":
		plan := pipeline.PlanOutput{
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
			Methodology: fmt.Sprintf("Compare field trials, price surveys and utility reports (plan %d).", n),
			Warnings:    []string{},
			Confidence:  0.8,
			Assumptions: append([]string{}, r.Assumptions...), ClarifyingQuestions: append([]pipeline.ClarifyingQuestion{}, r.ClarifyingQuestions...),
		}
		if r.Queries != nil {
			plan.Queries = r.Queries
		}
		return llmtest.JSON(plan)
	case "source_relevance":
		out := pipeline.RankOutput{Judgements: []pipeline.Judgement{}}
		for i, id := range ids {
			rel := 0.9 - 0.05*float64(i%10)
			if r.IrrelevantOnRank[n] {
				rel = 0.1
			}
			out.Judgements = append(out.Judgements, pipeline.Judgement{SourceID: id, Relevance: rel, Gist: fmt.Sprintf("Evidence item %d on the question.", id)})
		}
		return llmtest.JSON(out)
	case "query_reformulation":
		out := pipeline.ReformulationOutput{Queries: []pipeline.ReformulatedQuery{}}
		for _, m := range searchRe.FindAllStringSubmatch(c.User, -1) {
			out.Queries = append(out.Queries, pipeline.ReformulatedQuery{QueryID: m[1], Text: m[2] + " field measurements", Kind: "academic"})
		}
		return llmtest.JSON(out)
	case "analysis":
		if len(ids) == 0 { // e.g. a repair call, whose prompt carries no pages
			ids = []int{1}
		}
		out := pipeline.AnalysisOutput{
			SubQuestions: []pipeline.CoverageOutput{},
			Findings:     []pipeline.FindingOutput{},
			Themes:       []string{"Efficiency holds up in the cold", "Upfront cost is the barrier"}, Contradictions: []pipeline.ContradictionOutput{},
			Gaps: []string{}, Confidence: 0.75, Sufficiency: "sufficient", RecommendedQueries: []pipeline.PlannedQuery{},
		}
		for i, id := range ids {
			if i == 4 {
				break
			}
			out.Findings = append(out.Findings, pipeline.FindingOutput{Text: fmt.Sprintf("Finding supported by source %d.", id), SourceIDs: []int{id}, Evidence: "weak"})
		}
		for q := 1; q <= 3; q++ {
			out.SubQuestions = append(out.SubQuestions, pipeline.CoverageOutput{Number: q, Status: "answered", Summary: fmt.Sprintf("Sub-question %d is answered.", q), SourceIDs: []int{ids[(q-1)%len(ids)]}})
		}
		if r.Contradiction && len(ids) >= 2 {
			out.Contradictions = append(out.Contradictions, pipeline.ContradictionOutput{
				Topic:      "Efficiency at minus 15",
				SideA:      pipeline.SideOutput{Claim: "Field trials measured a seasonal COP of 2.8", SourceIDs: []int{ids[0]}},
				SideB:      pipeline.SideOutput{Claim: "Certification only requires a COP of 1.75", SourceIDs: []int{ids[1]}},
				Assessment: "The figures measure different things; the field trial is the better guide.",
			})
		}
		if r.GapsOnAnalysis[n] {
			out.Gaps = []string{"long-term reliability", "performance in humid cold", "maintenance costs"}
			out.Sufficiency = "gaps_major"
			out.RecommendedQueries = []pipeline.PlannedQuery{{Text: "heat pump reliability ten years", Kind: "web", SubQuestion: 1}}
		}
		return llmtest.JSON(out)
	case "research_draft":
		return llmtest.JSON(r.draft(c, ids))
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
	case "follow_up_answer":
		return llmtest.JSON(followUpAnswer(c, ids))
	}
	return llmtest.Reply{Status: 400, ErrorCode: "unknown_schema", ErrorMessage: "the fake researcher does not know schema " + c.SchemaName}
}

// draft writes a draft citing the pages in the prompt, with a quote from
// each cited page for each cited sentence.
func (r *Researcher) draft(c llmtest.Call, ids []int) pipeline.DraftOutput {
	quoteOf := quotes(c.User)
	revising := strings.Contains(c.User, "REVISION MODE")
	out := pipeline.DraftOutput{
		Title:         "Heat pumps in cold climates",
		Abstract:      "Heat pumps work in cold climates; cost and grid peaks are the main concerns.",
		Conclusion:    "Heat pumps are a sound choice in the cold, with planning for cost and peaks.",
		Claims:        []pipeline.ClaimOutput{},
		RevisionNotes: []string{},
		Addressed:     []int{},
	}
	// sentence writes a sentence citing the i-th page, with its claim.
	sentence := func(text string, i int) string {
		if len(ids) == 0 {
			return text + "."
		}
		id := ids[i%len(ids)]
		s := fmt.Sprintf("%s [%d].", text, id)
		q := quoteOf[id]
		if r.FuzzyQuote && i == 0 {
			q = fuzz(q)
		}
		out.Claims = append(out.Claims, pipeline.ClaimOutput{Sentence: s, SourceID: id, Quote: q})
		return s
	}
	perf := sentence("Cold-climate units keep a useful coefficient of performance well below freezing", 0)
	if r.MadeUpClaim && len(ids) > 0 && !(revising && strings.Contains(c.User, MadeUpSentence)) {
		s := fmt.Sprintf("%s [%d].", MadeUpSentence, ids[0])
		perf += " " + s
		out.Claims = append(out.Claims, pipeline.ClaimOutput{Sentence: s, SourceID: ids[0], Quote: madeUpQuote})
	}
	if r.BadCitations {
		perf += " A vendor claims more [99], see [the brochure](http://unfetched.example/brochure)."
	}
	if r.QuoteUntrusted {
		perf += " One owner wrote: <!channel> see <http://evil.example|your bank> & more."
	}
	out.Sections = []pipeline.SectionOutput{
		{Title: "Performance", Content: perf},
		{Title: "Cost", Content: sentence("Installed costs vary widely and subsidies matter", 1)},
		{Title: "Grid", Content: sentence("Winter peaks rise with adoption", 2)},
	}
	if revising {
		for _, m := range itemRe.FindAllStringSubmatch(c.User, -1) {
			n, _ := strconv.Atoi(m[1])
			out.Addressed = append(out.Addressed, n)
		}
		out.RevisionNotes = []string{"Addressed the critique."}
	}
	return out
}

// UnansweredTopic is a word that makes the fake researcher say the sources
// do not answer a follow-up question that names it.
const UnansweredTopic = "noise"

var followUpQuestionRe = regexp.MustCompile(`(?s)<untrusted_data kind="question">\n(.*?)\n</untrusted_data>`)

// followUpAnswer answers a follow-up question from the first page in the
// prompt, quoting it, and adds a citation of a source the report does not
// cite ([99]); a question naming UnansweredTopic is not answered.
func followUpAnswer(c llmtest.Call, ids []int) pipeline.AskOutput {
	q := ""
	if m := followUpQuestionRe.FindStringSubmatch(c.User); m != nil {
		q = m[1]
	}
	if strings.Contains(strings.ToLower(q), UnansweredTopic) || len(ids) == 0 {
		return pipeline.AskOutput{Claims: []pipeline.ClaimOutput{}, Missing: "The sources say nothing about " + UnansweredTopic + "."}
	}
	quote := quotes(c.User)[ids[0]]
	sentence := fmt.Sprintf("The first source says: %s [%d].", quote, ids[0])
	return pipeline.AskOutput{
		Answerable: true,
		Answer:     sentence + " Another study agrees [99].",
		Claims:     []pipeline.ClaimOutput{{Sentence: sentence, SourceID: ids[0], Quote: quote}},
		Missing:    "",
	}
}
