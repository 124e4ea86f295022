package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// These tests drive whole runs through their checkpoints on the real store,
// with a scripted model and web: the model's answers are fixed per prompt,
// and the reviewer's verdicts come from a script the test writes.

// scripted is a Model that answers each prompt with a fixed output; the
// reviewer's verdicts are taken in turn from reviews (the last one repeats).
type scripted struct {
	mu      sync.Mutex
	reviews []pipeline.CritiqueOutput
	reviewN int
	prompts map[string][]string // schema name → the user prompts it was sent
	// clarify are the clarifying questions every plan asks (none: a clear question).
	clarify []pipeline.ClarifyingQuestion
	// findings replace the analysis's one ungraded finding.
	findings []pipeline.FindingOutput
}

func (m *scripted) Generate(_ context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.prompts == nil {
		m.prompts = map[string][]string{}
	}
	m.prompts[p.Name] = append(m.prompts[p.Name], p.User)
	var v any
	switch p.Name {
	case "research_plan":
		plan := pipeline.PlanOutput{
			SubQuestions: []string{"How efficient are they?", "What do they cost?", "Where do they fail?"},
			Queries: []pipeline.PlannedQuery{
				{Text: "heat pump efficiency cold", Kind: "web", SubQuestion: 1}, {Text: "heat pump cost", Kind: "web", SubQuestion: 2},
				{Text: "heat pump failure", Kind: "web", SubQuestion: 3}, {Text: "heat pump COP", Kind: "web", SubQuestion: 1},
				{Text: "heat pump study", Kind: "academic", SubQuestion: 1},
			},
			Sections: []string{"Efficiency", "Cost", "Limits"}, Methodology: "web", Confidence: 0.8,
			ClarifyingQuestions: m.clarify,
		}
		if len(m.clarify) > 0 {
			plan.Assumptions = []string{fmt.Sprintf("plan %d assumes air-source heat pumps", len(m.prompts[p.Name]))}
		}
		v = plan
	case "source_relevance":
		v = pipeline.RankOutput{Judgements: []pipeline.Judgement{{SourceID: 1, Relevance: 0.9, Gist: "efficiency"}, {SourceID: 2, Relevance: 0.8, Gist: "cost"}}}
	case "analysis":
		a := pipeline.AnalysisOutput{Findings: []pipeline.FindingOutput{{Text: "They work", SourceIDs: []int{1}}}, Themes: []string{"efficiency"}, Confidence: 0.8, Sufficiency: "sufficient"}
		if m.findings != nil {
			a.Findings = m.findings
		}
		v = a
	case "research_draft":
		v = pipeline.DraftOutput{Title: "Heat pumps in the cold", Abstract: "They work.", Conclusion: "Yes.",
			Sections: []pipeline.SectionOutput{{Title: "Efficiency", Content: "Heat pumps keep working in the cold."}}}
	case "critique":
		v = m.reviews[min(m.reviewN, len(m.reviews)-1)]
		m.reviewN++
	default:
		return pipeline.Usage{}, fmt.Errorf("unexpected prompt %s", p.Name)
	}
	b, _ := json.Marshal(v)
	return pipeline.Usage{Calls: 1}, json.Unmarshal(b, out)
}

func (m *scripted) sent(name string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.prompts[name])
}

// verdict is a reviewer's output scoring every criterion score, with items
// of the given severities.
func verdict(score float64, severities ...string) pipeline.CritiqueOutput {
	var out pipeline.CritiqueOutput
	for _, c := range pipeline.ReviewCriteria() {
		out.Criteria = append(out.Criteria, pipeline.CriterionScore{Name: c.Name, Score: score})
	}
	for i, s := range severities {
		out.Items = append(out.Items, pipeline.CritiqueItem{Category: "accuracy", Severity: s, Description: fmt.Sprintf("issue %d", i+1)})
	}
	out.Summary = fmt.Sprintf("scored %.1f", score)
	out.ImprovementPotential = 0.5
	return out
}

var (
	passes   = verdict(9)
	critical = verdict(6, "critical")
)

type web struct{}

func (web) Search(_ context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	var hits []pipeline.Hit
	for i := 1; i <= 3; i++ {
		u := fmt.Sprintf("https://example.org/page%d", i)
		hits = append(hits, pipeline.Hit{URL: u, Title: fmt.Sprintf("Page %d", i), Snippet: q.Text, Heuristic: 0.5})
	}
	return pipeline.SearchOutcome{Hits: hits}
}

