package pipeline_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// retryModel is the scripted model, plus a reformulator that rewrites every
// poor search it is sent with the given kind (the prompt's ids are read from
// its poor_search blocks).
type retryModel struct {
	scripted
	kind string // the kind the reformulator proposes
}

var poorSearchID = regexp.MustCompile(`kind="poor_search" query_id="([^"]+)"`)

func (m *retryModel) Generate(ctx context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	if p.Name != "query_reformulation" {
		return m.scripted.Generate(ctx, p, out)
	}
	m.mu.Lock()
	if m.prompts == nil {
		m.prompts = map[string][]string{}
	}
	m.prompts[p.Name] = append(m.prompts[p.Name], p.User)
	m.mu.Unlock()
	v := pipeline.ReformulationOutput{}
	for _, id := range poorSearchID.FindAllStringSubmatch(p.User, -1) {
		v.Queries = append(v.Queries, pipeline.ReformulatedQuery{QueryID: id[1], Text: "heat pump failure modes in cold climates", Kind: m.kind})
	}
	b, _ := json.Marshal(v)
	return pipeline.Usage{Calls: 1}, json.Unmarshal(b, out)
}

// kindWeb finds nothing for the failure searches on the web, and (unless
// academicFinds is false) a study for them in academic search; every other
// search finds two pages. It serves the web and academic kinds.
type kindWeb struct {
	mu            sync.Mutex
	academicFinds bool
	asked         []pipeline.SearchRequest
}

func (w *kindWeb) Kinds() []string { return []string{"web", "academic"} }

func (w *kindWeb) Search(_ context.Context, r pipeline.SearchRequest) pipeline.SearchOutcome {
	w.mu.Lock()
	w.asked = append(w.asked, r)
	w.mu.Unlock()
	if strings.Contains(r.Text, "failure") {
		if r.Kind == "academic" && w.academicFinds {
			return pipeline.SearchOutcome{Hits: []pipeline.Hit{{URL: "https://example.org/failure-study", Title: "Failure study", Snippet: "heat pumps fail below -25 C", Kind: "academic", Heuristic: 0.6}}}
		}
		return pipeline.SearchOutcome{}
	}
	return pipeline.SearchOutcome{Hits: []pipeline.Hit{
		{URL: "https://example.org/a", Title: "A", Snippet: "heat pumps", Heuristic: 0.5},
		{URL: "https://example.org/b", Title: "B", Snippet: "heat pumps", Heuristic: 0.5},
	}}
}

func (w *kindWeb) Fetch(_ context.Context, u string) (pipeline.Document, error) {
	return pipeline.Document{URL: u, FinalURL: u, Title: u, Text: "Heat pumps keep working in the cold, says " + u + "."}, nil
}

func (w *kindWeb) searches() []pipeline.SearchRequest {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]pipeline.SearchRequest(nil), w.asked...)
}

// runRetry runs the scripted plan in auto mode to its end.
func runRetry(t *testing.T, m *retryModel, w *kindWeb) *pipeline.Run {
	t.Helper()
	m.reviews = []pipeline.CritiqueOutput{passes}
	return runAuto(t, m, w)
}

// retries returns the run's retried searches.
func retries(r *pipeline.Run) []pipeline.Query {
	var out []pipeline.Query
	for _, q := range r.Queries {
		if q.ReformulationOf != "" {
			out = append(out, q)
		}
	}
	return out
}

// TestPoorWebSearchIsRetriedAsAcademic: the web search that found nothing
// is retried once as an academic search (seed 001: "try a different search
// type"), even though the model kept it a web search; the retry's result is
// ranked and read; the trace and "How this report was made" say so.
func TestPoorWebSearchIsRetriedAsAcademic(t *testing.T) {
	for _, proposed := range []string{"academic", "web", "news"} { // news: not served
		t.Run(proposed, func(t *testing.T) {
			m, w := &retryModel{kind: proposed}, &kindWeb{academicFinds: true}
			r := runRetry(t, m, w)
			rs := retries(r)
			if len(rs) != 1 {
				t.Fatalf("retries %+v, want one (of q3, the failure search)", rs)
			}
			q := rs[0]
			if q.ReformulationOf != "q3" || q.Kind != "academic" || q.Status != "completed" || len(q.Hits) != 1 {
				t.Fatalf("retry %+v, want q3 retried as a completed academic search with one result", q)
			}
			var academic bool
			for _, s := range w.searches() {
				academic = academic || (s.Kind == "academic" && s.Text == "heat pump failure modes in cold climates")
			}
			if !academic {
				t.Errorf("searches %+v: the retry was not sent as academic", w.searches())
			}
			var read bool
			for _, p := range r.Pages {
				read = read || p.URL == "https://example.org/failure-study"
			}
			if !read {
				t.Error("the retry's result was not read")
			}
			var traced bool
			for _, e := range r.Trace {
				traced = traced || strings.Contains(e.Message, `search q3 "heat pump failure" (web) found nothing relevant; reformulated as academic search "heat pump failure modes in cold climates"`)
			}
			if !traced {
				t.Error("the trace does not say the search was retried as academic")
			}
			want := `  - q3 "heat pump failure" (web) → academic "heat pump failure modes in cold climates" (` + q.ID + `): 1 result`
			if !strings.Contains(r.Report.Markdown, want) {
				t.Errorf("the report does not say %q:\n%s", want, r.Report.Markdown)
			}
			if p := m.sent("query_reformulation"); len(p) != 1 || !strings.Contains(p[0], "Type: web") {
				t.Errorf("reformulation prompts %q, want one naming the search's type", p)
			}
		})
	}
}

// TestPoorSearchIsRetriedOnlyOnce: a retry that finds nothing again is not
// retried; the model is asked once.
func TestPoorSearchIsRetriedOnlyOnce(t *testing.T) {
	m, w := &retryModel{kind: "academic"}, &kindWeb{}
	r := runRetry(t, m, w)
	if n := len(m.sent("query_reformulation")); n != 1 {
		t.Errorf("%d reformulation calls, want 1", n)
	}
	rs := retries(r)
	if len(rs) != 1 || rs[0].Kind != "academic" || len(rs[0].Hits) != 0 {
		t.Fatalf("retries %+v, want one academic retry that found nothing", rs)
	}
	failure := 0
	for _, s := range w.searches() {
		if strings.Contains(s.Text, "failure") {
			failure++
		}
	}
	if failure != 2 {
		t.Errorf("%d failure searches, want 2 (the search and its one retry)", failure)
	}
	if !strings.Contains(r.Report.Markdown, "(web) → academic \"heat pump failure modes in cold climates\" ("+rs[0].ID+"): 0 results") {
		t.Errorf("the report does not say the retry found nothing:\n%s", r.Report.Markdown)
	}
}
