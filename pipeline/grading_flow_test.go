package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// TestEvidenceGradesReachTheWriterTheReviewerAndTheReport: the analyst's
// grades are held to what each finding cites (all pages here come from one
// site, so nothing is strong), the writer and the reviewer see each
// finding's grade with the rule on how firmly to state it, and the report
// counts the grades in "How this report was made".
func TestEvidenceGradesReachTheWriterTheReviewerAndTheReport(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.model.findings = []pipeline.FindingOutput{
		{Text: "Heat pumps keep a COP above 2 at -15 °C.", SourceIDs: []int{1, 2}, Evidence: "strong"},
		{Text: "Installed costs fell in 2025.", SourceIDs: []int{2}, Evidence: "strong"},
		{Text: "Noise complaints are rare.", SourceIDs: []int{1, 3}, Evidence: "moderate"},
		{Text: "No study measured defrost losses.", SourceIDs: []int{}, Evidence: "gap"},
	}
	f.start(checkpoints.ModeAuto, pipeline.Limits{}, false)
	r := f.finished(pipeline.StatusCompleted)
	var grades []string
	for _, fd := range r.Analysis.Findings {
		grades = append(grades, fd.Grade)
	}
	if strings.Join(grades, ",") != "moderate,weak,moderate,gap" {
		t.Fatalf("grades %v, want moderate,weak,moderate,gap (held to one site)", grades)
	}
	trace := ""
	for _, e := range r.Trace {
		trace += e.Message + "\n"
	}
	if !strings.Contains(trace, "2 finding grade(s) lowered to what their cited sources allow") {
		t.Errorf("the trace does not say grades were lowered:\n%s", trace)
	}
	for _, schema := range []string{"research_draft", "critique"} {
		sent := f.model.sent(schema)
		if len(sent) == 0 {
			t.Fatalf("no %s prompt", schema)
		}
		for _, want := range []string{"1. Heat pumps keep a COP above 2 at -15 °C. (sources: 1, 2) [evidence: moderate]", "2. Installed costs fell in 2025. (sources: 2) [evidence: weak]", "4. No study measured defrost losses. [evidence: gap]"} {
			if !strings.Contains(sent[0], want) {
				t.Errorf("the %s prompt lacks %q", schema, want)
			}
		}
	}
	md := pipeline.RenderMarkdown(r.Report)
	if !strings.Contains(md, "gap: none found): 2 moderate, 1 weak, 1 gap\n") {
		t.Errorf("the report does not count the grades:\n%s", md)
	}
}

// The writer is told how firmly to state each grade, the reviewer checks
// it, and the analyst grades strong / moderate / weak / gap.
func TestEvidenceGradeRulesInThePrompts(t *testing.T) {
	r := &pipeline.Run{Question: "q", Depth: pipeline.DepthStandard}
	if system, _ := pipeline.AnalystPrompt(r, nil); !strings.Contains(system, "- **gap**: no relevant evidence found") {
		t.Error("the analyst is not asked for gap grades")
	}
	if system, _ := pipeline.WriterPrompt(r, nil); !strings.Contains(system, "Never state a finding more firmly than its grade.") {
		t.Error("the writer is not told how to write each grade")
	}
	if system, _ := pipeline.ReviewerPrompt(r, pipeline.Draft{Version: 1}); !strings.Contains(system, "a weak finding stated as settled, or a gap filled in, is a major issue") {
		t.Error("the reviewer does not check the grades")
	}
}

// The draft review counts the findings' grades (Slack and the terminal
// render DraftPayload.Evidence).
func TestTheDraftReviewCountsTheGrades(t *testing.T) {
	f, _ := newFlow(t, passes)
	f.model.findings = []pipeline.FindingOutput{
		{Text: "A.", SourceIDs: []int{1, 2}, Evidence: "moderate"},
		{Text: "B.", SourceIDs: []int{}, Evidence: "gap"},
	}
	f.start(checkpoints.ModeGuided, pipeline.Limits{}, false)
	f.approve(checkpoints.PlanReview)
	inst := f.at(checkpoints.DraftReview)
	var p pipeline.DraftPayload
	if err := json.Unmarshal(inst.Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Evidence != "1 moderate, 1 gap" {
		t.Fatalf("draft review evidence %q, want 1 moderate, 1 gap", p.Evidence)
	}
}
