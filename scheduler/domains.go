package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// SetDomains replaces the stream's domain rules (what its digest runs may
// read: only, never), normalised (pipeline.DomainRules.Normalize, whose
// error names every bad entry). Only the owner or an admin may
// (ErrNotAllowed). Empty rules refuse nothing.
func (s *Service) SetDomains(ctx context.Context, name, actor string, isAdmin bool, rules pipeline.DomainRules) (*Stream, error) {
	rules, err := rules.Normalize()
	if err != nil {
		return nil, err
	}
	return s.change(ctx, name, actor, isAdmin, func(st *Stream, _ time.Time) { st.Domains = rules })
}

// NeverDomain adds domain to the never list of the stream with id (and
// takes it off its only list): "never use this site" at a digest's source
// review, chosen by actor, who may decide that digest. It returns the
// stream's name.
func (s *Service) NeverDomain(ctx context.Context, id, domain, actor string) (string, error) {
	d, err := (pipeline.DomainRules{Never: []string{domain}}).Normalize()
	if err != nil {
		return "", err
	}
	var name string
	err = updateStream(ctx, s.cfg.Store, id, func(st *Stream) (bool, error) {
		name = st.Spec.Name
		if slices.Contains(st.Domains.Never, d.Never[0]) {
			return false, nil
		}
		if len(st.Domains.Never) >= pipeline.MaxDomainRules {
			return false, fmt.Errorf("stream %q already has %d sites on its never list", st.Spec.Name, pipeline.MaxDomainRules)
		}
		st.Domains.Only = slices.DeleteFunc(slices.Clone(st.Domains.Only), func(o string) bool { return o == d.Never[0] })
		st.Domains.Never = append(slices.Clone(st.Domains.Never), d.Never[0])
		return true, nil
	})
	if err != nil {
		return "", err
	}
	s.log.Info("site added to a stream's never list", "stream", id, "domain", d.Never[0], "by", actor)
	return name, nil
}