func (web) Fetch(_ context.Context, u string) (pipeline.Document, error) {
	return pipeline.Document{URL: u, Title: u, Text: "Heat pumps keep working in the cold, the study of " + u + " says."}, nil
}

// flow is one engine on a private redis-server, driven step by step.
type flow struct {
	t     *testing.T
	store *redisstore.Store
	model *scripted
	eng   *pipeline.Engine
	pres  *presenter
	clock *researchtest.Clock
	rdb   *redis.Client // the flow's redis-server
}

// definitionsStore lets a test make reading the definitions fail.
type definitionsStore struct {
	*redisstore.Store
	fail bool
}

func (s *definitionsStore) Definitions(ctx context.Context) ([]checkpoints.Definition, error) {
	if s.fail {
		return nil, errors.New("redis: connection reset by peer")
	}
	return s.Store.Definitions(ctx)
}

func newFlow(t *testing.T, reviews ...pipeline.CritiqueOutput) (*flow, *definitionsStore) {
	t.Helper()
	_, rdb := redistest.Start(t)
	f := &flow{t: t, store: redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{}), model: &scripted{reviews: reviews}, pres: &presenter{}, clock: researchtest.NewClock(t0), rdb: rdb}
	ds := &definitionsStore{Store: f.store}
	eng, err := pipeline.New(pipeline.Config{
		Store: ds, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: f.model, Searcher: web{}, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": f.pres}, Clock: f.clock,
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	if err := eng.SeedDefinitions(context.Background()); err != nil {
		t.Fatal(err)
	}
	return f, ds
}

// define stores a definition (a custom one, or a built-in changed).
func (f *flow) define(d checkpoints.Definition) {
	f.t.Helper()
	if err := f.store.PutDefinition(context.Background(), d); err != nil {
		f.t.Fatal(err)
	}
}

// custom is an enabled custom definition at pos with one text field.
func custom(id string, pos checkpoints.Position, order int, required bool) checkpoints.Definition {
	return checkpoints.Definition{
		ID: id, ControlType: "custom", Label: "Check " + id, Position: pos, SortOrder: order,
		Modes: []string{checkpoints.ModeGuided, checkpoints.ModeFull}, Required: required, MaxRetries: 1, Enabled: true,
		Fields:  []checkpoints.Field{{Key: "audience", Type: checkpoints.FieldText, Label: "Audience"}},
		Actions: []checkpoints.Action{checkpoints.Approve, checkpoints.Edit, checkpoints.Reject},
	}
}

// create stores a new run without advancing it.
func (f *flow) create(mode string, limits pipeline.Limits, reviewSources bool) {
	f.t.Helper()
	if _, err := f.eng.Start(context.Background(), pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: mode, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"}, Limits: limits, ReviewSources: reviewSources,
	}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *flow) start(mode string, limits pipeline.Limits, reviewSources bool) {
	f.t.Helper()
	f.create(mode, limits, reviewSources)
	f.advance()
}

func (f *flow) advance() *pipeline.Run {
	f.t.Helper()
	if err := f.eng.Advance(context.Background(), "r-1"); err != nil {
		f.t.Fatal(err)
	}
	return f.run()
}

func (f *flow) run() *pipeline.Run {
	f.t.Helper()
	r, err := f.store.Load(context.Background(), "r-1")
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// at checks that the run waits at the definition want and returns it.
func (f *flow) at(want string) checkpoints.Instance {
	f.t.Helper()
	r := f.run()
	inst := r.Current()
	if inst == nil {
		f.t.Fatalf("the run is %s at %s (%s), want it waiting at %s", r.Status, r.Step, r.FallbackReason, want)
	}
	if inst.DefinitionID != want {
		f.t.Fatalf("the run waits at %s, want %s", inst.DefinitionID, want)
	}
	return *inst
}

func (f *flow) decide(want string, d checkpoints.Decision) *pipeline.Run {
	f.t.Helper()
	inst := f.at(want)
	if d.By == "" {
		d.By = "U1"
	}
	if _, err := f.eng.Decide(context.Background(), inst.ID, d); err != nil {
		f.t.Fatalf("decide %s: %v", want, err)
	}
	return f.advance()
}

func (f *flow) approve(want string) *pipeline.Run {
	f.t.Helper()
	return f.decide(want, checkpoints.Decision{Action: checkpoints.Approve})
}

func (f *flow) finished(want pipeline.Status) *pipeline.Run {
	f.t.Helper()
	r := f.run()
	if r.Status != want {
		f.t.Fatalf("the run is %s at %s (waiting %q, fallback %q), want %s", r.Status, r.Step, r.Waiting, r.FallbackReason, want)
	}
	return r
}

func approve() checkpoints.Decision { return checkpoints.Decision{Action: checkpoints.Approve} }

func TestCheckpointsAtOnePositionAreAskedInSortOrderBesideTheBuiltIn(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.define(custom("scope_check", checkpoints.AfterPlanning, 5, true))
	f.define(custom("budget_check", checkpoints.AfterPlanning, 20, false))
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)

	f.decide("scope_check", checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"audience": "facility managers <!channel>"}})
	f.approve(checkpoints.PlanReview) // the built-in is still asked, after the custom one sorted before it
	f.approve("budget_check")
	f.approve(checkpoints.DraftReview)
	r := f.finished(pipeline.StatusCompleted)

	var asked []string
	for _, inst := range r.Checkpoints {
		asked = append(asked, inst.DefinitionID)
	}
	if want := []string{"scope_check", checkpoints.PlanReview, "budget_check", checkpoints.DraftReview}; !slices.Equal(asked, want) {
		t.Fatalf("asked %v, want %v", asked, want)
	}
	for _, id := range asked {
		if !containsAny(r.Report.Provenance.Decisions, id+": ") {
			t.Errorf("the provenance does not record %s: %q", id, r.Report.Provenance.Decisions)
		}
	}
	// The custom answer reaches the writer as data, in its own block.
	writer := f.model.sent("research_draft")
	if len(writer) == 0 || !strings.Contains(writer[0], `checkpoint="scope_check"`) || !strings.Contains(writer[0], "Audience: facility managers") {
		t.Fatalf("the writer's prompt does not carry the custom answer as feedback:\n%s", writer)
	}
}

