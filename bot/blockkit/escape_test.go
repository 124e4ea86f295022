package blockkit

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeNeutralisesInjections(t *testing.T) {
	cases := []struct{ in, want string }{
		{"<!channel> look", "&lt;!channel&gt; look"},
		{"<!here|here>", "&lt;!here|here&gt;"},
		{"hi <@U12345>", "hi &lt;@U12345&gt;"},
		{"<https://evil.example|click me>", "&lt;https://evil.example|click me&gt;"},
		{"a & b", "a &amp; b"},
		{"&lt; stays literal", "&amp;lt; stays literal"},
		{"<!subteam^S123>", "&lt;!subteam^S123&gt;"},
		{"plain *bold*", "plain *bold*"},
	}
	for _, c := range cases {
		got := Escape(c.in)
		if got != c.want {
			t.Errorf("Escape(%q) = %q, want %q", c.in, got, c.want)
		}
		if strings.ContainsAny(got, "<>") {
			t.Errorf("Escape(%q) still contains < or >: %q", c.in, got)
		}
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("héllo wörld", 5); got != "héll…" || utf8.RuneCountInString(got) != 5 {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("short", 10); got != "short" {
		t.Errorf("Truncate short = %q", got)
	}
	if got := Truncate("abc", 0); got != "" {
		t.Errorf("Truncate 0 = %q", got)
	}
}

func TestEscapeTruncateNeverSplitsEntities(t *testing.T) {
	s := strings.Repeat("a<", 100)
	for limit := 1; limit < 60; limit++ {
		got := EscapeTruncate(s, limit)
		if n := utf8.RuneCountInString(got); n > limit {
			t.Fatalf("limit %d: got %d runes: %q", limit, n, got)
		}
		trimmed := strings.TrimSuffix(got, ellipsis)
		if i := strings.LastIndex(trimmed, "&"); i >= 0 && !strings.Contains(trimmed[i:], ";") {
			t.Fatalf("limit %d: entity cut: %q", limit, got)
		}
		if strings.Contains(got, "<") {
			t.Fatalf("limit %d: raw < in %q", limit, got)
		}
	}
}

func TestLinkEscapesLabelAndRejectsBadURLs(t *testing.T) {
	got := mdLink("https://example.com/a?x=1&y=<2>|z", "<!channel> Title", 100)
	want := "<https://example.com/a?x=1&amp;y=%3C2%3E%7Cz|&lt;!channel&gt; Title>"
	if got != want {
		t.Errorf("Link = %q, want %q", got, want)
	}
	if got := mdLink("javascript:alert(1)", "x <b>", 100); got != "x &lt;b&gt;" {
		t.Errorf("Link with a bad scheme = %q", got)
	}
	if got := mdLink("", "", 10); strings.Contains(got, "<") {
		t.Errorf("empty Link = %q", got)
	}
}

func TestWhoOnlyMentionsUserIDs(t *testing.T) {
	if got := Who("U123ABC"); got != "<@U123ABC>" {
		t.Errorf("who(user) = %q", got)
	}
	if got := Who("<!channel>"); got != "&lt;!channel&gt;" {
		t.Errorf("who(injection) = %q", got)
	}
	if got := Who("terminal"); got != "terminal" {
		t.Errorf("who(terminal) = %q", got)
	}
}

func TestVisibleDropsWhatPeopleCannotSee(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain text\nwith\ttabs", "plain text\nwith\ttabs"},
		{"\x1b[31mred\x1b[0m", "[31mred[0m"},                         // the escape byte goes; what is left is harmless text
		{"abc\u202edcba\u202c!", "abcdcba!"},                         // a right-to-left override
		{"a\u2066b\u2067c\u2068d\u2069", "abcd"},                     // isolates
		{"pay\u200bpal\ufeff", "paypal"},                             // zero-width space, BOM
		{"hi\U000E0069\U000E0067\U000E006E", "hi"},                   // tag characters: instructions only a model reads
		{"line\r\nbreak\b\x7f\u0085", "line\nbreak"},                 // CR, backspace, DEL, C1
		{"👩\u200d💻 and می\u200cخواهم", "👩\u200d💻 and می\u200cخواهم"}, // joiners stay
		{"bad \xff byte", "bad \uFFFD byte"},
	}
	for _, c := range cases {
		if got := Visible(c.in); got != c.want {
			t.Errorf("Visible(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := Escape("<\u202e!channel>"); got != "&lt;!channel&gt;" {
		t.Errorf("Escape drops no bidi override: %q", got)
	}
	if got := EscapeTruncate("\u202e"+strings.Repeat("x", 50), 10); strings.ContainsRune(got, '\u202e') {
		t.Errorf("EscapeTruncate keeps a bidi override: %q", got)
	}
}

// TestUnescape: the entities Slack sends for &, < and > are read back as
// the characters typed, and Escape's output is read back as its input.
func TestUnescape(t *testing.T) {
	if got := Unescape("R&amp;D &lt;lab&gt; &amp;lt;"); got != "R&D <lab> &lt;" {
		t.Errorf("Unescape = %q", got)
	}
	for _, s := range []string{"a < b && c > d", "<!channel>", "&amp;"} {
		if got := Unescape(Escape(s)); got != s {
			t.Errorf("Unescape(Escape(%q)) = %q", s, got)
		}
	}
}
