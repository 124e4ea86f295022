package pipeline

// The rank step: the model judges the sources' relevance in batches, each
// score combines it with the source's own signals, poor searches may be
// reformulated, and the best sources are selected to be read within the
// run's page budget.

import (
	"context"
	"sort"
	"strings"

	"github.com/researchbot/researchbot/checkpoints"
)

// ---- rank ----

func (e *Engine) stepRank(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	var todo []int
	for i, s := range r.Sources {
		if !s.Ranked && !s.Excluded {
			todo = append(todo, i)
		}
	}
	for start := 0; start < len(todo) && !e.overBudget(r); start += rankBatchSize {
		batch := todo[start:min(start+rankBatchSize, len(todo))]
		srcs := make([]Source, len(batch))
		for j, i := range batch {
			srcs[j] = r.Sources[i]
		}
		var subs []string
		if r.Plan != nil {
			subs = r.Plan.SubQuestions
		}
		system, user := RankerPrompt(r.Question, subs, r.Notes, srcs)
		var out RankOutput
		if err := e.generate(ctx, r, RoleRanker, "source_relevance", system, user, &out); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Ranking is an aid: without it, the sources' own signals decide.
			r.recordError(now, StepRank, "llm", "relevance ranking failed; using the sources' own signals: "+err.Error())
			break
		}
		for _, j := range out.Judgements {
			for _, i := range batch {
				if r.Sources[i].ID == j.SourceID {
					r.Sources[i].Relevance = clamp01(j.Relevance)
					r.Sources[i].Gist = strings.TrimSpace(j.Gist)
					r.Sources[i].Ranked = true
				}
			}
		}
	}
	for i := range r.Sources {
		s := &r.Sources[i]
		if !s.Ranked {
			s.Relevance = s.Heuristic
		}
		s.Score = 0.4*s.Heuristic + 0.6*s.Relevance
	}
	r.selectSources()
	if again, err := e.reformulate(ctx, r); err != nil {
		return err
	} else if again {
		r.Step = StepSearch
		return nil
	}
	if len(r.Sources) == 0 {
		if r.restrictedToNew() {
			r.Step = StepOutput
			return nil
		}
		r.recordError(now, StepRank, "search", "no search backend returned any result")
	}
	r.Step = StepFetch
	r.trace(now, StepRank, "ranked %d sources; %d selected to read", len(r.Sources), r.countSelected())
	_, err := e.pause(ctx, r, checkpoints.AfterSearch)
	return err
}

func (r *Run) restrictedToNew() bool { return !r.Since.IsZero() || len(r.Known.URLs) > 0 }

// ranked returns source indexes, best first: marked relevant, then by score.
func (r *Run) ranked() []int {
	idx := make([]int, 0, len(r.Sources))
	for i := range r.Sources {
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool {
		sa, sb := r.Sources[idx[a]], r.Sources[idx[b]]
		if sa.Relevant != sb.Relevant {
			return sa.Relevant
		}
		return sa.Score > sb.Score
	})
	return idx
}

// selectSources chooses what to read: sources marked relevant, then the best
// ranked, up to the run's page budget (pages already read count). Each
// gap-filling round adds a third of the budget, so what it finds gets read.
func (r *Run) selectSources() {
	base := EstimatePages(r)
	budget := base + r.Counters.GapRounds*max(2, base/3)
	for _, s := range r.Sources {
		if s.Fetched {
			budget--
		}
	}
	for _, i := range r.ranked() {
		s := &r.Sources[i]
		if s.Fetched || s.FetchErr != "" {
			continue
		}
		s.Selected = !s.Excluded && budget > 0 && (s.Relevant || s.Score > 0 || s.Heuristic >= 0)
		if s.Selected {
			budget--
		}
	}
}

func (r *Run) countSelected() int {
	n := 0
	for _, s := range r.Sources {
		if s.Selected && !s.Fetched {
			n++
		}
	}
	return n
}
