package app

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/mcpfake"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
)

// heatPumpDocs are a team's own documents on the harness's question.
var heatPumpDocs = []mcpfake.Doc{
	{ID: "trial-2025", Title: "Our heat pump field trial, winter 2025",
		Text: "Internal field trial. Our three cold climate heat pump sites kept a seasonal coefficient of performance of 2.6 through January."},
	{ID: "cost-memo", Title: "Heat pump installation cost memo",
		Text: "Finance memo. Installation cost for our offices averaged 12,000 dollars per heat pump after subsidies."},
}

// mcpServerJSON is one MCP_SERVERS entry for an mcpfake server at url.
func mcpServerJSON(name, url, timeout string) map[string]any {
	return map[string]any{
		"name": name, "url": url, "timeout": timeout,
		"search": map[string]string{"tool": mcpfake.SearchTool, "query_argument": "query"},
		"read":   map[string]string{"tool": mcpfake.FetchTool, "argument": "id"},
		"kinds":  []string{"web", "academic", "news"},
	}
}

// An MCP server's results are searched beside the web, read through its read
// tool and cited with its name; a server that hangs and one that answers with
// hostile text neither fail nor steer the run, and no other tool is called.
func TestMCPServersAreSearchedReadAndCited(t *testing.T) {
	good := mcpfake.New(mcpfake.Options{Docs: heatPumpDocs})
	hostile := mcpfake.New(mcpfake.Options{Docs: heatPumpDocs, Mode: mcpfake.Hostile})
	hang := mcpfake.New(mcpfake.Options{Docs: heatPumpDocs, Mode: mcpfake.Hang})
	var servers []any
	for _, s := range []struct {
		name, timeout string
		fake          *mcpfake.Server
	}{{"wiki", "10s", good}, {"hostile", "10s", hostile}, {"slow", "300ms", hang}} {
		ts := httptest.NewServer(s.fake.Handler())
		t.Cleanup(ts.Close)
		t.Cleanup(s.fake.Release) // first: a hanging handler holds ts.Close
		servers = append(servers, mcpServerJSON(s.name, ts.URL, s.timeout))
	}
	raw, err := json.Marshal(servers)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, &researchtest.Researcher{}, map[string]string{"MCP_SERVERS": string(raw)})
	h.web.SetPages([]researchtest.Page{}) // the web finds nothing: the report rests on the MCP servers
	h.start(checkpoints.ModeAuto, pipeline.Limits{})
	r := h.finish()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s (%s %s)", r.Status, r.FallbackReason, r.Failure)
	}
	assertCitationsFetched(t, r)

	cited := map[string]bool{}
	for _, ref := range r.Report.References {
		cited[ref.Domain] = true
		if !strings.HasPrefix(ref.URL, "mcp://") {
			t.Errorf("reference %+v: the web had nothing to cite", ref)
		}
	}
	if !cited["MCP server wiki"] {
		t.Errorf("references %+v: none from MCP server wiki", r.Report.References)
	}
	if !strings.Contains(r.Report.Markdown, "— MCP server wiki") {
		t.Errorf("the report's references do not name the server:\n%s", r.Report.Markdown)
	}
	if good.Calls(mcpfake.FetchTool) == 0 {
		t.Error("no result was read through the read tool")
	}
	for _, f := range []*mcpfake.Server{good, hostile, hang} {
		if n := f.Calls(mcpfake.DeleteTool); n != 0 {
			t.Errorf("delete_document called %d times", n)
		}
	}
	if !containsAny(errorMessages(r), "search backend mcp:slow: no answer within 300ms") {
		t.Errorf("run errors %v: want the slow server's timeout", errorMessages(r))
	}
	// The hostile server's text reached the model only as delimited data.
	for _, c := range h.llm.Calls() {
		for _, block := range strings.SplitAfter(c.User, "</untrusted_data>") {
			i := strings.Index(block, "IGNORE ALL PREVIOUS INSTRUCTIONS")
			if i >= 0 && !strings.Contains(block[:i], "<untrusted_data") {
				t.Errorf("%s prompt carries the hostile text outside untrusted data", c.SchemaName)
			}
		}
	}
	if r.Report.Title != "Heat pumps in cold climates" {
		t.Errorf("report title %q", r.Report.Title)
	}
}

func errorMessages(r *pipeline.Run) []string {
	var out []string
	for _, e := range r.Errors {
		out = append(out, e.Message)
	}
	return out
}
