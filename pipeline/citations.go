package pipeline

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// citationPattern finds, in one pass and in this order of preference at a
// position: a Markdown link or image (groups 1–2: text, URL), an autolink
// <https://…> (group 3), a bare URL (group 4) and a citation marker such as
// [3], [1, 4] or [2-5] (group 5).
const citationPattern = `!?\[([^\[\]\n]*)\]\(\s*<?([^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?(?:\s+"[^"\n]*")?\s*\)` +
	`|<((?i:https?://)[^\s<>]+)>` +
	`|((?i:https?://|www\.)[^\s<>\[\]"'` + "`" + `]+)` +
	`|\[(\s*\d{1,6}\s*(?:[,;\-–—]\s*\d{1,6}\s*)*)\]`

// maxCitationRange bounds how many ids a range marker such as [2-5] expands
// to; a wider range counts as its two ends only.
const maxCitationRange = 50

// citationScanner repairs the text of one draft against the pages a run fetched.
type citationScanner struct {
	re      *regexp.Regexp
	ids     map[int]bool
	urls    map[string]bool
	notes   []string
	removed int
}

// newCitationScanner indexes the fetched pages by source id and by their
// requested and final URLs.
func newCitationScanner(pages []Page) *citationScanner {
	s := &citationScanner{re: citationRE(), ids: map[int]bool{}, urls: map[string]bool{}}
	for _, p := range pages {
		s.ids[p.SourceID] = true
		for _, u := range []string{p.URL, p.FinalURL} {
			if k := urlKey(u); k != "" {
				s.urls[k] = true
			}
		}
	}
	return s
}

// urlKey normalises a URL for comparison: scheme, "www.", default port,
// fragment and a trailing slash are ignored, the host is lower-cased.
// It returns "" for text that is not an absolute http(s) URL.
func urlKey(raw string) string {
	raw = strings.TrimSpace(raw)
	if strings.HasPrefix(strings.ToLower(raw), "www.") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		host += ":" + p
	}
	key := host + strings.TrimSuffix(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return key
}

// parseMarker expands the ids of a marker's inside ("1, 3-5" → 1 3 4 5),
// without duplicates, in order.
func parseMarker(inner string) []int {
	var ids []int
	add := func(n int) {
		if !slices.Contains(ids, n) {
			ids = append(ids, n)
		}
	}
	for _, part := range strings.FieldsFunc(inner, func(r rune) bool { return r == ',' || r == ';' }) {
		ends := strings.FieldsFunc(part, func(r rune) bool { return r == '-' || r == '–' || r == '—' })
		switch len(ends) {
		case 1:
			if n, err := strconv.Atoi(strings.TrimSpace(ends[0])); err == nil {
				add(n)
			}
		case 2:
			a, errA := strconv.Atoi(strings.TrimSpace(ends[0]))
			b, errB := strconv.Atoi(strings.TrimSpace(ends[1]))
			if errA != nil || errB != nil {
				continue
			}
			if a <= b && b-a <= maxCitationRange {
				for n := a; n <= b; n++ {
					add(n)
				}
			} else {
				add(a)
				add(b)
			}
		}
	}
	return ids
}

