package blockkit

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"
)

// Block Kit limits this package keeps to (https://api.slack.com/reference/block-kit).
const (
	MaxBlocks         = 50   // blocks in a message
	MaxModalBlocks    = 100  // blocks in a modal
	MaxSectionText    = 3000 // section text
	MaxHeaderText     = 150  // header plain_text
	MaxContextText    = 2000 // one context element (kept well under the 3000 limit)
	MaxButtonValue    = 2000 // button value
	MaxButtonText     = 75   // button label
	MaxActionID       = 255  // action_id and block_id
	MaxModalTitle     = 24   // modal title, submit and close
	MaxInputLabel     = 2000 // input label and hint
	MaxOptionText     = 75   // option text
	MaxOptionValue    = 150  // option value
	MaxOptions        = 100  // options of a select
	MaxChoiceOptions  = 10   // options of checkboxes and radio buttons
	MaxPlaceholder    = 150  // placeholder
	MaxInputLength    = 3000 // a plain_text_input's max_length
	MaxMessageText    = 3000 // fallback text we send with blocks (Slack allows more; keep it short)
	SectionBudget     = MaxSectionText - 40
	maxListedSources  = 15
	maxListedItems    = 20
	maxReferenceLines = 40
)

// mrkdwn is a mrkdwn text object with verbatim set: Slack then does not
// auto-link bare URLs or #channel names, nor parse bare @here/@channel or
// other mentions, in text that came from a page, a model or a person. The
// explicit markup this package writes (<url|label>, <@U…>, <!date…>) still
// renders.
func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, s, false, true)
}

// plainSafe replaces angle brackets in plain text with look-alikes, so even
// a client that parsed plain_text could not see a mention or link in it.
var plainSafe = strings.NewReplacer("<", "‹", ">", "›")

// Plain is a plain_text text object on one line, truncated to limit runes.
func Plain(s string, limit int) *slack.TextBlockObject {
	s = plainSafe.Replace(OneLine(strings.ToValidUTF8(s, "\uFFFD")))
	s = cmp.Or(s, " ")
	return slack.NewTextBlockObject(slack.PlainTextType, Truncate(s, limit), true, false)
}

// Section is a mrkdwn section; text longer than the limit is cut.
func Section(text string) *slack.SectionBlock {
	return slack.NewSectionBlock(mrkdwn(CutRunes(text, MaxSectionText)), nil, nil)
}

// header is a header block of plain text.
func header(text string) *slack.HeaderBlock {
	return slack.NewHeaderBlock(Plain(text, MaxHeaderText))
}

// ContextText is a context block with one mrkdwn element.
func ContextText(text string) *slack.ContextBlock {
	return slack.NewContextBlock("", mrkdwn(CutRunes(text, MaxContextText)))
}

// CutRunes cuts already-escaped mrkdwn to limit runes; it backs off so it
// never ends inside an entity or a <link>.
func CutRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)[:limit-1]
	out := string(r)
	if i := strings.LastIndexAny(out, "&<"); i >= 0 && !strings.ContainsAny(out[i:], ";>") {
		out = out[:i]
	}
	return out + ellipsis
}

// packLines groups lines (already escaped mrkdwn) into section blocks of at
// most SectionBudget runes each, at most maxSections blocks. A title, when
// given, starts the first block. When lines remain, the last block ends with
// the more line, which names how many were left out.
func packLines(title string, lines []string, maxSections int, more func(left int) string) []slack.Block {
	var blocks []slack.Block
	var cur strings.Builder
	if title = strings.TrimRight(title, "\n"); title != "" {
		cur.WriteString(title)
	}
	flush := func() {
		if cur.Len() > 0 {
			blocks = append(blocks, Section(cur.String()))
			cur.Reset()
		}
	}
	for i, l := range lines {
		l = CutRunes(l, SectionBudget-100)
		if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+1+utf8.RuneCountInString(l) > SectionBudget-100 {
			if len(blocks)+1 >= maxSections {
				left := len(lines) - i
				cur.WriteString("\n" + more(left))
				flush()
				return blocks
			}
			flush()
		}
		if cur.Len() > 0 {
			cur.WriteString("\n")
		}
		cur.WriteString(l)
	}
	flush()
	return blocks
}

// limitBlocks keeps at most limit blocks: when there are more it drops blocks
// from before the tail (the last keep blocks: buttons, footers) and puts a
// note in their place.
func limitBlocks(blocks []slack.Block, limit, keep int, note string) []slack.Block {
	if len(blocks) <= limit {
		return blocks
	}
	head := blocks[:limit-keep-1]
	tail := blocks[len(blocks)-keep:]
	out := append([]slack.Block{}, head...)
	out = append(out, ContextText(note))
	return append(out, tail...)
}

// money formats US dollars.
func money(usd float64) string {
	switch {
	case usd == 0:
		return "$0"
	case usd < 0.01:
		return "&lt;$0.01" // escaped: this is mrkdwn
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Duration formats a duration for people: 45s, 3m 05s, 2h 10m, 3d 4h.
func Duration(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

// Count formats an integer with thousands separators.
func Count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// SlackDate renders a time in each reader's own time zone, with a UTC fallback.
func SlackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), t.UTC().Format("2006-01-02 15:04 UTC"))
}

// progressBar draws a text bar of width cells for a fraction 0..1.
func progressBar(frac float64, width int) string {
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	if frac > 1 {
		frac = 1
	}
	full := int(math.Round(frac * float64(width)))
	return strings.Repeat("█", full) + strings.Repeat("░", width-full) + fmt.Sprintf(" %d%%", int(math.Round(frac*100)))
}

// RunRef renders a run id as code.
func RunRef(id string) string {
	if id == "" {
		return "(starting…)"
	}
	return "`" + Escape(Truncate(id, 64)) + "`"
}

// domainOf returns the host of a URL, without "www.".
func domainOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		u = u[i+3:]
	}
	if i := strings.IndexAny(u, "/?#"); i >= 0 {
		u = u[:i]
	}
	return strings.TrimPrefix(strings.ToLower(u), "www.")
}

// FirstNonEmpty returns the first non-blank string.
func FirstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
