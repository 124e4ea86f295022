package terminal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/creack/pty"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

const longURL = "https://example.org/reports/2025/heat-pump-field-trials-in-nordic-climates-final.pdf"

// widePlan is a plan whose lines are longer than any terminal.
func widePlan() pipeline.PlanPayload {
	return pipeline.PlanPayload{
		Question: "How well do air-source heat pumps heat detached houses in the Nordic winter, and what do they cost to run compared with oil?",
		SubQuestions: []string{
			"What coefficient of performance do air-source heat pumps reach at -15 °C and below in field trials rather than in the laboratory?",
			"How do running costs compare with oil boilers at 2025 prices, per square metre heated?",
		},
		Queries:  []pipeline.QueryView{{Text: "air source heat pump field trial coefficient of performance Norway Sweden Finland winter", Kind: "academic"}},
		Warnings: []string{"Few sources from 2026; the newest field trial is " + longURL + " and it covers only forty homes"},
		Estimate: pipeline.Estimate{CostUSD: 0.042, Searches: 2, PagesToRead: 12, LLMCalls: 7},
	}
}

// reportExcerpt is the start of a report as the writer gives it.
const reportExcerpt = `# Heat pumps in the Nordic winter

Air-source heat pumps kept detached houses warm through the coldest weeks of the 2024–25 winter in every field trial we read, with a seasonal coefficient of performance between 2.4 and 3.1 [1][2].

## Findings

1. At -15 °C the measured coefficient of performance was 2.8 on average, well above the certification floor of 1.75 [1].
- Running costs were about half those of an oil boiler at 2025 prices, before the cost of installation [2].

| Trial | Homes | COP |
|-------|-------|-----|
| Norway 2024, with a very long caption that no one should wrap | 40 | 2.8 |

` + "```" + `
a code line that is longer than sixty columns and must stay exactly as it is written
` + "```" + `

Source: ` + longURL + `
`

func TestStyleGolden(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, widePlan(), nil)
	for _, width := range []int{60, 100} {
		st := Style{Width: width}
		golden(t, fmt.Sprintf("style_plan_%d", width), st.Checkpoint(inst))
		golden(t, fmt.Sprintf("style_report_%d", width), st.Report(CleanMarkdown(reportExcerpt)))
	}
}

// TestNoLineIsWiderThanTheWidth checks every line a Style prints: none is
// wider than the width unless it is one word (a URL) too wide to fit,
// alone on its line after the indentation.
func TestNoLineIsWiderThanTheWidth(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, widePlan(), nil)
	for _, width := range []int{20, 40, 60, 100} {
		st := Style{Width: width, Color: true}
		for what, out := range map[string]string{
			"checkpoint": st.Checkpoint(inst),
			"report":     st.Report(CleanMarkdown(strings.Split(reportExcerpt, "| Trial")[0] + "Source: " + longURL)),
		} {
			for _, l := range strings.Split(ansi.Strip(out), "\n") {
				if ansi.StringWidth(l) > width && len(strings.Fields(listMarker().ReplaceAllString(l, ""))) > 1 {
					t.Errorf("width %d, %s: line %q is %d columns wide", width, what, l, ansi.StringWidth(l))
				}
			}
		}
	}
}

