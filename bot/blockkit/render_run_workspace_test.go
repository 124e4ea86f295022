package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// TestRenderReportCitesAWorkspaceMessage: a workspace message is listed as
// "[1] #infra — @dana · 2026-03-02", linked by its permalink, without the
// workspace's domain.
func TestRenderReportCitesAWorkspaceMessage(t *testing.T) {
	link := "https://acme.slack.com/archives/C1/p1772445600000100"
	rep := &pipeline.Report{Title: "Build cache", References: []pipeline.Reference{
		{N: 1, SourceID: 2, Title: "#infra — @dana", URL: link, Domain: "acme.slack.com", Kind: pipeline.KindWorkspace, Published: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)},
	}}
	b, err := json.Marshal(RenderReport(rep, nil))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if want := "[1] \\u003c" + link + "|#infra — @dana\\u003e · 2026-03-02"; !strings.Contains(s, want) {
		t.Errorf("the message is not cited as %s: %s", want, s)
	}
	if strings.Contains(s, "— acme.slack.com") {
		t.Errorf("the workspace's domain is shown as the source's: %s", s)
	}
}

// TestRenderReportSaysSourcesWereWithheld: the report message says how many
// sources were withheld and why, among its caveats.
func TestRenderReportSaysSourcesWereWithheld(t *testing.T) {
	rep := &pipeline.Report{Title: "Build cache", Provenance: pipeline.Provenance{Withheld: pipeline.WithheldText(2)}}
	b, err := json.Marshal(RenderReport(rep, nil))
	if err != nil {
		t.Fatal(err)
	}
	if want := "• :lock: 2 sources withheld: only people in a private conversation could read them"; !strings.Contains(string(b), want) {
		t.Errorf("the report message does not say %q: %s", want, b)
	}
}