func TestACustomRejectionSendsThePlanBackAndAsksTheRestAgain(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.define(custom("scope_check", checkpoints.AfterPlanning, 5, true))
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)

	r := f.decide("scope_check", checkpoints.Decision{Action: checkpoints.Reject, Note: "only residential buildings"})
	if r.Counters.PlanRounds != 2 {
		t.Fatalf("%d plans, want a second one after the rejection", r.Counters.PlanRounds)
	}
	if planner := f.model.sent("research_plan"); !strings.Contains(planner[1], "only residential buildings") {
		t.Fatalf("the planner did not get the rejection's note:\n%s", planner[1])
	}
	f.approve("scope_check") // asked again on the new plan, the plan review with it
	f.approve(checkpoints.PlanReview)
	f.approve(checkpoints.DraftReview)
	f.finished(pipeline.StatusCompleted)
}

func TestSkipPassesOverAnOptionalCheckpointOnly(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.define(custom("tone_check", checkpoints.AfterPlanning, 5, false))
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	ctx := context.Background()

	inst := f.at("tone_check")
	if _, err := f.eng.Skip(ctx, inst.ID, "U2"); err != nil {
		t.Fatal(err)
	}
	f.advance()
	plan := f.at(checkpoints.PlanReview)
	if _, err := f.eng.Skip(ctx, plan.ID, "U2"); !errors.Is(err, checkpoints.ErrCannotSkipRequired) {
		t.Fatalf("skipping the required plan review: %v", err)
	}
	f.approve(checkpoints.PlanReview)
	f.approve(checkpoints.DraftReview)
	r := f.finished(pipeline.StatusCompleted)
	if !containsAny(r.Report.Provenance.Decisions, "tone_check: skipped") {
		t.Fatalf("the skip is not in the provenance: %q", r.Report.Provenance.Decisions)
	}
}

// failing is a presenter whose Offer fails while broken is set.
type failing struct {
	*presenter
	mu       sync.Mutex
	broken   bool
	stranded []string
}

func (p *failing) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	p.mu.Lock()
	broken := p.broken
	p.mu.Unlock()
	if broken {
		return errors.New("slack is down")
	}
	return p.presenter.Offer(ctx, r, inst)
}

func (p *failing) Stranded(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stranded = append(p.stranded, inst.DefinitionID)
	return nil
}

func (p *failing) fix() { p.mu.Lock(); p.broken = false; p.mu.Unlock() }

