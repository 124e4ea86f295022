package pipeline_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// The people and conversations of the boundary tests: U1 asks; C_PUB is a
// public channel, C_PRIV a private channel U1 is in, G_MPIM a group DM of
// U1's, D_OTHER U1's DM with someone else, D_BOT U1's DM (or assistant
// thread) with the bot.
const (
	askerU1 = "U1"
	cPub    = "C_PUB"
	cPriv   = "C_PRIV"
	gMPIM   = "G_MPIM"
	dOther  = "D_OTHER"
	dBot    = "D_BOT"
)

// sourceKind is one kind of source with the Visibility its backend (or the
// bot, for a shared file) gives it.
type sourceKind struct {
	name string
	vis  pipeline.Visibility
	file bool // a shared file (Request.Files), not a search hit
}

var sourceKinds = []sourceKind{
	{name: "web page"},
	{name: "public-channel message"},
	{name: "private-channel message", vis: pipeline.Visibility{Conversation: cPriv, Reader: askerU1}},
	{name: "DM message", vis: pipeline.Visibility{Conversation: dOther, Reader: askerU1}},
	{name: "group DM message", vis: pipeline.Visibility{Conversation: gMPIM, Reader: askerU1}},
	{name: "file shared in a public channel", file: true},
	{name: "file shared in the private channel", vis: pipeline.Visibility{Conversation: cPriv, Reader: askerU1}, file: true},
	{name: "file shared in the DM with the bot", vis: pipeline.Visibility{Conversation: dBot, Reader: askerU1}, file: true},
	{name: "document collection"},
	{name: "MCP server result"},
}

// audienceKind is one kind of audience, with the source kinds it may read.
type audienceKind struct {
	name     string
	audience pipeline.Audience
	permits  []string
}

var audienceKinds = []audienceKind{
	{"public channel", pipeline.ChannelAudience(cPub), []string{
		"web page", "public-channel message", "file shared in a public channel", "document collection", "MCP server result"}},
	{"the private channel", pipeline.ChannelAudience(cPriv), []string{
		"web page", "public-channel message", "private-channel message", "file shared in a public channel",
		"file shared in the private channel", "document collection", "MCP server result"}},
	{"asker's DM or assistant thread", pipeline.PersonAudience(dBot, askerU1), []string{
		"web page", "public-channel message", "private-channel message", "DM message", "group DM message",
		"file shared in a public channel", "file shared in the private channel", "file shared in the DM with the bot",
		"document collection", "MCP server result"}},
	{"another person's DM", pipeline.PersonAudience("D_U2", "U2"), []string{
		"web page", "public-channel message", "file shared in a public channel", "document collection", "MCP server result"}},
	{"terminal", pipeline.PersonAudience("", "terminal"), []string{
		"web page", "public-channel message", "file shared in a public channel", "document collection", "MCP server result"}},
	{"unknown (zero) audience", pipeline.Audience{}, []string{
		"web page", "public-channel message", "file shared in a public channel", "document collection", "MCP server result"}},
}

// TestAudiencePermits is invariant 12's table: every source kind against
// every audience kind.
func TestAudiencePermits(t *testing.T) {
	for _, a := range audienceKinds {
		for _, s := range sourceKinds {
			want := slices.Contains(a.permits, s.name)
			if got := a.audience.Permits(s.vis); got != want {
				t.Errorf("a %s report may use a %s: %v, want %v", a.name, s.name, got, want)
			}
		}
	}
}

// secret is the text only a source of this kind carries (its snippet, its
// page, its file).
func secret(kind string) string {
	return "marker " + strings.ReplaceAll(kind, " ", "-") + " says heat pumps work"
}

// boundaryWeb returns one hit of each searchable source kind, each with a
// snippet and a page that only it carries.
type boundaryWeb struct{}

func (boundaryWeb) Search(_ context.Context, _ pipeline.SearchRequest) pipeline.SearchOutcome {
	var hits []pipeline.Hit
	for i, s := range sourceKinds {
		if s.file {
			continue
		}
		hits = append(hits, pipeline.Hit{
			URL: fmt.Sprintf("https://example.org/%d", i), Title: s.name, Snippet: secret(s.name),
			Heuristic: 0.9, Visibility: s.vis,
		})
	}
	return pipeline.SearchOutcome{Hits: hits}
}

func (boundaryWeb) Fetch(_ context.Context, u string) (pipeline.Document, error) {
	var i int
	if _, err := fmt.Sscanf(u, "https://example.org/%d", &i); err != nil {
		return pipeline.Document{}, err
	}
	return pipeline.Document{URL: u, Title: sourceKinds[i].name, Text: "The page: " + secret(sourceKinds[i].name) + "."}, nil
}

// boundaryModel is the scripted model whose writer cites every source
// number there could be, and which answers follow-ups.
type boundaryModel struct{ *scripted }

