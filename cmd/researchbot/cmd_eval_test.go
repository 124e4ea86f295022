package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/eval"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
)

// evalQuestions are two questions over the built-in collection: one the
// scripted writer answers from the right document, one it answers citing
// the wrong document and leaving a fact out.
const evalQuestions = `{"questions": [
  {"id": "fontconfig-debug", "question": "How does a user make fontconfig print debugging messages?",
   "documents": ["manuals/fontconfig-user.pdf"],
   "facts": [{"name": "the FC_DEBUG environment variable", "pattern": "FC_DEBUG"}, {"name": "it outputs debugging messages", "pattern": "debugging messages"}]},
  {"id": "s2-snappy", "question": "How does S2 compression relate to Snappy?",
   "documents": ["notes/s2-compression.md"],
   "facts": [{"name": "S2 extends Snappy", "pattern": "extension of Snappy"}, {"name": "Snappy cannot decompress S2", "pattern": "cannot be decompressed by Snappy"}]}
]}`

// fontconfigQuote is what the fontconfig manual's page 13 (a pdfTeX PDF)
// says, as the writer quotes it: its words come out of the PDF with their
// spaces.
const fontconfigQuote = "FC_DEBUG is used to output the detailed debugging messages. see Debugging Applications section for more details."

var evalPageRe = regexp.MustCompile(`(?s)<untrusted_data kind="web_page" source_id="(\d+)">\nTitle: [^\n]*\nURL: ([^\n]*)\n(.*?)\n</untrusted_data>`)

// evalWriter is the scripted model of the eval test: the fake researcher
// for every call but the draft, which it writes itself from the pages in
// the prompt — for the fontconfig question a sentence stating both facts
// with a quote from the manual's page; for the S2 question a sentence stating
// one fact, citing the GODEBUG notes with a quote they hold.
func evalWriter(t *testing.T, res *researchtest.Researcher) func(llmtest.Call) llmtest.Reply {
	return func(c llmtest.Call) llmtest.Reply {
		if c.SchemaName != "research_draft" {
			return res.Respond(c)
		}
		var sentence, quote string
		id := 0
		for _, m := range evalPageRe.FindAllStringSubmatch(c.User, -1) {
			text := strings.Join(strings.Fields(m[3]), " ")
			n, _ := strconv.Atoi(m[1])
			switch {
			case strings.Contains(c.User, "make fontconfig print debugging") && strings.Contains(m[2], "fontconfig-user.pdf") && strings.Contains(text, fontconfigQuote):
				id, quote = n, fontconfigQuote
				sentence = fmt.Sprintf("Setting the FC_DEBUG environment variable makes fontconfig output detailed debugging messages [%d].", n)
			case strings.Contains(c.User, "How does S2 compression") && strings.Contains(m[2], "go-godebug.md") && id == 0:
				words := strings.Fields(text)
				id, quote = n, strings.Join(words[:12], " ")
				sentence = fmt.Sprintf("S2 is an extension of Snappy [%d].", n)
			}
		}
		if id == 0 {
			t.Errorf("the draft prompt lacks the page the scripted writer quotes:\n%s", c.User)
		}
		return llmtest.JSON(pipeline.DraftOutput{
			Title: "Answer", Abstract: "A short answer.", Conclusion: "That is the answer.",
			Sections:      []pipeline.SectionOutput{{Title: "Answer", Content: sentence}},
			Claims:        []pipeline.ClaimOutput{{Sentence: sentence, SourceID: id, Quote: quote}},
			RevisionNotes: []string{}, Addressed: []int{},
		})
	}
}

