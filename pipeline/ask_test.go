package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// asker is a Model that answers follow-up questions with a scripted output
// and a fixed cost, and records the prompts it was sent.
type asker struct {
	mu      sync.Mutex
	out     pipeline.AskOutput
	prompts []string
}

func (m *asker) Generate(_ context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p.Name != "follow_up_answer" {
		return pipeline.Usage{}, errors.New("unexpected prompt " + p.Name)
	}
	m.prompts = append(m.prompts, p.User)
	b, _ := json.Marshal(m.out)
	return pipeline.Usage{Calls: 1, PromptTokens: 900, CompletionTokens: 100, CostUSD: 0.0125}, json.Unmarshal(b, out)
}

// Page texts of the finished run the follow-up tests ask about.
const (
	defrostText = "During defrost cycles the heat pump reverses for about five minutes every hour when the outdoor air is humid and near freezing."
	costText    = "Typical installed cost ranged from 9,000 to 15,000 EUR for a detached house in 2025."
)

// finishedRun stores a completed run whose report cites two pages: source
// 7 as [1] and source 4 as [2].
func finishedRun(t *testing.T) (*pipeline.Engine, *asker, *redisstore.Store) {
	t.Helper()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	m := &asker{}
	ids := []string{"r-child", "r-child2"}
	var idMu sync.Mutex
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: m, Searcher: web{}, Fetcher: web{}, Clock: researchtest.NewClock(t0),
		NewID: func() string {
			idMu.Lock()
			defer idMu.Unlock()
			id := ids[0]
			ids = ids[1:]
			return id
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &pipeline.Run{
		ID: "r-parent", Question: "How well do heat pumps work in cold climates?", Mode: "guided", Depth: pipeline.DepthQuick,
		RequestedBy: "U1", Origin: pipeline.Origin{Kind: "test", Queue: "runs"}, Status: pipeline.StatusCompleted, Step: pipeline.StepDone,
		Presented: true, CreatedAt: t0, Spend: pipeline.Spend{CostUSD: 0.5, LLMCalls: 10},
		Sources: []pipeline.Source{
			{ID: 4, URL: "https://example.org/cost", Title: "Retrofit costs", Fetched: true},
			{ID: 7, URL: "https://example.org/defrost", Title: "Defrost cycles", Fetched: true},
			{ID: 9, URL: "https://example.org/noise", Title: "Noise", Relevant: true},
		},
		Pages: []pipeline.Page{
			{SourceID: 4, URL: "https://example.org/cost", Title: "Retrofit costs", Text: costText},
			{SourceID: 7, URL: "https://example.org/defrost", Title: "Defrost cycles", Text: defrostText},
			{SourceID: 8, URL: "https://example.org/uncited", Title: "Not cited", Text: "Heat pumps are sold in many colours and sizes today."},
		},
		Report: &pipeline.Report{
			Title: "Heat pumps in the cold", Abstract: "Heat pumps work in cold climates but defrost often [1] and cost 9,000–15,000 EUR [2].",
			References: []pipeline.Reference{
				{N: 1, SourceID: 7, Title: "Defrost cycles", URL: "https://example.org/defrost"},
				{N: 2, SourceID: 4, Title: "Retrofit costs", URL: "https://example.org/cost"},
			},
		},
	}
	storeRun(t, store, r)
	return eng, m, store
}

// storeRun stores r as it is: created bare (as a new run must be), then saved.
func storeRun(t *testing.T, store *redisstore.Store, r *pipeline.Run) {
	t.Helper()
	bare := &pipeline.Run{ID: r.ID, Question: r.Question, Mode: r.Mode, Depth: r.Depth, RequestedBy: r.RequestedBy, Origin: r.Origin, Status: pipeline.StatusQueued, Step: pipeline.StepPlan, CreatedAt: r.CreatedAt}
	if err := store.Create(context.Background(), bare); err != nil {
		t.Fatal(err)
	}
	r.Version = bare.Version
	if err := store.Save(context.Background(), r); err != nil {
		t.Fatal(err)
	}
}

// TestAskAnswersFromTheReportsSourcesWithCheckedCitations: the answer cites
// the report's reference numbers; a citation of a page the report does not
// cite is removed, a quote that is in its page is verified, one that is not
// is unsupported; the follow-up and its cost are saved with the run.
func TestAskAnswersFromTheReportsSourcesWithCheckedCitations(t *testing.T) {
	eng, m, store := finishedRun(t)
	ctx := context.Background()
	m.out = pipeline.AskOutput{
		Answerable: true,
		Answer:     "Defrost cycles reverse the heat pump for about five minutes every hour [1]. Colours vary [3]. It costs little to run [2].",
		Claims: []pipeline.ClaimOutput{
			{Sentence: "Defrost cycles reverse the heat pump for about five minutes every hour [1].", SourceID: 1, Quote: "the heat pump reverses for about five minutes every hour"},
			{Sentence: "It costs little to run [2].", SourceID: 2, Quote: "running costs are lower than any gas boiler in every home"},
		},
	}
	r, f, err := eng.Ask(ctx, "r-parent", "What did [1] say about defrost cycles?", "U2")
	if err != nil {
		t.Fatal(err)
	}
	if !f.Answered || f.ID != "r-parent.f1" || f.By != "U2" {
		t.Fatalf("follow-up %+v", f)
	}
	if strings.Contains(f.Answer, "[3]") || !strings.Contains(f.Answer, "[1]") {
		t.Errorf("answer %q: [3] names no source of the report and must go; [1] must stay", f.Answer)
	}
	if tally := pipeline.TallyClaims(f.Claims); tally.Verified != 1 || tally.Unsupported != 1 {
		t.Errorf("claims %s: %+v", tally, f.Claims)
	}
	if len(m.prompts) != 1 || !strings.Contains(m.prompts[0], defrostText) || strings.Contains(m.prompts[0], "many colours") {
		t.Errorf("the prompt must carry the cited pages and no other:\n%s", m.prompts[0])
	}
	if !strings.Contains(m.prompts[0], `source_id="1"`) || strings.Contains(m.prompts[0], `source_id="7"`) {
		t.Errorf("pages must be numbered by reference:\n%s", m.prompts[0])
	}
	stored, err := store.Load(ctx, "r-parent")
	if err != nil {
		t.Fatal(err)
	}
	if len(stored.FollowUps) != 1 || stored.FollowUps[0].Answer != f.Answer {
		t.Fatalf("stored follow-ups %+v", stored.FollowUps)
	}
	if got := stored.Spend.CostUSD; got < 0.5124 || got > 0.5126 || stored.Spend.LLMCalls != 11 {
		t.Errorf("spend %+v: the answer's $0.0125 and one call must be added to the run's", stored.Spend)
	}
	if r.Version != stored.Version {
		t.Errorf("Ask returned version %d, stored %d", r.Version, stored.Version)
	}
}

// TestAskSaysWhenTheSourcesDoNotAnswer: a model that says it cannot answer,
// and one whose every quote is made up, both give an unanswered follow-up
// with the reason.
func TestAskSaysWhenTheSourcesDoNotAnswer(t *testing.T) {
	eng, m, _ := finishedRun(t)
	ctx := context.Background()
	m.out = pipeline.AskOutput{Missing: "The sources say nothing about noise levels."}
	_, f, err := eng.Ask(ctx, "r-parent", "How loud are heat pumps at night?", "U2")
	if err != nil {
		t.Fatal(err)
	}
	if f.Answered || f.Answer != "" || !strings.Contains(f.Missing, "noise") {
		t.Errorf("follow-up %+v", f)
	}
	m.out = pipeline.AskOutput{Answerable: true, Answer: "They are silent [1].",
		Claims: []pipeline.ClaimOutput{{Sentence: "They are silent [1].", SourceID: 1, Quote: "heat pumps are completely silent at every hour of the night"}}}
	_, f, err = eng.Ask(ctx, "r-parent", "Are heat pumps silent at night?", "U2")
	if err != nil {
		t.Fatal(err)
	}
	if f.Answered || f.Answer != "" || f.ID != "r-parent.f2" {
		t.Errorf("an answer with no verified citation must not count as answered: %+v", f)
	}
	if _, _, err := eng.Ask(ctx, "r-parent", "why?", "U2"); err == nil {
		t.Error("a question shorter than a research question was taken")
	}
}

// TestStartFollowUpLinksParentAndChild: a run started for a follow-up
// carries the parent's context and names its parent; the parent's
// follow-up names the child; a second start for the same follow-up is
// refused with the child it already has.
func TestStartFollowUpLinksParentAndChild(t *testing.T) {
	eng, m, store := finishedRun(t)
	ctx := context.Background()
	m.out = pipeline.AskOutput{Missing: "Nothing on noise."}
	_, f, err := eng.Ask(ctx, "r-parent", "How loud are heat pumps at night?", "U2")
	if err != nil {
		t.Fatal(err)
	}
	child, err := eng.Start(ctx, pipeline.Request{FollowUpOf: f.ID, RequestedBy: "U2", Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if err != nil {
		t.Fatal(err)
	}
	if child.ID != "r-child" || child.Parent != "r-parent" || child.Question != f.Question || child.Depth != pipeline.DepthQuick {
		t.Errorf("child %s parent %q question %q depth %s", child.ID, child.Parent, child.Question, child.Depth)
	}
	for _, want := range []string{"r-parent", "How well do heat pumps work in cold climates?", "defrost often", "https://example.org/defrost", "https://example.org/noise", "Nothing on noise."} {
		if !strings.Contains(child.Context, want) {
			t.Errorf("child context lacks %q:\n%s", want, child.Context)
		}
	}
	parent, err := store.Load(ctx, "r-parent")
	if err != nil {
		t.Fatal(err)
	}
	if got := parent.FollowUpByID(f.ID); got == nil || got.Child != "r-child" {
		t.Fatalf("parent follow-up %+v", got)
	}
	_, err = eng.Start(ctx, pipeline.Request{FollowUpOf: f.ID, RequestedBy: "U3", Origin: pipeline.Origin{Kind: "test", Queue: "runs"}})
	if !errors.Is(err, pipeline.ErrFollowUpStarted) || !strings.Contains(err.Error(), "r-child") {
		t.Errorf("second start: %v", err)
	}
	if _, err := store.Load(ctx, "r-child2"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Errorf("a refused start stored a run: %v", err)
	}
}

// TestAskNeedsAReport: a run without a report has nothing to answer from.
func TestAskNeedsAReport(t *testing.T) {
	eng, _, store := finishedRun(t)
	ctx := context.Background()
	r, err := store.Load(ctx, "r-parent")
	if err != nil {
		t.Fatal(err)
	}
	r.ID, r.Report = "r-noreport", nil
	storeRun(t, store, r)
	if _, _, err := eng.Ask(ctx, "r-noreport", "What did the sources say?", "U2"); !errors.Is(err, pipeline.ErrNoReport) {
		t.Errorf("got %v, want ErrNoReport", err)
	}
}
