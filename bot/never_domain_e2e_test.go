package bot_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestE2ENeverUseASiteAtTheSourceReview: at the source review the
// requester chooses "Never use <site>" for the first source's site: the
// checkpoint no longer lists that site, the person is told what was saved
// where and how to undo it, the run reads nothing from it and its report
// records the exclusion; a new run in the same channel has it in its never
// list. Someone else's choice changes nothing.
func TestE2ENeverUseASiteAtTheSourceReview(t *testing.T) {
	f := newStartFixture(t)
	ctx, cancel := context.WithTimeout(f.ctx, 60*time.Second)
	defer cancel()
	const question = "How well do heat pumps work in cold climates?"
	if _, err := f.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "--review-sources " + question, UserID: startUser, ChannelID: startChannel}); err != nil {
		t.Fatal(err)
	}
	m := waitCheckpoint(t, f.fake, startChannel, "Research plan")
	if _, err := f.fake.ClickButton(ctx, startUser, startChannel, m.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	m = waitCheckpoint(t, f.fake, startChannel, "Sources")
	r := f.run(question)
	inst := r.Current()
	var p pipeline.SourcesPayload
	if inst == nil || json.Unmarshal(inst.Payload, &p) != nil || len(p.Sources) == 0 {
		t.Fatalf("no sources at the source review: %+v", inst)
	}
	site := p.Sources[0].Domain
	if !strings.Contains(string(m.Blocks), `"Never use `+site+`"`) {
		t.Fatalf("the source review offers no \"Never use %s\": %s", site, m.Blocks)
	}

	// Someone who may not decide the run changes nothing.
	if _, err := f.fake.SelectOption(ctx, "U0OTHER01", startChannel, m.TS, blockkit.ActionNeverDomain, site); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the refusal", func() bool { return ephemeralContains(f.fake, "U0OTHER01", "Nothing was changed") })
	if r := f.run(question); len(r.Domains.Never) != 0 {
		t.Fatalf("another person's choice changed the run's rules: %s", r.Domains)
	}

	if _, err := f.fake.SelectOption(ctx, startUser, startChannel, m.TS, blockkit.ActionNeverDomain, site); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the confirmation", func() bool {
		return ephemeralContains(f.fake, startUser, "Never using "+site) && ephemeralContains(f.fake, startUser, "Saved to this channel") &&
			ephemeralContains(f.fake, startUser, "Never these sites")
	})
	f.waitFor("the source review without the site", func() bool {
		m, _, ok := pendingCheckpoint(f.fake, startChannel)
		return ok && !strings.Contains(string(m.Blocks), `"Never use `+site+`"`)
	})
	m = waitCheckpoint(t, f.fake, startChannel, "Sources")
	if _, err := f.fake.ClickButton(ctx, startUser, startChannel, m.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	m = waitCheckpoint(t, f.fake, startChannel, "Draft review")
	if _, err := f.fake.ClickButton(ctx, startUser, startChannel, m.TS, blockkit.ActionApprove, "", ""); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the report", func() bool { r := f.run(question); return r.Status.Final() })
	r = f.run(question)
	if r.Report == nil {
		t.Fatalf("no report: %s (%s)", r.Status, r.FallbackReason)
	}
	excluded := 0
	for _, s := range r.Sources {
		u, _ := url.Parse(s.URL)
		if u == nil || u.Hostname() != site {
			continue
		}
		if s.Fetched {
			t.Errorf("the run read %s after never use %s", s.URL, site)
		}
		if strings.HasPrefix(s.FetchErr, pipeline.NeverDomainReason) {
			excluded++
		}
	}
	if excluded == 0 {
		t.Errorf("no source of %s carries the person's exclusion", site)
	}
	if !strings.Contains(strings.Join(r.Report.Provenance.Unread, "\n"), "excluded at source review by "+startUser+" (never "+site+")") {
		t.Errorf("the report's unread sources do not record the exclusion: %q", r.Report.Provenance.Unread)
	}

	const next = "What do heat pumps cost to run?"
	if _, err := f.fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: next, UserID: startUser, ChannelID: startChannel}); err != nil {
		t.Fatal(err)
	}
	if r2 := f.run(next); !slices.Contains(r2.Domains.Never, site) {
		t.Errorf("a new run in the channel has rules %q, want never %s", r2.Domains, site)
	}
}

// ephemeralContains reports whether user was shown an ephemeral message
// containing want in the start channel.
func ephemeralContains(fake *slackfake.Server, user, want string) bool {
	for _, m := range fake.Messages(startChannel) {
		if m.Ephemeral && m.ToUser == user && strings.Contains(displayed(m)+m.Text, want) {
			return true
		}
	}
	return false
}
