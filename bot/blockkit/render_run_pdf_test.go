package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

func TestRenderReportNamesAPDFSourceKind(t *testing.T) {
	rep := &pipeline.Report{Title: "Heat networks", References: []pipeline.Reference{
		{N: 1, SourceID: 3, Title: "Heat networks 2024", URL: "https://agency.example.org/report", Domain: "agency.example.org", Kind: pipeline.KindPDF, Pages: 42},
		{N: 2, SourceID: 4, Title: "Heat news", URL: "https://news.example.com/heat", Domain: "news.example.com"},
	}}
	b, err := json.Marshal(RenderReport(rep, nil))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, "agency.example.org · PDF, 42 pages") {
		t.Errorf("the PDF's kind is not shown: %s", s)
	}
	if strings.Count(s, "PDF") != 1 {
		t.Errorf("a web page is labelled as a PDF: %s", s)
	}
}
