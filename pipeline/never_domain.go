package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/researchbot/researchbot/checkpoints"
)

// ErrNotSourceReview is returned by NeverDomain when the run's current
// checkpoint is not a source review.
var ErrNotSourceReview = errors.New("the current checkpoint is not a source review")

// NeverDomainReason starts the reason kept on a source a person excluded
// with "never use this domain" at the source review.
const NeverDomainReason = "excluded at source review"

// NeverDomain is "never use this domain" at a run's source review: domain
// joins the run's never list (and leaves its only list), so no later step
// reads it (fetches, redirects and later search rounds refuse it), every
// unread source under it is excluded as a person's exclusion with the
// reason "excluded at source review by <by> (never <domain>)" (listed
// among the unread sources of the report's "How this report was made"),
// the trace records who did it, and the checkpoint, still open, shows the
// sources left. It returns the run as stored and the normalised domain.
// Whether by may decide the run is the caller's rule.
func (e *Engine) NeverDomain(ctx context.Context, instanceID, by, domain string) (*Run, string, error) {
	d, err := normalizeDomain(domain)
	if err != nil {
		return nil, "", fmt.Errorf("never use %q: %w", clipText(domain, 80), err)
	}
	r, err := e.changeCurrent(ctx, instanceID, func(r *Run, inst *checkpoints.Instance) error {
		if inst.ControlType != checkpoints.SourceReview {
			return ErrNotSourceReview
		}
		excluded := r.neverDomain(d, by)
		raw, err := json.Marshal(r.sourcesPayload())
		if err != nil {
			return fmt.Errorf("encode checkpoint payload: %w", err)
		}
		inst.Payload = raw
		r.dropExcludedOptions(inst)
		r.trace(e.cfg.Clock.Now(), r.Step, "%s chose never to use %s at source review (unread sources excluded: %d)", flatLine(by), d, excluded)
		return nil
	})
	return r, d, err
}

// neverDomain adds d to the run's never list and excludes every unread
// source under it, returning how many.
func (r *Run) neverDomain(d, by string) int {
	r.Domains.Only = slices.DeleteFunc(r.Domains.Only, func(o string) bool { return o == d })
	if !slices.Contains(r.Domains.Never, d) {
		r.Domains.Never = append(r.Domains.Never, d)
	}
	n := 0
	for i := range r.Sources {
		s := &r.Sources[i]
		if s.Fetched || s.Excluded {
			continue
		}
		if (DomainRules{Never: []string{d}}).RefusalOfURL(s.URL) == "" {
			continue
		}
		s.Excluded, s.Selected, s.Relevant = true, false, false
		s.FetchErr = fmt.Sprintf("%s by %s (never %s)", NeverDomainReason, flatLine(by), d)
		n++
	}
	r.selectSources()
	return n
}

// dropExcludedOptions takes the sources excluded since inst was offered out
// of its Edit form: the options filled from the run's sources
// (RuntimeOptions) and the pre-filled relevant ones, so the form offers
// only what the review lists.
func (r *Run) dropExcludedOptions(inst *checkpoints.Instance) {
	listed := map[string]bool{}
	for _, v := range r.sourcesPayload().Sources {
		listed[strconv.Itoa(v.ID)] = true
	}
	for i := range inst.Fields {
		if f := &inst.Fields[i]; f.RuntimeOptions && f.Type == checkpoints.FieldMultiSelect {
			f.Options = slices.DeleteFunc(slices.Clone(f.Options), func(o checkpoints.Option) bool { return !listed[o.Value] })
		}
	}
	if _, ok := inst.Values[checkpoints.KeyRelevant]; ok {
		if v := r.sourceValues(); v != nil {
			inst.Values[checkpoints.KeyRelevant] = v[checkpoints.KeyRelevant]
		} else {
			delete(inst.Values, checkpoints.KeyRelevant)
		}
	}
}