// strand starts a guided run whose plan review cannot be shown, and
// advances it until the plan review's retries are used up.
func strand(t *testing.T) (*flow, *failing) {
	_, rdb := redistest.Start(t)
	f := &flow{t: t, store: redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{}), model: &scripted{reviews: []pipeline.CritiqueOutput{passes}}}
	p := &failing{presenter: &presenter{}, broken: true}
	eng, err := pipeline.New(pipeline.Config{
		Store: f.store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: f.model, Searcher: web{}, Fetcher: web{},
		Presenters: map[string]pipeline.Presenter{"test": p}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	f.eng = eng
	f.create(checkpoints.ModeGuided, pipeline.Limits{}, false)
	for range 10 {
		if err := eng.Advance(context.Background(), "r-1"); err == nil {
			break
		}
	}
	r := f.run()
	if r.Stranded == "" || r.Status != pipeline.StatusWaiting || !slices.Equal(p.stranded, []string{checkpoints.PlanReview}) {
		t.Fatalf("the run is %s, stranded %q, told %v: want it waiting for a person at the plan review", r.Status, r.Stranded, p.stranded)
	}
	if r.NeedsWorker() {
		t.Fatal("a stranded run asks for a worker: it would be retried without end")
	}
	return f, p
}

func TestRetryShowsAStrandedCheckpointAgain(t *testing.T) {
	f, p := strand(t)
	p.fix()
	inst := f.at(checkpoints.PlanReview)
	if _, err := f.eng.ContinueWithout(context.Background(), "r-1.nope", "UADMIN"); !errors.Is(err, pipeline.ErrNotCurrent) {
		t.Fatalf("continue without an unknown checkpoint: %v", err)
	}
	if _, err := f.eng.Retry(context.Background(), inst.ID, "U1"); err != nil {
		t.Fatal(err)
	}
	f.advance()
	if p.offers != 1 {
		t.Fatalf("%d offers shown after the retry, want 1", p.offers)
	}
	f.approve(checkpoints.PlanReview)
	f.approve(checkpoints.DraftReview)
	f.finished(pipeline.StatusCompleted)
}

func TestAnAdminContinuesWithoutAStrandedRequiredCheckpoint(t *testing.T) {
	f, p := strand(t)
	p.fix()
	inst := f.at(checkpoints.PlanReview)
	if _, err := f.eng.ContinueWithout(context.Background(), inst.ID, "UADMIN"); err != nil {
		t.Fatal(err)
	}
	f.advance()
	f.approve(checkpoints.DraftReview)
	r := f.finished(pipeline.StatusCompleted)
	if !containsAny(r.Report.Caveats, "The required Research plan checkpoint could not be shown (slack is down); UADMIN, an admin, continued without it.") {
		t.Fatalf("caveats %q", r.Report.Caveats)
	}
	if !containsAny(r.Report.Provenance.Decisions, "plan_review: skipped") {
		t.Fatalf("provenance %q", r.Report.Provenance.Decisions)
	}
}

func TestContinueWithoutRefusesACheckpointThatCanBeShown(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	inst := f.at(checkpoints.PlanReview)
	if _, err := f.eng.ContinueWithout(context.Background(), inst.ID, "UADMIN"); !errors.Is(err, pipeline.ErrNotStranded) {
		t.Fatalf("continue without a shown checkpoint: %v", err)
	}
}

func TestFailingToResolveCheckpointsGoesOnWithoutThem(t *testing.T) {
	f, ds := newFlow(t, passes)
	f.create(checkpoints.ModeGuided, pipeline.Limits{}, false)
	ds.fail = true
	f.advance()
	r := f.finished(pipeline.StatusCompleted)
	if len(r.Checkpoints) != 0 {
		t.Fatalf("%d checkpoints asked", len(r.Checkpoints))
	}
	for _, pos := range []string{"after_planning", "before_output"} {
		if !containsAny(r.Report.Caveats, "The checkpoints at "+pos+" could not be loaded") {
			t.Errorf("the caveats do not say the %s checkpoints were left out: %q", pos, r.Report.Caveats)
		}
	}
}

func TestCriticalIssuesOfferRealChoicesOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      checkpoints.Decision
		then   func(f *flow)
		status pipeline.Status
		check  func(t *testing.T, f *flow, r *pipeline.Run)
	}{
		{"revise with these issues", checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"guidance": "cite the field study"}},
			func(f *flow) { f.approve(checkpoints.DraftReview) }, pipeline.StatusCompleted,
			func(t *testing.T, f *flow, r *pipeline.Run) {
				// Draft 2 still has a critical issue: revised again, not asked again.
				if len(r.Drafts) != 3 || !strings.Contains(f.model.sent("research_draft")[1], "cite the field study") {
					t.Fatalf("%d drafts; the writer was not given the guidance", len(r.Drafts))
				}
			}},
		{"publish as it is", approve(), func(*flow) {}, pipeline.StatusCompleted,
			func(t *testing.T, _ *flow, r *pipeline.Run) {
				if len(r.Drafts) != 1 || !containsAny(r.Report.Caveats, "chose to publish it as it is") {
					t.Fatalf("%d drafts, caveats %q", len(r.Drafts), r.Report.Caveats)
				}
			}},
		{"stop and write what you have", checkpoints.Decision{Action: checkpoints.Reject, Note: "out of time"}, func(*flow) {}, pipeline.StatusPartial,
			func(t *testing.T, _ *flow, r *pipeline.Run) {
				if !strings.Contains(r.FallbackReason, "out of time") {
					t.Fatalf("fallback reason %q", r.FallbackReason)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every review finds a critical issue until the third: the
			// question is asked once all the same.
			f, _ := newFlow(t, critical, critical, passes)
			f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 3}, false)
			f.approve(checkpoints.PlanReview)
			tc.d.By = "U1"
			f.decide(checkpoints.CriticalIssues, tc.d)
			tc.then(f)
			r := f.finished(tc.status)
			n := 0
			for _, inst := range r.Checkpoints {
				if inst.DefinitionID == checkpoints.CriticalIssues {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("critical issues asked %d times, want once", n)
			}
			tc.check(t, f, r)
		})
	}
}

