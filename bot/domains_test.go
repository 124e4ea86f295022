package bot

import (
	"strings"
	"testing"
)

// TestSlashCommandDomainRulesReachTheRun: /research --only-domain and
// --never-domain start a run with those rules; a bad domain is refused
// before any run starts, naming the entry.
func TestSlashCommandDomainRulesReachTheRun(t *testing.T) {
	h := newHarness(t, nil)
	h.startRun("--only-domain example.org --never-domain spam.example,ads.example.org How do RAG systems handle stale sources?")
	h.engine.mu.Lock()
	got := h.engine.runs["run-1"].Domains.String()
	h.engine.mu.Unlock()
	if got != "only example.org · never spam.example, ads.example.org" {
		t.Errorf("run's domain rules = %q", got)
	}

	ack := h.slash(requester, chanIn, "--never-domain not_a_domain How do RAG systems handle stale sources?")
	if !strings.Contains(string(ack.Payload), "not_a_domain") && !h.ephemeralTo(requester, "not_a_domain") {
		t.Errorf("the bad domain is not named: ack %s", ack.Payload)
	}
	h.engine.mu.Lock()
	n := len(h.engine.runs)
	h.engine.mu.Unlock()
	if n != 1 {
		t.Errorf("%d runs, want only the first", n)
	}
}
