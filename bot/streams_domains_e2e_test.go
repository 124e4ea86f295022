package bot_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// TestStreamNeverListExcludesASiteFromItsDigest: the owner gives a stream
// a never list with "/research stream domains"; someone else may not; the
// stream's details show it; its digest run has the list, reads nothing
// from that site and keeps its results as excluded by the run's rules.
func TestStreamNeverListExcludesASiteFromItsDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("a research run")
	}
	h := newStreamsE2E(t)
	spec := scheduler.Spec{
		Channel: streamChannel, Purpose: "Follow heat pumps", BusinessGoals: []string{"Plan"}, ExpectedOutcomes: "Decisions",
		Name: "Site Watch", Type: scheduler.TypeMarket, FocusAreas: []string{"Cold climates"}, Keywords: []string{"heat pump"},
		Frequency: scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}
	if _, err := h.svc.Create(h.ctx, spec, streamOwner); err != nil {
		t.Fatal(err)
	}
	const site = "127.0.0.2" // the fake web's second host
	h.slash(streamOther, "stream domains Site Watch --never-domain "+site)
	h.ephemeralFor(streamOther, "Nothing was changed")
	h.slash(streamOwner, "stream domains Site Watch --never-domain not_a_site")
	h.ephemeralFor(streamOwner, "not_a_site")
	h.slash(streamOwner, "stream domains Site Watch --never-domain "+site)
	h.ephemeralFor(streamOwner, "never "+site)
	h.slash(streamOwner, "stream show Site Watch")
	h.ephemeralFor(streamOwner, "*Sources:* never "+site)

	h.slash(streamOwner, "stream run Site Watch")
	h.ephemeralFor(streamOwner, "Started a digest of")
	st := h.digestDone("Site Watch", 1)
	r, err := h.engine.Load(h.ctx, st.Digests[0].RunID)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Domains.Never, site) {
		t.Fatalf("the digest run's rules are %q, want never %s", r.Domains, site)
	}
	refused := 0
	for _, s := range r.Sources {
		u, _ := url.Parse(s.URL)
		if u == nil || u.Hostname() != site {
			continue
		}
		if s.Fetched {
			t.Errorf("the digest read %s", s.URL)
		}
		if strings.HasPrefix(s.FetchErr, pipeline.DomainRulesReason) {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("no result of %s was refused by the stream's rules; sources %+v", site, r.Sources)
	}
}