// markerIDs returns the ids cited by the markers in text, in order of first
// appearance, without duplicates.
func markerIDs(text string) []int {
	re := citationRE()
	var ids []int
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		if m[10] < 0 {
			continue
		}
		for _, id := range parseMarker(text[m[10]:m[11]]) {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// splitURLTail separates trailing punctuation (and unbalanced closing
// parentheses) from a bare URL match.
func splitURLTail(u string) (string, string) {
	end := len(u)
	for end > 0 {
		c := u[end-1]
		if strings.IndexByte(".,;:!?*_~", c) >= 0 {
			end--
			continue
		}
		if c == ')' && strings.Count(u[:end], "(") < strings.Count(u[:end], ")") {
			end--
			continue
		}
		break
	}
	return u[:end], u[end:]
}

// rewrite scans text, replacing every match with what repl returns; repl gets
// the match's submatch indexes. When repl returns "" and drop is true, the
// whitespace before the match is dropped too if the text after it starts with
// whitespace, punctuation or nothing, so "claim [9]." becomes "claim.".
func (s *citationScanner) rewrite(text string, repl func(m []int) (out string, tail string, drop bool)) string {
	var b strings.Builder
	last := 0
	for _, m := range s.re.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(text[last:m[0]])
		out, tail, drop := repl(m)
		rest := tail + text[m[1]:]
		if drop && out == "" && (rest == "" || strings.IndexByte(" \t\n.,;:!?)", rest[0]) >= 0) {
			trimmed := strings.TrimRight(b.String(), " \t")
			b.Reset()
			b.WriteString(trimmed)
		}
		b.WriteString(out)
		b.WriteString(tail)
		last = m[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// emptyParens matches a pair of parentheses left empty by a removal.
const emptyParensPattern = `[ \t]*\([ \t]*\)`

// The patterns compiled once (a compiled Regexp is safe for concurrent use).
var (
	citationRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(citationPattern) })
	emptyParensRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(emptyParensPattern) })
)

// check repairs one text field: where names it in notes.
func (s *citationScanner) check(text, where string) string {
	before := s.removed
	out := s.checkMatches(text, where)
	if s.removed > before {
		out = emptyParensRE().ReplaceAllString(out, "")
	}
	return out
}

// checkMatches repairs every link, URL and marker of text.
func (s *citationScanner) checkMatches(text, where string) string {
	return s.rewrite(text, func(m []int) (string, string, bool) {
		whole := text[m[0]:m[1]]
		switch {
		case m[2] >= 0: // Markdown link or image
			anchor, target := text[m[2]:m[3]], text[m[4]:m[5]]
			if s.urls[urlKey(target)] {
				return whole, "", false
			}
			s.removed++
			s.notes = append(s.notes, fmt.Sprintf("unlinked %q in %s: the run did not read %s", flatLine(anchor), where, target))
			return anchor, "", anchor == ""
		case m[6] >= 0: // <autolink>
			target := text[m[6]:m[7]]
			if s.urls[urlKey(target)] {
				return whole, "", false
			}
			s.removed++
			s.notes = append(s.notes, fmt.Sprintf("removed link to %s in %s: the run did not read it", target, where))
			return "", "", true
		case m[8] >= 0: // bare URL
			target, tail := splitURLTail(text[m[8]:m[9]])
			if s.urls[urlKey(target)] {
				return whole, "", false
			}
			s.removed++
			s.notes = append(s.notes, fmt.Sprintf("removed link to %s in %s: the run did not read it", target, where))
			if tail == "" {
				return "", "", true
			}
			return "", tail, true
		default: // citation marker
			ids := parseMarker(text[m[10]:m[11]])
			var keep, gone []int
			for _, id := range ids {
				if s.ids[id] {
					keep = append(keep, id)
				} else {
					gone = append(gone, id)
				}
			}
			if len(gone) == 0 {
				return whole, "", false
			}
			s.removed += len(gone)
			for _, id := range gone {
				s.notes = append(s.notes, fmt.Sprintf("removed citation [%d] in %s: source %d was not read by this run", id, where, id))
			}
			if len(keep) == 0 {
				return "", "", true
			}
			return "[" + joinInts(keep) + "]", "", false
		}
	})
}

