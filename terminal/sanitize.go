package terminal

import (
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Clean returns untrusted text (a question, a web page's title, a report,
// model output) ready to print on a terminal: nothing in it can move the
// cursor, clear the screen, set the window title, make a link, or reorder or
// hide what is shown. It removes
//
//   - terminal escape sequences (CSI, OSC, DCS, …), parsed as a terminal
//     parses them; a string sequence left open loses only its introducer, so
//     the text after it stays visible rather than swallowed;
//   - control characters other than newline and tab (carriage return and
//     backspace can overwrite what was printed);
//   - Unicode format characters: bidi embeddings, overrides, isolates and
//     marks, which reorder the text around them; zero-width spaces and
//     joiners; tag characters, which carry text a model reads and a person
//     does not.
//
// Invalid UTF-8 is replaced. Everything else is kept as it was.
func Clean(s string) string { return sanitize(s, false) }

// CleanWriter returns a writer that writes Clean of each write to w, for a
// command whose whole output shows stored text (checkpoint definitions,
// runs). Clean output holds no escape or control character but newline and
// tab, so writes cleaned one by one stay clean together; a write should hold
// whole characters (fmt's and encoding/json's writes do).
func CleanWriter(w io.Writer) io.Writer { return cleanWriter{w} }

type cleanWriter struct{ w io.Writer }

// Write writes Clean(p) and reports p as written.
func (c cleanWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(c.w, Clean(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CleanMarkdown returns report text ready for a file: the escape sequences,
// control characters and bidi controls Clean removes are removed, and the
// rest of the text — zero-width joiners in emoji and scripts included — is
// kept.
func CleanMarkdown(s string) string { return sanitize(s, true) }

// sanitize implements Clean (keepFormat false) and CleanMarkdown (true:
// format characters other than bidi controls stay).
func sanitize(s string, keepFormat bool) string {
	if !needsCleaning(s, keepFormat) {
		return s // most text: one quick pass, no copy
	}
	s = strings.ToValidUTF8(s, "\uFFFD") // before parsing: a stray byte 0x9b would read as CSI
	var b strings.Builder
	b.Grow(len(s))
	var state byte
	for len(s) > 0 {
		seq, _, n, next := ansi.DecodeSequence(s, state, nil)
		state = next
		if seq == "" || n == 0 {
			break
		}
		if seq[0] == ansi.ESC {
			if opener, open := unterminatedString(seq); open {
				s, state = s[len(opener):], 0 // drop the introducer, keep the text
				continue
			}
			s = s[n:]
			continue
		}
		for _, r := range seq {
			if !dropped(r, keepFormat) {
				b.WriteRune(r)
			}
		}
		s = s[n:]
	}
	return b.String()
}

// needsCleaning reports whether s holds anything sanitize changes.
func needsCleaning(s string, keepFormat bool) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < utf8.RuneSelf { // ASCII: only controls (ESC among them) change
			if (r < ' ' && r != '\n' && r != '\t') || r == 0x7f {
				return true
			}
			continue
		}
		if dropped(r, keepFormat) {
			return true
		}
	}
	return false
}

// unterminatedString reports whether seq is a string sequence (OSC, DCS,
// SOS, PM or APC) that no BEL or ST closed, and returns its introducer.
func unterminatedString(seq string) (introducer string, open bool) {
	if len(seq) < 2 || !strings.ContainsRune("]PX^_", rune(seq[1])) {
		return "", false
	}
	if strings.HasSuffix(seq, "\a") || strings.HasSuffix(seq, "\x1b\\") {
		return "", false
	}
	return seq[:2], true
}

// dropped reports whether r is removed: controls other than newline and tab
// always, format characters unless keepFormat (then only bidi controls).
func dropped(r rune, keepFormat bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.Is(unicode.Cc, r):
		return true
	case unicode.Is(unicode.Bidi_Control, r):
		return true
	case unicode.Is(unicode.Cf, r):
		return !keepFormat
	}
	return false
}
