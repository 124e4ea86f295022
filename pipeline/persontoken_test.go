package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

const workspaceText = "We moved the build cache to the new cluster on 2 March; heat pumps work in the server room too."

// workspaceSearcher is a backend that returns a workspace message whole,
// and notes a skip when the run has no person token.
type workspaceSearcher struct {
	mu     sync.Mutex
	tokens []string
	askers []string
}

func (w *workspaceSearcher) Search(_ context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	w.mu.Lock()
	w.tokens = append(w.tokens, q.PersonToken.Reveal())
	w.askers = append(w.askers, q.Asker)
	w.mu.Unlock()
	if q.PersonToken == "" {
		return pipeline.SearchOutcome{Notes: []string{"Workspace search skipped: no permission token from the person who asked"}}
	}
	return pipeline.SearchOutcome{Hits: []pipeline.Hit{{
		Key: "https://acme.slack.com/archives/C1/p1772409600000100", URL: "https://acme.slack.com/archives/C1/p1772409600000100",
		Title: "#infra — @dana", Snippet: workspaceText[:40], Text: workspaceText, Kind: pipeline.KindWorkspace,
		Published: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC), Authors: []string{"@dana"}, Heuristic: 0.9,
	}}}
}

func (w *workspaceSearcher) Fetch(_ context.Context, u string) (pipeline.Document, error) {
	return pipeline.Document{}, fmt.Errorf("%s must not be fetched: its text came with the hit", u)
}

// citeOne is the scripted model whose writer cites source 1 with a quote.
type citeOne struct{ *scripted }

func (m citeOne) Generate(ctx context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	if p.Name != "research_draft" {
		return m.scripted.Generate(ctx, p, out)
	}
	s := "The build cache moved on 2 March [1]."
	v := pipeline.DraftOutput{Title: "Build cache", Abstract: "It moved.", Conclusion: "Yes.",
		Sections: []pipeline.SectionOutput{{Title: "Move", Content: s}},
		Claims:   []pipeline.ClaimOutput{{Sentence: s, SourceID: 1, Quote: "We moved the build cache to the new cluster on 2 March"}}}
	b, _ := json.Marshal(v)
	return pipeline.Usage{Calls: 1}, json.Unmarshal(b, out)
}

func runWorkspace(t *testing.T, token pipeline.PersonToken) (*pipeline.Run, *workspaceSearcher) {
	t.Helper()
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	w := &workspaceSearcher{}
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: citeOne{&scripted{reviews: []pipeline.CritiqueOutput{passes}}}, Searcher: w, Fetcher: w,
		Presenters: map[string]pipeline.Presenter{"test": &presenter{}}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Start(ctx, pipeline.Request{
		Question: "Where did the build cache move?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}, Audience: pipeline.ChannelAudience("C1"), PersonToken: token,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Report == nil {
		t.Fatalf("run %s at %s (%s), want a report", r.Status, r.Step, r.FallbackReason)
	}
	return r, w
}

// TestWorkspaceSourceIsReadFromItsHitAndCited: a message a backend returns
// whole is read from its text (never fetched), cited "[1] #infra — @dana,
// 2026-03-02 <permalink>"; the person's token reaches the searcher with
// the asker and is gone from the run once it ends.
func TestWorkspaceSourceIsReadFromItsHitAndCited(t *testing.T) {
	r, w := runWorkspace(t, "xoxa-action-secret")
	want := "[1] #infra — @dana, 2026-03-02 <https://acme.slack.com/archives/C1/p1772409600000100>\n"
	if !strings.Contains(r.Report.Markdown, want) {
		t.Errorf("the report does not cite %q:\n%s", want, r.Report.Markdown)
	}
	if len(r.Pages) != 1 || r.Pages[0].Text != workspaceText || r.Sources[0].Content != "" {
		t.Errorf("pages %+v; source content %q: want the message read from its hit, its text moved to the page", r.Pages, r.Sources[0].Content)
	}
	if len(w.tokens) == 0 || w.tokens[0] != "xoxa-action-secret" || w.askers[0] != "U1" {
		t.Errorf("searches got tokens %q for %q, want the run's token for U1", w.tokens, w.askers)
	}
	if r.PersonToken != "" {
		t.Errorf("the ended run still keeps the person's token")
	}
}

// TestNoPersonTokenSaysSo: without a token the backend's note is stated
// once in the report.
func TestNoPersonTokenSaysSo(t *testing.T) {
	r, _ := runWorkspace(t, "")
	line := "- Workspace search skipped: no permission token from the person who asked\n"
	if strings.Count(r.Report.Markdown, line) != 1 {
		t.Errorf("the report should say once %q:\n%s", line, r.Report.Markdown)
	}
}

// TestPersonTokenIsNeverPrinted: fmt and slog show no token (a Run is
// stored with it as JSON while it works, and is never logged whole).
func TestPersonTokenIsNeverPrinted(t *testing.T) {
	tok := pipeline.PersonToken("xoxa-action-secret")
	r := pipeline.Run{ID: "r-1", PersonToken: tok}
	req := pipeline.Request{PersonToken: tok}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("run", "token", tok, "req", req)
	for _, s := range []string{fmt.Sprintf("%v %+v %#v %s", r, r, r, tok), fmt.Sprintf("%+v", req), buf.String()} {
		if strings.Contains(s, "secret") {
			t.Errorf("the token is printed: %s", s)
		}
	}
}
