package app

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/researchbot/researchbot/pipeline"
)

// searchers asks several pipeline.Searchers at once (the configured
// backends, and those the caller adds in Options.Searchers, such as the
// Slack workspace) and joins their outcomes: hits, errors, notes and the
// first interruption (pipeline.SearchOutcome.Interrupted). One
// that fails or is slow never fails the others.
type searchers []pipeline.Searcher

func joinSearchers(first pipeline.Searcher, more []pipeline.Searcher) pipeline.Searcher {
	if len(more) == 0 {
		return first
	}
	return append(searchers{first}, more...)
}

// Kinds returns the kinds served by those searchers that say
// (pipeline.KindsServer), each once; nil when none says.
func (ss searchers) Kinds() []string {
	var out []string
	for _, s := range ss {
		if ks, ok := s.(pipeline.KindsServer); ok {
			for _, k := range ks.Kinds() {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// Reserve implements pipeline.SearchReserver: each searcher that reserves
// (pipeline.SearchReserver) does so for rs, the others are asked as they are.
func (ss searchers) Reserve(ctx context.Context, rs []pipeline.SearchRequest) pipeline.Searcher {
	out := make(searchers, len(ss))
	for i, s := range ss {
		if r, ok := s.(pipeline.SearchReserver); ok {
			s = r.Reserve(ctx, rs)
		}
		out[i] = s
	}
	return out
}

func (ss searchers) Search(ctx context.Context, r pipeline.SearchRequest) pipeline.SearchOutcome {
	outs := make([]pipeline.SearchOutcome, len(ss))
	var wg sync.WaitGroup
	for i, s := range ss {
		wg.Add(1)
		go func() { // owner: Search, which waits
			defer wg.Done()
			outs[i] = s.Search(ctx, r)
		}()
	}
	wg.Wait()
	var out pipeline.SearchOutcome
	for _, o := range outs {
		out.Hits = append(out.Hits, o.Hits...)
		out.Errors = append(out.Errors, o.Errors...)
		out.Notes = append(out.Notes, o.Notes...)
		out.Interrupted = cmp.Or(out.Interrupted, o.Interrupted)
	}
	if len(out.Hits) == 0 {
		out.Paced = allHeldBack(outs)
	}
	return out
}

// allHeldBack is the first searcher's Paced when every searcher that failed
// was held back by our rate limit (pipeline.SearchOutcome.Paced), nil
// otherwise.
func allHeldBack(outs []pipeline.SearchOutcome) error {
	var first error
	for _, o := range outs {
		if o.Paced == nil && len(o.Errors) > 0 {
			return nil
		}
		first = cmp.Or(first, o.Paced)
	}
	return first
}