func TestWrapIndentsUnderTheItemAndKeepsWordsWhole(t *testing.T) {
	cases := []struct {
		in    string
		width int
		want  string
	}{
		{"short stays", 20, "short stays"},
		{"  1. one two three four five", 14, "  1. one two\n     three\n     four five"},
		{" • [3] Title of a page — example.org", 20, " • [3] Title of a\n       page —\n       example.org"},
		{"⚠ see " + longURL + " now", 30, "⚠ see\n  " + longURL + "\n  now"},
		{"well-known hyphenated-words stay", 12, "well-known\nhyphenated-words\nstay"},
		{"世界世界 世界世界 世界", 10, "世界世界\n世界世界\n世界"},
		{"a\n\nb", 5, "a\n\nb"},
		{"no wrap at zero width", 0, "no wrap at zero width"},
	}
	for _, c := range cases {
		if got := Wrap(c.in, c.width); got != c.want {
			t.Errorf("Wrap(%q, %d) =\n%q, want\n%q", c.in, c.width, got, c.want)
		}
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func TestColourOnlyWhenAsked(t *testing.T) {
	inst := instance(t, checkpoints.PlanReview, widePlan(), nil)
	plain := Style{Width: 60}.Checkpoint(inst)
	if strings.Contains(plain, "\x1b") {
		t.Fatalf("colour off, yet escapes: %q", plain)
	}
	coloured := Style{Width: 60, Color: true}.Checkpoint(inst)
	if sgr.ReplaceAllString(coloured, "") != plain {
		t.Fatalf("colour changed the text, not only its colour:\n%q\n%q", coloured, plain)
	}
	for _, want := range []string{sgrTitle + "━━ Research plan", sgrWarning + "⚠ Few", sgrHeading + "Sub-questions:"} {
		if !strings.Contains(coloured, want) {
			t.Errorf("no %q in %q", want, coloured)
		}
	}
	if p := (Style{Width: 30, Color: true}).Progress(strings.Repeat("x ", 40)); !strings.HasPrefix(p, sgrDim) || ansi.StringWidth(p) > 30 {
		t.Errorf("progress line %q: not coloured, or wider than 30", p)
	}
}

// TestStyleForFollowsTheTerminalAndTheEnvironment: colour and wrapping
// only on a terminal; NO_COLOR and TERM=dumb turn colour off; COLUMNS,
// else the terminal's size, else DefaultWidth gives the width.
func TestStyleForFollowsTheTerminalAndTheEnvironment(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	file, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cases := []struct {
		name string
		out  any
		rows uint16
		cols uint16
		env  func(string) string
		want Style
	}{
		{"pipe or buffer", &bytes.Buffer{}, 0, 0, env("COLUMNS", "80"), Style{}},
		{"file", file, 0, 0, env("COLUMNS", "80"), Style{}},
		{"terminal of unknown size", tty, 0, 0, env(), Style{Width: DefaultWidth, Color: true}},
		{"terminal's size", tty, 30, 72, env(), Style{Width: 72, Color: true}},
		{"COLUMNS wins", tty, 30, 72, env("COLUMNS", "64"), Style{Width: 64, Color: true}},
		{"NO_COLOR", tty, 30, 72, env("NO_COLOR", "1"), Style{Width: 72}},
		{"TERM=dumb", tty, 30, 72, env("TERM", "dumb"), Style{Width: 72}},
		{"empty NO_COLOR", tty, 30, 72, env("NO_COLOR", ""), Style{Width: 72, Color: true}},
	}
	for _, c := range cases {
		if err := pty.Setsize(tty, &pty.Winsize{Rows: c.rows, Cols: c.cols}); err != nil {
			t.Fatal(err)
		}
		if got := StyleFor(c.out, c.env); got != c.want {
			t.Errorf("%s: StyleFor = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestColouredOutputIsStillClean: hostile text shown in colour carries
// only the Style's own colour codes, nothing of its own.
func TestColouredOutputIsStillClean(t *testing.T) {
	plan := pipeline.PlanPayload{Question: "q " + hostile, SubQuestions: []string{hostile + " " + hostile}, Warnings: []string{hostile}}
	st := Style{Width: 30, Color: true}
	var out bytes.Buffer
	p := NewPrompter(strings.NewReader(""), &out)
	p.Style = st
	_, _ = p.Ask(context.Background(), instance(t, checkpoints.PlanReview, plan, nil), nil)
	f := NewFollower(&out, nil)
	f.Style = st
	f.Observe(&pipeline.Run{ID: "r-1", Status: pipeline.StatusRunning, Step: pipeline.StepPlan})
	shown := out.String()
	if !strings.Contains(shown, sgrTitle) || !strings.Contains(shown, sgrDim) {
		t.Fatalf("no colour on a colour terminal: %q", shown)
	}
	assertClean(t, "coloured checkpoint", sgr.ReplaceAllStringFunc(shown, func(code string) string {
		switch code {
		case sgrTitle, sgrHeading, sgrWarning, sgrError, sgrDone, sgrDim, sgrReset:
			return ""
		}
		return code // not ours: assertClean reports its ESC
	}))
}
