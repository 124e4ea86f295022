package dedup

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

var (
	// doiRe matches a DOI: the "10." directory indicator, a registrant code and
	// a suffix that runs to the end of the string (DOIs may contain '/').
	doiRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^10\.\d{4,9}/\S+$`) })
	// arxivNewRe matches identifiers of the 2007+ scheme, e.g. 2101.00001v2.
	arxivNewRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d{4}\.\d{4,5})(v\d+)?$`) })
	// arxivOldRe matches identifiers of the old scheme, e.g. hep-th/9901001v1 or math.GT/0309136.
	arxivOldRe = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([a-zA-Z][a-zA-Z\-]*(?:\.[A-Za-z]{2})?/\d{7})(v\d+)?$`)
	})
	// arxivDOIRe matches the DOIs arXiv registers for its papers (10.48550/arXiv.2101.00001).
	arxivDOIRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^10\.48550/arxiv\.(.+)$`) })
)

// Identifiers extracts a DOI and an arXiv identifier from a URL such as
// https://doi.org/10.1000/xyz123, https://dl.acm.org/doi/10.1145/3292500.3330701,
// https://arxiv.org/abs/2101.00001v2 or https://arxiv.org/pdf/hep-th/9901001.pdf.
// Both are returned in canonical form (see NormalizeDOI and NormalizeArxivID);
// either is empty when the URL does not carry it. An arXiv DOI
// (10.48550/arXiv.…) yields both.
func Identifiers(rawURL string) (doi, arxivID string) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || u.Host == "" && !strings.Contains(rawURL, "doi.org/") && !strings.Contains(rawURL, "arxiv.org/") {
		return "", ""
	}
	if u.Host == "" { // scheme-less "doi.org/10.x" or "arxiv.org/abs/…"
		if u2, err := url.Parse("https://" + strings.TrimSpace(rawURL)); err == nil {
			u = u2
		}
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	p := u.Path
	switch {
	case host == "doi.org" || host == "dx.doi.org":
		doi = NormalizeDOI(strings.TrimPrefix(p, "/"))
	case host == "arxiv.org" || host == "export.arxiv.org":
		for _, prefix := range []string{"/abs/", "/pdf/", "/html/", "/ps/", "/format/"} {
			if rest, ok := strings.CutPrefix(p, prefix); ok {
				rest = strings.TrimSuffix(strings.TrimSuffix(rest, "/"), ".pdf")
				arxivID = NormalizeArxivID(rest)
				break
			}
		}
	default:
		// Publisher landing pages: …/doi/10.1145/…, …/doi/abs/10.1002/…
		if i := strings.Index(p, "/doi/"); i >= 0 {
			rest := p[i+len("/doi/"):]
			for _, sub := range []string{"abs/", "full/", "pdf/", "epdf/", "epub/", "book/", "fullHtml/"} {
				rest = strings.TrimPrefix(rest, sub)
			}
			doi = NormalizeDOI(rest)
		}
	}
	if doi != "" && arxivID == "" {
		if m := arxivDOIRe().FindStringSubmatch(doi); m != nil {
			arxivID = NormalizeArxivID(m[1])
		}
	}
	return doi, arxivID
}

// NormalizeDOI returns a DOI in canonical form: without a resolver prefix
// ("https://doi.org/", "doi:"), percent-decoded, lower-cased (DOIs are
// case-insensitive) and without trailing punctuation. It returns "" when s is
// not a DOI.
func NormalizeDOI(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	lower := strings.ToLower(s)
	for _, prefix := range []string{"https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "http://dx.doi.org/", "doi.org/", "doi:"} {
		if strings.HasPrefix(lower, prefix) {
			s = strings.TrimSpace(s[len(prefix):])
			break
		}
	}
	if d, err := url.PathUnescape(s); err == nil {
		s = d
	}
	s = strings.TrimRight(strings.ToLower(s), ".,;:)]}>\"'")
	if !doiRe().MatchString(s) {
		return ""
	}
	return s
}

// NormalizeArxivID returns an arXiv identifier without the "arXiv:" prefix and
// without its version suffix (2101.00001v2 → 2101.00001), so that versions of
// one paper compare equal. It returns "" when s is not an arXiv identifier.
func NormalizeArxivID(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 6 && strings.EqualFold(s[:6], "arxiv:") {
		s = s[6:]
	}
	if m := arxivNewRe().FindStringSubmatch(s); m != nil {
		return m[1]
	}
	if m := arxivOldRe().FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}