func TestCriticalIssuesAreNotAskedWhenNothingCanChange(t *testing.T) {
	f, _ := newFlow(t, critical)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
	f.approve(checkpoints.PlanReview)
	// First review: a revision is possible, so the question is asked.
	f.decide(checkpoints.CriticalIssues, checkpoints.Decision{Action: checkpoints.Edit})
	// The revised draft still has a critical issue at the bound: no more
	// choices to offer at the critical issues, but a person reviews the draft.
	inst := f.at(checkpoints.DraftReview)
	var p pipeline.DraftPayload
	if err := json.Unmarshal(inst.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Recommendation != "revise" || p.Summary != "scored 6.0" || !p.NotPassed || !p.AtRevisionLimit {
		t.Fatalf("the draft review does not show the reviewer's verdict: %+v", p)
	}
}

func TestADraftAtTheRevisionBoundGoesToTheDraftReview(t *testing.T) {
	for _, mode := range []string{checkpoints.ModeGuided, checkpoints.ModeFull, checkpoints.ModeAuto} {
		t.Run(mode, func(t *testing.T) {
			f, _ := newFlow(t, verdict(6, "major"))
			f.start(mode, pipeline.Limits{MaxIterations: 1}, false)
			if mode == checkpoints.ModeAuto {
				r := f.finished(pipeline.StatusPartial)
				if !strings.Contains(r.FallbackReason, "maximum revision iterations") {
					t.Fatalf("fallback %q", r.FallbackReason)
				}
				return
			}
			f.approve(checkpoints.PlanReview)
			if mode == checkpoints.ModeFull {
				f.approve(checkpoints.SourceReview)
			}
			f.approve(checkpoints.DraftReview)
			r := f.finished(pipeline.StatusCompleted)
			if len(r.Drafts) != 2 || !containsAny(r.Report.Caveats, "revision limit (1) reached before the draft passed review") {
				t.Fatalf("%d drafts, caveats %q", len(r.Drafts), r.Report.Caveats)
			}
		})
	}
}

func TestSourceReviewInAGuidedRunIsOptIn(t *testing.T) {
	for _, opt := range []bool{false, true} {
		t.Run(fmt.Sprint(opt), func(t *testing.T) {
			f, _ := newFlow(t, passes)
			f.start(checkpoints.ModeGuided, pipeline.Limits{}, opt)
			f.approve(checkpoints.PlanReview)
			if opt {
				f.approve(checkpoints.SourceReview)
			}
			f.approve(checkpoints.DraftReview)
			f.finished(pipeline.StatusCompleted)
		})
	}
}

func containsAny(lines []string, sub string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, sub) })
}

