// Package dedup recognises the same work reached by different routes: the
// same page under different URL spellings, the same paper under its DOI or
// arXiv identifier at different hosts, and near-identical text published in
// several places.
//
// Three tools are offered (search merges results with them; the assembly
// keys the engine's sources by them; scheduler's digests tell what is new
// by the keys and fingerprints of the pages earlier reports cited):
//
//   - NormalizeURL rewrites a URL to a canonical spelling (lower-case scheme and
//     host, no default port, no fragment, no tracking parameters, sorted query,
//     no trailing slash, resolved dot segments).
//   - Identifiers extracts a DOI and an arXiv identifier from a URL, and
//     NormalizeDOI / NormalizeArxivID canonicalise identifiers found in
//     metadata fields.
//   - Simhash fingerprints text from its word shingles; NearDuplicate compares
//     two fingerprints.
package dedup

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"
)

// ErrUnsupportedURL is wrapped by NormalizeURL's error when the input is not an
// absolute http or https URL with a host.
var ErrUnsupportedURL = errors.New("dedup: not an absolute http(s) URL")

// trackingParams are query parameters that identify a campaign, a click or a
// referrer rather than the resource; they are removed by NormalizeURL.
// Parameters starting with "utm_" are removed too.
var trackingParams = map[string]bool{
	"gclid": true, "gclsrc": true, "dclid": true, "gbraid": true, "wbraid": true,
	"fbclid": true, "msclkid": true, "yclid": true, "twclid": true, "ttclid": true,
	"igshid": true, "li_fat_id": true, "mc_cid": true, "mc_eid": true,
	"_ga": true, "_gl": true, "_hsenc": true, "_hsmi": true, "mkt_tok": true,
	"ref": true, "ref_src": true, "ref_url": true, "referrer": true,
	"spm": true, "vero_id": true, "oly_anon_id": true, "oly_enc_id": true,
	"rb_clickid": true, "s_cid": true, "wt_mc": true, "ncid": true, "cmpid": true,
	"__s": true, "ss_source": true, "ss_campaign_id": true,
}

// NormalizeURL returns the canonical spelling of an absolute http(s) URL, used as
// a deduplication key. It lower-cases the scheme and host, drops trailing dots
// on the host and the default port (80 for http, 443 for https), removes the
// fragment, any user:password@ credentials (never part of a resource's
// identity, and never worth storing) and tracking parameters (utm_*, gclid,
// fbclid, ref, …), sorts the remaining query parameters, resolves "." and ".."
// path segments, collapses repeated slashes, upper-cases percent escapes and
// removes a trailing slash (the root path stays "/"). Encoding of kept query
// parameters is preserved.
//
// It returns an error wrapping ErrUnsupportedURL for relative URLs, URLs
// without a host and schemes other than http and https. NormalizeURL is
// idempotent: normalising its output returns the output unchanged.
func NormalizeURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("dedup: parse URL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" || u.Opaque != "" {
		return "", fmt.Errorf("%w: %q", ErrUnsupportedURL, truncate(raw, 80))
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimRight(host, ".")
	if host == "" {
		return "", fmt.Errorf("%w: no host in %q", ErrUnsupportedURL, truncate(raw, 80))
	}
	port := u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}

	var b strings.Builder
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	b.WriteString(normalizePath(u.EscapedPath()))
	if q := normalizeQuery(u.RawQuery); q != "" {
		b.WriteByte('?')
		b.WriteString(q)
	}
	out := b.String()
	// The result must itself parse to the same thing; anything url.Parse
	// would read differently (exotic hosts, broken escapes) is rejected so that
	// the function stays idempotent.
	if _, err := url.Parse(out); err != nil {
		return "", fmt.Errorf("dedup: parse URL: %w", err)
	}
	return out, nil
}

// normalizePath resolves dot segments, upper-cases percent escapes and removes a
// trailing slash from an escaped path. An empty path becomes "/".
func normalizePath(p string) string {
	if p == "" || p == "/" {
		return "/"
	}
	p = upperEscapes(p)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	// path.Clean also collapses repeated slashes, which servers almost always
	// treat as one.
	p = path.Clean(p)
	if p == "." {
		return "/"
	}
	return p
}

// upperEscapes upper-cases the two hex digits after each '%'.
func upperEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			b[i+1] = upperHex(b[i+1])
			b[i+2] = upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

// normalizeQuery drops empty pieces and tracking parameters and sorts the rest
// by decoded key, then by raw text. Kept pieces are not re-encoded.
func normalizeQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type piece struct{ key, raw string }
	var kept []piece
	for _, p := range strings.Split(raw, "&") {
		// Spaces are not valid in a query; trimming them keeps the result
		// stable under the TrimSpace at NormalizeURL's entry.
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, _, _ := strings.Cut(p, "=")
		if dk, err := url.QueryUnescape(k); err == nil {
			k = dk
		}
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "utm_") || trackingParams[lk] {
			continue
		}
		kept = append(kept, piece{key: k, raw: upperEscapes(p)})
	}
	slices.SortStableFunc(kept, func(a, b piece) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.raw, b.raw)
	})
	parts := make([]string, len(kept))
	for i, p := range kept {
		parts[i] = p.raw
	}
	return strings.Join(parts, "&")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
