package blockkit

import (
	"cmp"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ellipsis ends truncated text.
const ellipsis = "…"

// mrkdwnEscaper escapes the three characters Slack's mrkdwn gives meaning to.
var mrkdwnEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// Escape makes untrusted text (a question, a web page, model output) safe to
// put into mrkdwn: &, < and > become entities, so no <!channel>, <!here>,
// <@U…> mention or <http://x|masked link> can be smuggled in, and invisible
// characters are dropped (see Visible). Invalid UTF-8 is replaced.
func Escape(s string) string {
	return mrkdwnEscaper.Replace(Visible(s))
}

// slackUnescaper undoes the escaping Slack applies to message text.
var slackUnescaper = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// Unescape undoes the escaping Slack applies to the text it sends (a
// message, a slash command's arguments): &lt;, &gt; and &amp; become <, >
// and &, so "R&amp;D" is read as the "R&D" it was typed as.
func Unescape(s string) string { return slackUnescaper.Replace(s) }

// escapeRune is one visible character as Escape writes it.
func escapeRune(r rune) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	}
	return string(r)
}

// Visible returns s without the characters people cannot see but software
// acts on: control characters other than newline and tab (terminal escapes
// begin with one), and Unicode format characters — bidi embeddings,
// overrides and isolates, which reorder the text around them; zero-width
// spaces; tag characters, which can carry instructions a model reads and a
// person does not. The zero-width joiner and non-joiner stay: letters and
// emoji need them. Invalid UTF-8 is replaced.
func Visible(s string) string {
	return strings.Map(func(r rune) rune {
		if hidden(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// hidden reports whether Visible drops r.
func hidden(r rune) bool {
	switch {
	case r == '\n', r == '\t', r == '\u200c', r == '\u200d':
		return false
	case unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r):
		return true
	}
	return false
}

// Truncate shortens s to at most limit runes, ending with an ellipsis when it
// cut something. limit < 1 yields "".
func Truncate(s string, limit int) string {
	if limit < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	runes := []rune(s)
	return strings.TrimRight(string(runes[:limit-1]), " \n\t") + ellipsis
}

// EscapeTruncate escapes s and shortens it so the escaped text is at most limit
// runes, ending with an ellipsis when it cut something and never cutting an
// entity in half. limit < 1 yields "".
func EscapeTruncate(s string, limit int) string {
	if limit < 1 {
		return ""
	}
	esc := Escape(s)
	if utf8.RuneCountInString(esc) <= limit {
		return esc
	}
	var b strings.Builder
	n := 0
	for _, r := range Visible(s) {
		e := escapeRune(r)
		w := utf8.RuneCountInString(e)
		if n+w > limit-1 {
			break
		}
		b.WriteString(e)
		n += w
	}
	return strings.TrimRight(b.String(), " \n\t") + ellipsis
}

// OneLine collapses whitespace (newlines included) to single spaces.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// safeURL returns u ready to sit inside a Slack link (<u|text>), or "" when u
// is not an absolute http(s) URL. Characters that would end or split the link
// are percent-encoded and & is escaped.
func safeURL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return ""
	}
	s := p.String()
	s = strings.NewReplacer("<", "%3C", ">", "%3E", "|", "%7C", " ", "%20", "\n", "", "\r", "").Replace(s)
	return strings.ReplaceAll(s, "&", "&amp;")
}

// mdLink renders a mrkdwn link to u with an escaped label; when u is not a
// safe http(s) URL only the escaped label is returned. The label is limited
// to maxLabel runes.
func mdLink(u, label string, maxLabel int) string {
	label = OneLine(label)
	label = cmp.Or(label, u)
	text := EscapeTruncate(label, maxLabel)
	su := safeURL(u)
	if su == "" {
		return text
	}
	// A "|" in the label is harmless (the first "|" separates), but keep it tidy.
	return "<" + su + "|" + text + ">"
}

// IsUserID reports whether s looks like a Slack user id (isUserID), for
// callers outside the package that address a person by it.
func IsUserID(s string) bool { return isUserID(s) }

// isUserID reports whether s looks like a Slack user id (U… or W…), so it
// can be rendered as a mention without letting arbitrary text through.
func isUserID(s string) bool {
	if len(s) < 2 || len(s) > 20 || (s[0] != 'U' && s[0] != 'W') {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// Who renders the author of a decision: a mention for a Slack user id,
// escaped text otherwise ("terminal", "auto", "system").
func Who(id string) string {
	if isUserID(id) {
		return "<@" + id + ">"
	}
	if id == "" {
		return "someone"
	}
	return Escape(id)
}