// rejected is a reviewer's verdict a revision cannot fix: a low score and
// almost no improvement potential.
func rejected() pipeline.CritiqueOutput {
	v := verdict(3, "major")
	v.ImprovementPotential = 0.1
	return v
}

func TestARejectedDraftGoesToTheDraftReviewInGuidedAndFullRuns(t *testing.T) {
	for _, mode := range []string{checkpoints.ModeGuided, checkpoints.ModeFull, checkpoints.ModeAuto} {
		t.Run(mode, func(t *testing.T) {
			f, _ := newFlow(t, rejected())
			f.start(mode, pipeline.Limits{MaxIterations: 3}, false)
			if mode == checkpoints.ModeAuto {
				r := f.finished(pipeline.StatusPartial)
				if !strings.Contains(r.FallbackReason, "draft rejected by the reviewer") {
					t.Fatalf("fallback %q", r.FallbackReason)
				}
				return
			}
			f.approve(checkpoints.PlanReview)
			if mode == checkpoints.ModeFull {
				f.approve(checkpoints.SourceReview)
			}
			inst := f.at(checkpoints.DraftReview)
			var p pipeline.DraftPayload
			if err := json.Unmarshal(inst.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if !p.NotPassed || p.AtRevisionLimit || p.Recommendation != "reject" || p.Score != 3 || p.Summary != "scored 3.0" {
				t.Fatalf("the draft review does not show the reviewer's verdict: %+v", p)
			}
		})
	}
}

func TestTheChoicesAtARejectedDraft(t *testing.T) {
	for _, tc := range []struct {
		name   string
		d      checkpoints.Decision
		status pipeline.Status
		check  func(t *testing.T, f *flow, r *pipeline.Run)
	}{
		{"publish with a caveat", approve(), pipeline.StatusCompleted, func(t *testing.T, _ *flow, r *pipeline.Run) {
			if len(r.Drafts) != 1 || !containsAny(r.Report.Caveats, "The reviewer did not pass draft 1 (score 3.0, recommended reject); U1 chose to publish it with this caveat.") {
				t.Fatalf("%d drafts, caveats %q", len(r.Drafts), r.Report.Caveats)
			}
		}},
		{"revise with my instructions", checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{checkpoints.KeyChanges: "cite the field study"}},
			pipeline.StatusWaiting, func(t *testing.T, f *flow, r *pipeline.Run) {
				if len(r.Drafts) != 2 || !strings.Contains(f.model.sent("research_draft")[1], "cite the field study") {
					t.Fatalf("%d drafts; the writer was not given the instructions", len(r.Drafts))
				}
				if inst := r.Current(); inst == nil || inst.DefinitionID != checkpoints.DraftReview {
					t.Fatalf("the revised, again rejected draft is not reviewed by a person: %+v", inst)
				}
			}},
		{"stop and write what you have", checkpoints.Decision{Action: checkpoints.Reject, Note: "out of time"}, pipeline.StatusPartial,
			func(t *testing.T, _ *flow, r *pipeline.Run) {
				if len(r.Drafts) != 1 || !strings.Contains(r.FallbackReason, "did not pass draft 1") || !strings.Contains(r.FallbackReason, "out of time") {
					t.Fatalf("%d drafts, fallback reason %q", len(r.Drafts), r.FallbackReason)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFlow(t, rejected())
			f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 3}, false)
			f.approve(checkpoints.PlanReview)
			tc.d.By = "U1"
			f.decide(checkpoints.DraftReview, tc.d)
			tc.check(t, f, f.finished(tc.status))
		})
	}
}

func TestApproveWithAnEmptyRequiredFieldIsRefusedWithTheFieldNamed(t *testing.T) {
	f, _ := newFlow(t, passes)
	c := custom("audience_check", checkpoints.AfterPlanning, 20, true)
	c.Fields[0].Required = true
	f.define(c)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
	f.approve(checkpoints.PlanReview)
	inst := f.at("audience_check")
	_, err := f.eng.Decide(context.Background(), inst.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "U1"})
	var ve *checkpoints.ValidationError
	if !errors.As(err, &ve) || len(ve.Fields) != 1 || ve.Fields[0].Key != "audience" {
		t.Fatalf("approve with the required audience empty: %v", err)
	}
	if cur := f.at("audience_check"); cur.State != inst.State || cur.Decision != nil {
		t.Fatalf("a refused approve changed the checkpoint: %+v", cur)
	}
	// Filled in with Edit, it passes.
	f.decide("audience_check", checkpoints.Decision{Action: checkpoints.Edit, Values: map[string]any{"audience": "engineers"}})
	f.approve(checkpoints.DraftReview)
	f.finished(pipeline.StatusCompleted)
}

