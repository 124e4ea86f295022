package eval

import (
	"bytes"
	"flag"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// result is a graded evaluation of three questions: one perfect, one
// citing a wrong document and missing a fact, one whose run failed.
func result() Result {
	return Summarize("gpt-4o-mini, writer=gpt-4o", "quick", []Score{
		{ID: "fontconfig-debug", Question: "Q1?", RunID: "r-1", Status: "completed", Claims: 2, Verified: 2, Precise: 2,
			Facts: []FactResult{{Name: "FC_DEBUG", Found: true, Supported: true}}, Cited: []string{"manuals/fontconfig-user.pdf"}, CostUSD: 0.0123, Seconds: 41},
		{ID: "s2-snappy", Question: "Q2?", RunID: "r-2", Status: "partial", Claims: 4, Verified: 3, Precise: 1,
			Facts: []FactResult{{Name: "S2 extends Snappy", Found: true}, {Name: "Snappy cannot decompress S2"}}, Cited: []string{"notes/go-godebug.md", "notes/s2-compression.md"}, CostUSD: 0.02, Seconds: 60},
		{ID: "godebug-defaults", Question: "Q3?", RunID: "r-3", Status: "failed", Error: "no report: the model endpoint refused",
			Facts: []FactResult{{Name: "go.mod"}}, Cited: []string{}, CostUSD: 0.001, Seconds: 3},
	})
}

func TestWriteTableGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, result()); err != nil {
		t.Fatal(err)
	}
	goldentest.Compare(t, "testdata/table.golden", b.Bytes(), *update)
}

func TestWriteJSONGolden(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, result()); err != nil {
		t.Fatal(err)
	}
	goldentest.Compare(t, "testdata/result.json.golden", b.Bytes(), *update)
}

// TestJSONFieldsAreDocumented: every field of eval --json is named in
// docs/eval.md.
func TestJSONFieldsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/eval.md")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, result()); err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"(\w+)":`).FindAllStringSubmatch(b.String(), -1) {
		if !strings.Contains(string(doc), "`"+m[1]+"`") {
			t.Errorf("docs/eval.md does not document the field %s", m[1])
		}
	}
}
