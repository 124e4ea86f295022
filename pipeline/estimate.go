package pipeline

import (
	"cmp"
	"math"
	"time"
)

// The estimator's assumptions. They are deliberately simple and stated here
// so a person can check an estimate by hand.
const (
	// estCharsPerToken converts text length to tokens.
	estCharsPerToken = 4
	// estResultsPerQuery is how many distinct results one query yields
	// across backends, after deduplication.
	estResultsPerQuery = 8
	// estRankBatch is how many search results one ranker call judges.
	estRankBatch = 20
	// estGapQueries is how many queries one gap round adds.
	estGapQueries = 3

	// Tokens per call, besides the page text.
	estRankerSystem     = 700 // system prompt and instructions
	estRankerPerResult  = 150 // title, URL, snippet (~600 chars)
	estRankerOutPer     = 40  // one judgement
	estAnalystBase      = 1500
	estAnalystOut       = 2500 // findings, themes, both sides of each disagreement, per-sub-question coverage
	estWriterBase       = 2500 // instructions, analysis, source list
	estWriterOut        = 3500 // a whole report
	estClaimsOut        = 2000 // the claims: ~25 cited sentences, each repeated with a quote of up to 40 words
	estRevisionExtra    = 4500 // previous draft and critiques
	estReviewerBase     = 3000 // criteria, analysis, source list
	estReviewerOut      = 1500
	estPageFillFraction = 0.8 // pages fill this share of MaxSourceChars on average

	// Latencies: one LLM call of each role, one search round trip, one page.
	estRankerLatency   = 5 * time.Second
	estAnalystLatency  = 45 * time.Second
	estWriterLatency   = 60 * time.Second
	estReviewerLatency = 30 * time.Second
	estSearchLatency   = 3 * time.Second
	estFetchLatency    = 4 * time.Second
	// Parallelism of searches, ranker calls and fetches.
	estSearchParallel = 4
	estRankParallel   = 4
	estFetchParallel  = 8
)

// EstimatePages is how many pages a run reads: Limits.MaxSources when set,
// else 6 for quick, 12 for standard and 20 for comprehensive runs.
func EstimatePages(r *Run) int {
	if r.Limits.MaxSources > 0 {
		return r.Limits.MaxSources
	}
	switch r.Depth {
	case DepthQuick:
		return 6
	case DepthComprehensive:
		return 20
	}
	return 12
}

// expectedWriteRounds is how many write→review rounds a depth usually needs,
// within the revision bound: quick 1, standard 2, comprehensive 2 (plus the
// first draft, never more than 1+MaxIterations).
func expectedWriteRounds(r *Run) int {
	n := 2
	if r.Depth == DepthQuick {
		n = 1
	}
	return min(n, revisionLimit(r)+1)
}

// expectedGapRounds is how many analysis → search rounds a depth usually
// needs, within Limits.MaxGapRounds: quick 0, standard 0, comprehensive 1.
func expectedGapRounds(r *Run) int {
	n := 0
	if r.Depth == DepthComprehensive {
		n = 1
	}
	limit := r.Limits.MaxGapRounds
	limit = cmp.Or(limit, 2)
	return max(0, min(n, limit))
}

// EstimatePlan estimates an approved plan's LLM calls, tokens, cost (from
// USD per million input and output tokens), searches, pages read and
// duration, from the assumptions documented in this file:
//
//   - searches: the plan's pending queries (or the depth's query count
//     when none are known yet) plus 3 per expected gap round
//     (comprehensive: 1);
//   - ranker: ceil(searches × 8 results / 20) batched calls;
//   - analyst: one call per search round; the pages' text is
//     0.8 × MaxSourceChars characters each, 4 characters a token;
//   - writer and reviewer: one call each per expected write round (quick 1,
//     else 2, within the revision bound), the writer seeing page excerpts
//     of half that size and, when revising, the previous draft, and
//     writing a quote for each cited sentence (checking the quotes is code:
//     no call);
//   - duration: per-call latencies (ranker 5 s, analyst 45 s, writer 60 s,
//     reviewer 30 s, search 3 s, fetch 4 s) with searches ×4, ranker
//     calls ×4 and fetches ×8 in parallel.
//
// The planner's own call is not counted: the plan already exists. Nor is
// the call that rewrites searches whose results were all irrelevant: it is
// made only then, at most once a search round.
func EstimatePlan(r *Run, inPerMTok, outPerMTok float64) Estimate {
	pages := EstimatePages(r)
	_, depthQueries := DepthCounts(r.Depth)
	queries := 0
	for _, q := range r.Queries {
		if q.Status == "" || q.Status == "pending" {
			queries++
		}
	}
	queries = cmp.Or(queries, depthQueries)
	gapRounds := expectedGapRounds(r)
	searches := queries + gapRounds*estGapQueries
	rankCalls := ceilDiv(searches*estResultsPerQuery, estRankBatch)
	analystCalls := 1 + gapRounds
	writeRounds := expectedWriteRounds(r)

	pageTokens := int(float64(promptSourceChars(r))*estPageFillFraction) / estCharsPerToken
	var in, out int
	// Ranker.
	results := searches * estResultsPerQuery
	in += rankCalls*estRankerSystem + results*estRankerPerResult
	out += results * estRankerOutPer
	// Analyst: each round sees every page read so far; assume all of them.
	in += analystCalls * (estAnalystBase + pages*pageTokens)
	out += analystCalls * estAnalystOut
	// Writer and reviewer.
	for i := range writeRounds {
		in += estWriterBase + pages*pageTokens/writerExcerptDivisor
		if i > 0 {
			in += estRevisionExtra
		}
		out += estWriterOut + estClaimsOut
		in += estReviewerBase + estWriterOut
		out += estReviewerOut
	}

	calls := rankCalls + analystCalls + 2*writeRounds
	cost := float64(in)/1e6*max(inPerMTok, 0) + float64(out)/1e6*max(outPerMTok, 0)
	dur := time.Duration(ceilDiv(searches, estSearchParallel))*estSearchLatency +
		time.Duration(ceilDiv(rankCalls, estRankParallel))*estRankerLatency +
		time.Duration(ceilDiv(pages, estFetchParallel))*estFetchLatency +
		time.Duration(analystCalls)*estAnalystLatency +
		time.Duration(writeRounds)*(estWriterLatency+estReviewerLatency)
	return Estimate{
		LLMCalls:    calls,
		Tokens:      in + out,
		CostUSD:     math.Round(cost*1e4) / 1e4,
		Duration:    dur,
		Searches:    searches,
		PagesToRead: pages,
	}
}

// ceilDiv is a/b rounded up, for non-negative a and positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
