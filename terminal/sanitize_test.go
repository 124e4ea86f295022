package terminal

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

func TestCleanRemovesWhatATerminalWouldObey(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"plain", "héllo, 世界 😀\n\tindented", "héllo, 世界 😀\n\tindented"},
		{"colour", "\x1b[31mred\x1b[0m text", "red text"},
		{"clear screen and home", "a\x1b[2J\x1b[Hb", "ab"},
		{"alternate screen", "\x1b[?1049hhidden?", "hidden?"},
		{"window title", "a\x1b]0;pwned\x07b", "ab"},
		{"hyperlink", "see \x1b]8;;https://evil.example\x1b\\the docs\x1b]8;;\x1b\\.", "see the docs."},
		{"open OSC keeps the text", "a\x1b]0;rest of\nthe report", "a0;rest of\nthe report"},
		{"open DCS keeps the text", "a\x1bPq#0;2;0;0;0 more", "aq#0;2;0;0;0 more"},
		{"reset", "x\x1bcy", "xy"},
		{"cut CSI", "a\x1b[3;1\nnext", "a\nnext"},
		{"carriage return overwrite", "rm -rf /\rls -l   ", "rm -rf /ls -l   "},
		{"backspace, bell, DEL", "ab\bc\a\x7fd", "abcd"},
		{"C1 CSI", "a\u009b31mb", "a31mb"},
		{"raw 8-bit CSI", "a\x9b31mb", "a\uFFFD31mb"},
		{"bidi override", "file\u202eexe.txt", "fileexe.txt"},
		{"isolates and marks", "\u2067abc\u2069\u200f\u061c", "abc"},
		{"zero width", "pay\u200bpal\u2060\ufeff", "paypal"},
		{"joiners", "👩\u200d💻 می\u200cخواهم", "👩💻 میخواهم"},
		{"tag characters", "ok\U000E0041\U000E0042", "ok"},
		{"CRLF", "one\r\ntwo", "one\ntwo"},
	}
	for _, c := range cases {
		if got := Clean(c.in); got != c.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

func TestCleanMarkdownKeepsTheText(t *testing.T) {
	in := "# Title\x1b[1m\n\nText with 👩\u200d💻, می\u200cخواهم, soft\u00adhyphen and a\u200bzero width.\r\n\u202eevil\u202c [1]\x1b]8;;x\x07\n"
	want := "# Title\n\nText with 👩\u200d💻, می\u200cخواهم, soft\u00adhyphen and a\u200bzero width.\nevil [1]\n"
	if got := CleanMarkdown(in); got != want {
		t.Errorf("CleanMarkdown = %q, want %q", got, want)
	}
}

// hostile is text from a web page or a model that tries everything.
const hostile = "\x1b[2J\x1b]0;title\x07\u202eevil\u202c\u200b\x1b[31m<!channel>\r\b"

// assertClean fails when out holds anything a terminal would obey or hide.
func assertClean(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if (unicode.Is(unicode.Cc, r) && r != '\n' && r != '\t') || unicode.Is(unicode.Cf, r) {
			t.Fatalf("%s prints %U: %q", what, r, out)
		}
	}
	if !strings.Contains(out, "evil") || !strings.Contains(out, "<!channel>") {
		t.Fatalf("%s lost the visible text: %q", what, out)
	}
}

func TestTerminalOutputIsClean(t *testing.T) {
	plan := pipeline.PlanPayload{Question: "q " + hostile, SubQuestions: []string{hostile}, Queries: []pipeline.QueryView{{Text: hostile, Kind: "web"}},
		Sections: []string{hostile}, Methodology: hostile, Warnings: []string{hostile}}
	sources := pipeline.SourcesPayload{Sources: []pipeline.SourceView{{ID: 1, Title: hostile, Domain: "evil.example", Gist: hostile}}, Errors: []string{hostile}}
	draft := pipeline.DraftPayload{Markdown: hostile, Title: hostile, Summary: hostile}
	critical := pipeline.CriticalPayload{Title: hostile, Items: []pipeline.CritiqueItem{{Description: hostile, SuggestedFix: hostile}}}
	for name, inst := range map[string]checkpoints.Instance{
		"plan": instance(t, checkpoints.PlanReview, plan, nil), "sources": instance(t, checkpoints.SourceReview, sources, nil),
		"draft": instance(t, checkpoints.DraftReview, draft, nil), "critical": instance(t, checkpoints.CriticalIssues, critical, nil),
	} {
		assertClean(t, name+" checkpoint", RenderCheckpoint(inst))
	}

	// The prompts: options (page titles), current values (model output), field errors.
	inst := instance(t, checkpoints.SourceReview, sources, map[string]any{"feedback": hostile})
	for i := range inst.Fields {
		for j := range inst.Fields[i].Options {
			inst.Fields[i].Options[j].Label = hostile
		}
	}
	var out bytes.Buffer
	_, _ = NewPrompter(strings.NewReader("e\n\n\n.\n"), &out).Ask(context.Background(), inst, nil)
	assertClean(t, "the edit prompt", out.String())
	out.Reset()
	_, _ = NewPrompter(strings.NewReader(""), &out).Ask(context.Background(), inst, []checkpoints.FieldError{{Key: "exclude", Message: hostile}})
	assertClean(t, "the field errors", out.String())

	// A decision's note (typed in Slack, perhaps), as the terminal follows
	// the run, and a passing note carrying an error's text.
	out.Reset()
	clock := quartz.NewMock(t)
	clock.Set(now)
	f := NewFollower(&out, clock)
	decided := instance(t, checkpoints.PlanReview, plan, nil)
	r := &pipeline.Run{ID: "r-1", Status: pipeline.StatusWaiting, Checkpoints: []checkpoints.Instance{decided}, Waiting: decided.ID}
	f.Observe(r)
	r.Checkpoints[0].Decision = &checkpoints.Decision{Action: checkpoints.Reject, By: "U1", Note: hostile, At: now}
	r.Checkpoints[0].State = checkpoints.StateSubmitted
	f.Observe(r)
	if !strings.Contains(out.String(), "reject") {
		t.Fatalf("no decision line: %q", out.String())
	}
	assertClean(t, "the decision line", out.String())
	out.Reset()
	New(&out).Notice(context.Background(), r, "the plan step failed ("+hostile+")")
	assertClean(t, "a notice", out.String())
}

func TestCleanHandlesLargeInput(t *testing.T) {
	big := strings.Repeat("why \x1b[31m\u202e", 10000) + "\x1b]" + strings.Repeat("x", 100<<10)
	out := Clean(big)
	if strings.ContainsAny(out, "\x1b\u202e") || !strings.HasSuffix(out, strings.Repeat("x", 100<<10)) {
		t.Errorf("100 KB of hostile text was not cleaned, or its tail was swallowed (%d bytes out)", len(out))
	}
}

// BenchmarkClean measures a 100 KB report without anything to remove (the
// usual case) and with an escape and a bidi override in every sentence.
func BenchmarkClean(b *testing.B) {
	sentence := "A paragraph of a report with a citation [1] and some ünïcödé. "
	for name, text := range map[string]string{
		"plain":   strings.Repeat(sentence, 1600),
		"hostile": strings.Repeat(sentence+"\x1b[31m\u202e", 1600),
	} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				Clean(text)
			}
		})
	}
}

func TestCleanWriterCleansEachWrite(t *testing.T) {
	var b bytes.Buffer
	w := CleanWriter(&b)
	for _, s := range []string{"a\x1b", "[2Jb\n", "\u202ec\x1b]0;t\x07d"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got, want := b.String(), "a[2Jb\ncd"; got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}