func (m boundaryModel) Generate(ctx context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	var v any
	switch p.Name {
	case "follow_up_answer":
		v = pipeline.AskOutput{Answerable: false, Missing: "nothing"}
	case "research_draft":
		d := pipeline.DraftOutput{Title: "Heat pumps in the cold", Abstract: "They work.", Conclusion: "Yes."}
		var cites []string
		for id := 1; id <= len(sourceKinds); id++ {
			s := fmt.Sprintf("Heat pumps work [%d].", id)
			cites = append(cites, s)
			d.Claims = append(d.Claims, pipeline.ClaimOutput{Sentence: s, SourceID: id, Quote: "heat pumps work"})
		}
		d.Sections = []pipeline.SectionOutput{{Title: "Efficiency", Content: strings.Join(cites, " ")}}
		v = d
	default:
		return m.scripted.Generate(ctx, p, out)
	}
	m.mu.Lock()
	m.prompts[p.Name] = append(m.prompts[p.Name], p.User)
	m.mu.Unlock()
	b, _ := json.Marshal(v)
	return pipeline.Usage{Calls: 1}, json.Unmarshal(b, out)
}

// TestBoundaryHoldsInRuns: for every audience kind, a run given every kind
// of source keeps exactly those its audience may read. A withheld source is
// never stored (no source, no page, no file text), never reaches a prompt
// (plan, ranking, analysis, writing, review, follow-up answers), is
// counted, and the report says how many were withheld and why.
func TestBoundaryHoldsInRuns(t *testing.T) {
	for _, a := range audienceKinds {
		t.Run(a.name, func(t *testing.T) {
			ctx := context.Background()
			_, rdb := redistest.Start(t)
			store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
			m := boundaryModel{&scripted{reviews: []pipeline.CritiqueOutput{passes}, prompts: map[string][]string{}}}
			eng, err := pipeline.New(pipeline.Config{
				Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
				Model: m, Searcher: boundaryWeb{}, Fetcher: boundaryWeb{},
				Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
				NewID: func() string { return "r-1" },
			})
			if err != nil {
				t.Fatal(err)
			}
			req := pipeline.Request{
				Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: askerU1,
				Origin: pipeline.Origin{Kind: "test", Queue: "runs"}, Audience: a.audience,
				Limits: pipeline.Limits{MaxSources: 20},
			}
			for i, s := range sourceKinds {
				if s.file {
					req.Files = append(req.Files, pipeline.File{Name: fmt.Sprintf("shared-%d.md", i), Kind: "markdown", Bytes: 60, Text: secret(s.name), SharedIn: s.vis.Conversation, SharedBy: s.vis.Reader})
				}
			}
			if _, err := eng.Start(ctx, req); err != nil {
				t.Fatal(err)
			}
			if err := eng.Advance(ctx, "r-1"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := eng.Ask(ctx, "r-1", "What do the sources say about the cold?", askerU1); err != nil {
				t.Fatal(err)
			}
			r, err := store.Load(ctx, "r-1")
			if err != nil {
				t.Fatal(err)
			}
			// The writer cites numbers no source has, so the run may end
			// partial: with a report all the same.
			if r.Report == nil {
				t.Fatalf("run %s at %s (%s), want a report", r.Status, r.Step, r.FallbackReason)
			}
			stored, _ := json.Marshal(r)
			var prompts []string
			for _, ps := range m.prompts {
				prompts = append(prompts, ps...)
			}
			all := strings.Join(prompts, "\n")
			if len(m.prompts["follow_up_answer"]) != 1 {
				t.Fatalf("follow-up prompts: %d, want 1", len(m.prompts["follow_up_answer"]))
			}
			withheld := 0
			for _, s := range sourceKinds {
				mark := secret(s.name)
				if slices.Contains(a.permits, s.name) {
					if !strings.Contains(all, mark) {
						t.Errorf("no prompt carries the %s, which the audience may read", s.name)
					}
					if !strings.Contains(m.prompts["follow_up_answer"][0], mark) {
						t.Errorf("the follow-up answer's prompt lacks the %s", s.name)
					}
					continue
				}
				withheld++
				if strings.Contains(all, mark) {
					t.Errorf("a prompt carries the withheld %s", s.name)
				}
				if strings.Contains(string(stored), mark) || strings.Contains(r.Report.Markdown, mark) {
					t.Errorf("the run stores the withheld %s's text", s.name)
				}
				for _, src := range r.Sources {
					if src.Title == s.name {
						t.Errorf("the withheld %s is a source of the run: %+v", s.name, src)
					}
				}
			}
			if r.Withheld.Count != withheld {
				t.Errorf("withheld %d, want %d", r.Withheld.Count, withheld)
			}
			line := pipeline.WithheldText(withheld)
			if withheld > 0 && !strings.Contains(r.Report.Markdown, "- "+line+"\n") {
				t.Errorf("the report does not say %q:\n%s", line, r.Report.Markdown)
			}
			if withheld == 0 && strings.Contains(r.Report.Markdown, "withheld") {
				t.Errorf("the report speaks of withheld sources, with none:\n%s", r.Report.Markdown)
			}
			for _, f := range r.Files {
				if f.Withheld && strings.Contains(r.Report.Markdown, f.Name) {
					t.Errorf("the report names the withheld file %s", f.Name)
				}
			}
		})
	}
}
