package blockkit

import (
	"strings"
	"unicode/utf8"
)

// mrkdwnWriter builds mrkdwn within a budget of runes. Untrusted text goes
// through text, which applies the one escaping rule (Escape); markup the
// converter itself produces (markers, bullets, line breaks, links to
// fetched pages) goes through markup. Markers opened with open are closed
// with close, and by String when the text was cut short, so a cut never
// leaves a bold, italic or code span open. The budget reserves room for the
// closers and the ellipsis, so the result never exceeds limit runes.
type mrkdwnWriter struct {
	b      strings.Builder
	left   int      // runes still free, closers and ellipsis already reserved
	opened []marker // the open markers, innermost last
	cut    bool     // something did not fit; nothing more is written
}

// marker is an open marker: its closer and where its content begins.
type marker struct {
	closer string
	start  int // byte offset in b after the opener
	width  int // bytes of the opener
}

// newMrkdwnWriter returns a writer of at most limit runes (limit < 1: nothing).
func newMrkdwnWriter(limit int) *mrkdwnWriter {
	return &mrkdwnWriter{left: limit - utf8.RuneCountInString(ellipsis)}
}

// text writes untrusted text escaped, as much of it as fits.
func (w *mrkdwnWriter) text(s string) {
	for _, r := range Visible(s) {
		if w.cut {
			return
		}
		w.put(escapeRune(r))
	}
}

// markup writes s, produced by the converter, whole or not at all.
func (w *mrkdwnWriter) markup(s string) {
	if !w.cut {
		w.put(s)
	}
}

// put writes s when it fits, and otherwise marks the writer cut.
func (w *mrkdwnWriter) put(s string) {
	n := utf8.RuneCountInString(s)
	if n > w.left {
		w.cut = true
		return
	}
	w.b.WriteString(s)
	w.left -= n
}

// open writes an opening marker and reserves room for its closer; it
// reports whether it did (false once the writer is cut or full).
func (w *mrkdwnWriter) open(opener, closer string) bool {
	need := utf8.RuneCountInString(opener) + utf8.RuneCountInString(closer)
	if w.cut || need > w.left {
		w.cut = true
		return false
	}
	w.b.WriteString(opener)
	w.left -= need
	w.opened = append(w.opened, marker{closer: closer, start: w.b.Len(), width: len(opener)})
	return true
}

// close writes the innermost open marker's closer, whose room was reserved;
// a marker around nothing is removed instead, since Slack would show it.
func (w *mrkdwnWriter) close() {
	n := len(w.opened) - 1
	if n < 0 {
		return
	}
	m := w.opened[n]
	w.opened = w.opened[:n]
	if w.cut {
		w.trimSpace()
	}
	if w.b.Len() <= m.start {
		s := w.b.String()
		s = s[:min(len(s), m.start-m.width)]
		w.b.Reset()
		w.b.WriteString(s)
		return
	}
	w.b.WriteString(m.closer)
}

// trimSpace drops trailing white space, which would stop Slack from seeing
// a closing marker as one.
func (w *mrkdwnWriter) trimSpace() {
	s := w.b.String()
	if t := strings.TrimRight(s, " \n\t"); len(t) != len(s) {
		w.b.Reset()
		w.b.WriteString(t)
	}
}

// String closes what is open and returns the mrkdwn, ending with an
// ellipsis when something was cut.
func (w *mrkdwnWriter) String() string {
	if w.left < 0 {
		return ""
	}
	if w.cut {
		w.trimSpace()
	}
	for len(w.opened) > 0 {
		w.close()
	}
	s := strings.TrimRight(w.b.String(), " \n\t")
	if w.cut {
		s += ellipsis
	}
	return s
}
