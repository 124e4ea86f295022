package pipeline

import (
	"testing"
)

func estimateRun(d Depth) *Run {
	return &Run{ID: "r-est", Question: "q", Depth: d, Limits: Limits{MaxIterations: 3, MaxGapRounds: 2}}
}

func TestEstimateMonotonicInDepth(t *testing.T) {
	var prev Estimate
	for i, d := range []Depth{DepthQuick, DepthStandard, DepthComprehensive} {
		e := EstimatePlan(estimateRun(d), 2.5, 10)
		if e.LLMCalls <= 0 || e.Tokens <= 0 || e.CostUSD <= 0 || e.Duration <= 0 || e.Searches <= 0 || e.PagesToRead <= 0 {
			t.Fatalf("%s: estimate has a non-positive field: %+v", d, e)
		}
		if i > 0 {
			if e.LLMCalls < prev.LLMCalls || e.Tokens <= prev.Tokens || e.CostUSD <= prev.CostUSD || e.Duration <= prev.Duration || e.Searches <= prev.Searches || e.PagesToRead <= prev.PagesToRead {
				t.Errorf("%s estimate %+v is not above the shallower %+v", d, e, prev)
			}
		}
		prev = e
	}
}

func TestEstimatePagesByDepth(t *testing.T) {
	for d, want := range map[Depth]int{DepthQuick: 6, DepthStandard: 12, DepthComprehensive: 20, "": 12} {
		if got := EstimatePlan(estimateRun(d), 1, 1).PagesToRead; got != want {
			t.Errorf("%q: pages %d, want %d", d, got, want)
		}
	}
	r := estimateRun(DepthQuick)
	r.Limits.MaxSources = 30
	if got := EstimatePlan(r, 1, 1).PagesToRead; got != 30 {
		t.Errorf("MaxSources ignored: pages %d", got)
	}
}

func TestEstimateMonotonicInPrice(t *testing.T) {
	r := estimateRun(DepthStandard)
	free := EstimatePlan(r, 0, 0)
	if free.CostUSD != 0 {
		t.Errorf("free model costs %v", free.CostUSD)
	}
	prices := [][2]float64{{0.15, 0.6}, {1, 0.6}, {1, 4}, {2.5, 10}, {15, 60}}
	var prev float64
	for _, p := range prices {
		e := EstimatePlan(r, p[0], p[1])
		if e.CostUSD <= prev {
			t.Errorf("price %v: cost %v not above %v", p, e.CostUSD, prev)
		}
		if e.Tokens != free.Tokens || e.LLMCalls != free.LLMCalls || e.Duration != free.Duration {
			t.Errorf("price changed something other than cost")
		}
		prev = e.CostUSD
	}
}

func TestEstimateCounts(t *testing.T) {
	// Standard: 10 queries, no gap round, 80 results → 4 ranker calls,
	// 1 analyst call, 2 write rounds → 4 writer+reviewer calls.
	e := EstimatePlan(estimateRun(DepthStandard), 1, 1)
	if e.Searches != 10 || e.LLMCalls != 4+1+4 {
		t.Errorf("standard estimate = %+v", e)
	}
	// The plan's pending queries take precedence over the depth's count.
	r := estimateRun(DepthStandard)
	r.Queries = []Query{{Status: "pending"}, {Status: "pending"}, {Status: "completed"}}
	if got := EstimatePlan(r, 1, 1).Searches; got != 2 {
		t.Errorf("searches from the plan = %d, want 2", got)
	}
	// Quick: 5 queries, 40 results → 2 ranker calls, 1 analyst call, one
	// write round. Comprehensive: 15+3 queries, 144 results → 8 ranker
	// calls, 2 analyst calls, two write rounds.
	if got := EstimatePlan(estimateRun(DepthQuick), 1, 1).LLMCalls; got != 2+1+2 {
		t.Errorf("quick calls = %d, want 5", got)
	}
	if e := EstimatePlan(estimateRun(DepthComprehensive), 1, 1); e.LLMCalls != 8+2+4 || e.Searches != 18 {
		t.Errorf("comprehensive estimate = %+v", e)
	}
	// Negative prices cost nothing rather than money back.
	if got := EstimatePlan(estimateRun(DepthQuick), -5, -5).CostUSD; got != 0 {
		t.Errorf("negative price gives cost %v", got)
	}
}
