package terminal

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/researchbot/researchbot/checkpoints"
	"golang.org/x/term"
)

// Style is how text is laid out for one output: the width its lines wrap
// at and whether headings, checkpoint titles, warnings and the progress
// line are coloured. The zero Style is plain text, unwrapped: what a pipe
// or a file gets, so that scripts and golden files see stable output.
//
// A Style only adds line breaks, indentation and colour codes to text that
// is already clean (Clean): the codes are its own, added after cleaning, so
// nothing in untrusted text can smuggle an escape sequence through them.
type Style struct {
	Width int  // columns to wrap at; 0 does not wrap
	Color bool // colour headings, titles, warnings and progress
}

// DefaultWidth is the width used on a terminal whose size cannot be read
// (a pseudo-terminal nobody sized) and COLUMNS does not give.
const DefaultWidth = 100

// StyleFor decides the style of output to w. Only a terminal gets one:
// its width is COLUMNS when that is a positive number (the person asked),
// else the terminal's own width, else DefaultWidth; its colour is on
// unless NO_COLOR (https://no-color.org) is set and not empty, or TERM is
// "dumb". Output that is not a terminal is neither wrapped nor coloured.
func StyleFor(w any, getenv func(string) string) Style {
	if !IsTerminal(w) {
		return Style{}
	}
	return Style{
		Width: terminalWidth(w.(*os.File), getenv),
		Color: getenv("NO_COLOR") == "" && getenv("TERM") != "dumb",
	}
}

// terminalWidth is the width of the terminal f, as StyleFor describes.
func terminalWidth(f *os.File, getenv func(string) string) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
		return w
	}
	return DefaultWidth
}

// SGR sequences the Style paints with.
const (
	sgrTitle   = "\x1b[1;36m" // bold cyan: a checkpoint's title
	sgrHeading = "\x1b[1m"    // bold: a heading
	sgrWarning = "\x1b[33m"   // yellow: a warning, an unsupported claim
	sgrError   = "\x1b[31m"   // red: an error
	sgrDone    = "\x1b[32m"   // green: a decision recorded
	sgrDim     = "\x1b[36m"   // cyan: the progress line
	sgrReset   = "\x1b[0m"
)

// Checkpoint is RenderCheckpoint wrapped and coloured.
func (st Style) Checkpoint(inst checkpoints.Instance) string {
	return st.Text(RenderCheckpoint(inst))
}

// Text wraps and colours clean text of the terminal presenter (a
// checkpoint, a decision line, a note), line by line: each line keeps its
// indentation and list marker, and the lines it wraps into are indented
// under its text.
func (st Style) Text(clean string) string {
	lines := strings.Split(clean, "\n")
	for i, l := range lines {
		lines[i] = st.line(l, textKind(l))
	}
	return strings.Join(lines, "\n")
}

// Error is a line that reports something failed, wrapped and in red.
func (st Style) Error(clean string) string {
	lines := strings.Split(clean, "\n")
	for i, l := range lines {
		lines[i] = st.line(l, sgrError)
	}
	return strings.Join(lines, "\n")
}

// Report wraps and colours a Markdown report (CleanMarkdown first): its
// headings are bold, its paragraphs and list items wrap at the width, and
// code blocks and table rows are left as they are (wrapping would break
// them).
func (st Style) Report(clean string) string {
	if st.Width <= 0 && !st.Color {
		return clean
	}
	lines := strings.Split(clean, "\n")
	fenced := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
			fenced = !fenced
		case fenced || strings.HasPrefix(t, "|"):
		case strings.HasPrefix(l, "#"):
			lines[i] = st.line(l, sgrHeading)
		default:
			lines[i] = st.line(l, "")
		}
	}
	return strings.Join(lines, "\n")
}

// Progress is the progress line as a terminal shows it: cut to the width,
// so that redrawing it in place stays on one line, and coloured.
func (st Style) Progress(clean string) string {
	if st.Width > 0 && ansi.StringWidth(clean) > st.Width {
		clean = ansi.Truncate(clean, st.Width, "…")
	}
	return st.paint(sgrDim, clean)
}

// textKind is the colour of a line of the presenter's text, by its shape.
func textKind(l string) string {
	t := strings.TrimSpace(l)
	switch {
	case strings.HasPrefix(t, "━━"):
		return sgrTitle
	case strings.HasPrefix(t, "⚠"), strings.HasPrefix(t, "…and") && strings.Contains(t, "unsupported"):
		return sgrWarning
	case strings.HasPrefix(l, "✓ "):
		return sgrDone
	case l != "" && l[0] != ' ' && strings.HasSuffix(t, ":"):
		return sgrHeading
	}
	return ""
}

// line wraps one line and paints each line it becomes with sgr.
func (st Style) line(l, sgr string) string {
	wrapped := Wrap(l, st.Width)
	if !st.Color || sgr == "" || l == "" {
		return wrapped
	}
	parts := strings.Split(wrapped, "\n")
	for i, p := range parts {
		parts[i] = st.paint(sgr, p)
	}
	return strings.Join(parts, "\n")
}

// paint wraps s in sgr and a reset when colour is on.
func (st Style) paint(sgr, s string) string {
	if !st.Color || s == "" {
		return s
	}
	return sgr + s + sgrReset
}

// listMarker matches a line's indentation and its list markers ("1.",
// "-", "•", "⚠", "[3]", "A:"), which the lines it wraps into are indented
// past.
var listMarker = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:(?:\d+[.)]|[-*+•·⚠✓]|\[[^\]\s]{1,12}\]|[A-Z]:)\s+)*`)
})

// Wrap breaks each line of s at spaces so that no line is wider than
// width columns (as a terminal counts them: wide characters take two),
// and indents the lines a line wraps into under its text, past its
// indentation and list marker. A word wider than the width (a URL) is kept
// whole on a line of its own, never split: it stays one word to copy. A
// width of 0 or less leaves s as it is.
//
// It is written here rather than taken from a library because the wrappers
// at hand (charmbracelet/x/ansi's Wordwrap, muesli/reflow) break at every
// hyphen, URLs included, and know no hanging indentation.
func Wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = wrapLine(l, width)
	}
	return strings.Join(lines, "\n")
}

// wrapLine is Wrap of one line.
func wrapLine(l string, width int) string {
	if ansi.StringWidth(l) <= width {
		return l
	}
	prefix := listMarker().FindString(l)
	indent := ansi.StringWidth(prefix)
	if indent > width/2 {
		indent = width / 2 // a deep indent would leave no room for words
	}
	pad := strings.Repeat(" ", indent)
	var b strings.Builder
	b.WriteString(prefix)
	col := ansi.StringWidth(prefix)
	first := true // nothing on this line yet but its prefix
	for _, w := range strings.Fields(l[len(prefix):]) {
		ww := ansi.StringWidth(w)
		if !first && col+1+ww > width {
			b.WriteString("\n" + pad)
			col, first = indent, true
		}
		if !first {
			b.WriteByte(' ')
			col++
		}
		b.WriteString(w)
		col += ww
		first = false
	}
	return b.String()
}