// CheckCitations makes a draft cite only pages the run fetched (invariant 8).
// Every citation marker ([n], [n, m], [n-m]) is kept only for ids that are a
// fetched page's SourceID; Markdown links, autolinks and bare URLs that do
// not point at a fetched page's URL or final URL are unlinked (a link keeps
// its anchor text, a bare URL is dropped). Each Section.Citations is rebuilt
// from the markers that remain. It returns the repaired draft and a note for
// each thing it removed; the input draft is not modified.
func CheckCitations(d Draft, pages []Page) (Draft, []string) {
	s := newCitationScanner(pages)
	out := d
	out.Title = s.check(d.Title, "the title")
	out.Abstract = s.check(d.Abstract, "the abstract")
	out.Sections = make([]Section, len(d.Sections))
	for i, sec := range d.Sections {
		where := fmt.Sprintf("section %q", flatLine(sec.Title))
		out.Sections[i] = Section{Title: s.check(sec.Title, where+" (title)"), Content: s.check(sec.Content, where)}
		out.Sections[i].Citations = markerIDs(out.Sections[i].Content)
		if out.Sections[i].Citations == nil {
			out.Sections[i].Citations = []int{}
		}
	}
	out.Conclusion = s.check(d.Conclusion, "the conclusion")
	out.Notes = slices.Clone(d.Notes)
	return out, s.notes
}

// numberDraft renumbers a draft's citations 1..k in order of first
// appearance (abstract, then sections in order, then conclusion) and returns
// the draft with markers rewritten as [n] or [n, m] (sorted, without
// duplicates), Section.Citations holding reference numbers, and the
// References: one per cited page, with its title (or domain), URL (the final
// URL when known), domain and publication date. Markers naming no page in
// pages are dropped; call CheckCitations first to also unlink unread URLs.
// The function it also returns renumbers the markers of any text of d (such
// as one of its sentences) the same way.
func numberDraft(d Draft, pages []Page) (Draft, []Reference, func(string) string) {
	byID := make(map[int]Page, len(pages))
	for _, p := range pages {
		if _, dup := byID[p.SourceID]; !dup {
			byID[p.SourceID] = p
		}
	}
	n := map[int]int{}
	var refs []Reference
	note := func(text string) {
		for _, id := range markerIDs(text) {
			p, ok := byID[id]
			if !ok || n[id] > 0 {
				continue
			}
			n[id] = len(refs) + 1
			u := pageAddress(p)
			refs = append(refs, Reference{
				N: n[id], SourceID: id, Title: flatLine(nonBlank(p.Title, hostDomain(u))),
				URL: u, Domain: hostDomain(u), Published: p.Published,
				Kind: p.Kind, Pages: p.PageCount,
			})
			if p.File != "" {
				refs[len(refs)-1].Title, refs[len(refs)-1].Domain, refs[len(refs)-1].File = flatLine(p.File), KindFile, true
				refs[len(refs)-1].SharedBy = p.SharedBy
			}
		}
	}
	note(d.Abstract)
	for _, s := range d.Sections {
		note(s.Content)
	}
	note(d.Conclusion)

	s := newCitationScanner(pages)
	renumber := func(text string) string {
		return s.rewrite(text, func(m []int) (string, string, bool) {
			if m[10] < 0 {
				return text[m[0]:m[1]], "", false
			}
			var ns []int
			for _, id := range parseMarker(text[m[10]:m[11]]) {
				if k := n[id]; k > 0 && !slices.Contains(ns, k) {
					ns = append(ns, k)
				}
			}
			if len(ns) == 0 {
				return "", "", true
			}
			slices.Sort(ns)
			return "[" + joinInts(ns) + "]", "", false
		})
	}
	out := d
	out.Title = renumber(d.Title)
	out.Abstract = renumber(d.Abstract)
	out.Conclusion = renumber(d.Conclusion)
	out.Sections = make([]Section, len(d.Sections))
	for i, sec := range d.Sections {
		c := renumber(sec.Content)
		cites := markerIDs(c)
		if cites == nil {
			cites = []int{}
		}
		out.Sections[i] = Section{Title: sec.Title, Content: c, Citations: cites}
	}
	out.Notes = slices.Clone(d.Notes)
	if refs == nil {
		refs = []Reference{}
	}
	return out, refs, renumber
}
