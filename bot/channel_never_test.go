package bot

import (
	"context"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// TestWithChannelNever: a run started in a channel gets the channel's
// remembered never list, except the domains it allows explicitly. (Saving
// to that list is bot/neverdomain's TestSaveNeverDomain.)
func TestWithChannelNever(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	defaults := redisstore.NewChannelDefaults(h.rdb, "rb:")
	h.app.cfg.Start.Defaults = defaults
	if err := defaults.Put(ctx, "C0CHAN", map[string]string{"depth": "quick", "only_domains": "example.org", "never_domains": "ads.example,spam.example"}); err != nil {
		t.Fatal(err)
	}
	if rules := h.app.withChannelNever(ctx, "C0CHAN", pipeline.DomainRules{Only: []string{"ads.example"}}); rules.String() != "only ads.example · never spam.example" {
		t.Errorf("a run in the channel gets %q", rules)
	}
}