func TestACheckpointThatApprovesOnTimeoutApprovesItselfAtItsDeadline(t *testing.T) {
	ctx := context.Background()
	f, _ := newFlow(t, passes)
	c := custom("audience_check", checkpoints.AfterPlanning, 20, true)
	c.Timeout, c.OnTimeout = time.Hour, checkpoints.TimeoutApprove
	f.define(c)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
	f.approve(checkpoints.PlanReview)
	inst := f.at("audience_check")
	if inst.OnTimeout != checkpoints.TimeoutApprove || !inst.DeadlineAt.Equal(f.clock.Now().Add(time.Hour)) {
		t.Fatalf("the instance does not carry its policy and deadline: %q %v", inst.OnTimeout, inst.DeadlineAt)
	}
	// A second early: nothing happens.
	f.clock.Advance(time.Hour - time.Second)
	if err := f.eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if cur := f.at("audience_check"); cur.Decision != nil {
		t.Fatalf("approved before its deadline: %+v", cur.Decision)
	}
	decided := f.pres.decided
	f.clock.Advance(time.Second)
	if err := f.eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r := f.run()
	got := r.Instance(inst.ID)
	if got.Decision == nil || got.Decision.Action != checkpoints.Approve || got.Decision.By != checkpoints.ByTimeout || got.State != checkpoints.StateCollapsed {
		t.Fatalf("at its deadline: state %s, decision %+v", got.State, got.Decision)
	}
	if f.pres.decided != decided+1 {
		t.Fatal("the thread was not told that it approved itself")
	}
	f.approve(checkpoints.DraftReview)
	f.finished(pipeline.StatusCompleted)
}

func TestTimeoutPolicyIsRemindByDefault(t *testing.T) {
	ctx := context.Background()
	f, _ := newFlow(t, passes)
	c := custom("audience_check", checkpoints.AfterPlanning, 20, true)
	c.Timeout = time.Hour
	f.define(c)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
	f.approve(checkpoints.PlanReview)
	f.at("audience_check")
	f.clock.Advance(time.Hour)
	if err := f.eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if cur := f.at("audience_check"); cur.Decision != nil || cur.Attempt != 2 {
		t.Fatalf("a checkpoint without the policy decided itself or was not reminded: attempt %d, %+v", cur.Attempt, cur.Decision)
	}
}

func TestARunStoppedAtACheckpointIsInterruptedAndAskedAgainOnResume(t *testing.T) {
	ctx := context.Background()
	f, _ := newFlow(t, passes)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 1}, false)
	inst := f.at(checkpoints.PlanReview)
	if err := f.eng.Interrupt(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r := f.run()
	if r.Status != pipeline.StatusInterrupted || !r.Deadline().IsZero() || r.NeedsWorker() {
		t.Fatalf("stopped at a checkpoint: status %s, deadline %v", r.Status, r.Deadline())
	}
	if _, err := f.eng.Resume(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if r := f.advance(); r.Status != pipeline.StatusWaiting || r.Current() == nil || r.Current().ID != inst.ID {
		t.Fatalf("resumed: status %s, waiting at %v", r.Status, r.Current())
	}
	f.approve(checkpoints.PlanReview)
	f.approve(checkpoints.DraftReview)
	f.finished(pipeline.StatusCompleted)
}

func TestARejectedDraftWhoseCriticalIssuesAreSkippedIsStillReviewed(t *testing.T) {
	v := verdict(3, "critical")
	v.ImprovementPotential = 0.1
	f, _ := newFlow(t, v)
	f.start(checkpoints.ModeGuided, pipeline.Limits{MaxIterations: 3}, false)
	f.approve(checkpoints.PlanReview)
	inst := f.at(checkpoints.CriticalIssues)
	if _, err := f.eng.Skip(context.Background(), inst.ID, "U1"); err != nil {
		t.Fatal(err)
	}
	f.advance()
	f.decide(checkpoints.DraftReview, checkpoints.Decision{Action: checkpoints.Reject, Note: "not usable"})
	if r := f.finished(pipeline.StatusPartial); !strings.Contains(r.FallbackReason, "not usable") {
		t.Fatalf("fallback %q", r.FallbackReason)
	}
}