// TestEvalGradesScriptedReports runs `researchbot eval` end to end over
// the built-in collection with the scripted model: the collection is
// indexed, each question runs in auto mode with no web search, and the
// grading is what the scripted answers deserve — a verified quote from the
// right document with every fact scores 1.0 on each measure; citing the
// wrong document lowers precision (the quote still verified); the fact
// left out is reported missing.
func TestEvalGradesScriptedReports(t *testing.T) {
	res := &researchtest.Researcher{Queries: []pipeline.PlannedQuery{
		{Text: "FC_DEBUG environment variable debugging messages", Kind: "web", SubQuestion: 1},
		{Text: "S2 Snappy compression", Kind: "web", SubQuestion: 1},
		{Text: "GODEBUG go.mod default", Kind: "academic", SubQuestion: 2},
	}}
	srv, _ := redistest.Start(t)
	w := &world{redisURL: srv.URL, web: researchtest.NewWeb(t, researchtest.DefaultPages()...), llm: llmtest.NewServer(t, evalWriter(t, res)), res: res}
	questions := filepath.Join(t.TempDir(), "questions.json")
	if err := os.WriteFile(questions, []byte(evalQuestions), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"eval", "--json", "--questions", questions}, w.env(nil), strings.NewReader(""), &out, &errb)
	if err != nil {
		t.Fatalf("eval: %v\n%s", err, errb.String())
	}
	var got eval.Result
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, out.String())
	}
	if len(got.Questions) != 2 {
		t.Fatalf("%d questions graded:\n%s", len(got.Questions), out.String())
	}
	// Both runs were on one private queue: the process forgot it with the
	// final save of the last of them to finish.
	if left := terminalQueuesLeft(t, srv.URL); len(left) != 0 {
		t.Errorf("eval's private queue is left behind: %v", left)
	}
	fc, s2 := got.Questions[0], got.Questions[1]
	if fc.Status != "completed" || fc.Claims != 1 || fc.Verified != 1 || fc.Precise != 1 || fc.FactsFound() != 2 {
		t.Errorf("the right answer is not graded 1.0 on every measure: %+v\n%s", fc, errb.String())
	}
	if s2.Status != "completed" || s2.Claims != 1 || s2.Verified != 1 || s2.Precise != 0 || s2.FactsFound() != 1 {
		t.Errorf("the answer citing the wrong document: %+v", s2)
	}
	if m := s2.Missing(); len(m) != 1 || m[0] != "Snappy cannot decompress S2" {
		t.Errorf("missing facts %v", m)
	}
	for _, want := range []string{`"citation_precision": 0.5`, `"verified_share": 1`, `"facts_found_share": 0.75`, `"missing_facts": [
        "Snappy cannot decompress S2"
      ]`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("eval --json does not say %s:\n%s", want, out.String())
		}
	}
	if n := w.web.Searches() + w.web.Fetches(); n != 0 {
		t.Errorf("the web was asked %d times: eval reads the collection only", n)
	}
	if !strings.Contains(errb.String(), "collection: 3 documents") {
		t.Errorf("eval does not say what it indexed:\n%s", errb.String())
	}

	// The table says the same, a row per question, and names what is missing.
	out.Reset()
	errb.Reset()
	if err := run(context.Background(), []string{"eval", "--questions", questions}, w.env(nil), strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("eval: %v\n%s", err, errb.String())
	}
	t.Logf("researchbot eval printed:\n%s\n%s", errb.String(), out.String())
	table := regexp.MustCompile(` +`).ReplaceAllString(out.String(), " ")
	for _, want := range []string{
		"fontconfig-debug completed 1 1/1 (100%) 1/1 (100%) 2/2 (100%)",
		"s2-snappy completed 1 1/1 (100%) 0/1 (0%) 1/2 (50%)",
		"all 2/2 reports 2 2/2 (100%) 1/2 (50%) 3/4 (75%)",
		"s2-snappy: missing Snappy cannot decompress S2\n",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("the table does not say %q:\n%s", want, out.String())
		}
	}
}

// TestEvalUsageErrors: bad arguments, a missing or malformed questions
// file and a corpus that is not a folder stop eval before anything runs,
// with exit 2 and what was wrong.
func TestEvalUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"questions": [{"id": "a", "question": "Q?", "documents": [], "facts": [{"pattern": "("}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "what"}, `researchbot eval: takes no arguments (got "what")`},
		{[]string{"eval", "--depth", "deep"}, `invalid value "deep" for --depth`},
		{[]string{"eval", "--questions", filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{[]string{"eval", "--questions", bad}, "question 1 (a): no documents"},
		{[]string{"eval", "--corpus", bad}, "is not a folder"},
		{[]string{"eval", "--jsno"}, "did you mean --json?"},
	} {
		code, stdout, stderr := runArgs(t, nil, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if code, stdout, _ := runArgs(t, nil, "eval", "--help"); code != 0 || !strings.Contains(stdout, "citation precision") {
		t.Errorf("eval --help: exit %d\n%s", code, stdout)
	}
}

// TestEvalRunsTheBuiltinQuestions: with no flags, eval runs every built-in
// question over the built-in collection (both written into a temporary
// folder) and grades each; the fake researcher quotes each page's first
// words verbatim, so every quote is verified.
func TestEvalRunsTheBuiltinQuestions(t *testing.T) {
	res := &researchtest.Researcher{Queries: []pipeline.PlannedQuery{
		{Text: "FC_DEBUG include conf.d sorted order", Kind: "web", SubQuestion: 1},
		{Text: "S2 Snappy GODEBUG", Kind: "web", SubQuestion: 2},
	}}
	w := newWorld(t, res)
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"eval"}, w.env(nil), strings.NewReader(""), &out, &errb); err != nil {
		t.Fatalf("eval: %v\n%s", err, errb.String())
	}
	t.Logf("researchbot eval printed:\n%s\n%s", errb.String(), out.String())
	table := regexp.MustCompile(` +`).ReplaceAllString(out.String(), " ")
	n := len(eval.Builtin().Questions)
	if want := fmt.Sprintf("all %d/%d reports", n, n); !strings.Contains(table, want) {
		t.Errorf("the table does not say %q:\n%s", want, out.String())
	}
	for _, q := range eval.Builtin().Questions {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(q.ID) + ` completed \d+ (\d+)/(\d+) \(100%\)`).MatchString(table) {
			t.Errorf("question %s is not graded with every quote verified:\n%s", q.ID, out.String())
		}
	}
}
