package docsearch

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/researchbot/researchbot/search"
)

// Scheme is the URL scheme of a document of the collection.
const Scheme = search.DocumentScheme

// URL is the address of the document at rel (slash-separated) in the
// collection folder named root, naming page when it is not 0.
func URL(root, rel string, page int) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := Scheme + "://" + root + "/" + strings.Join(segs, "/")
	if page > 0 {
		u += "#page=" + strconv.Itoa(page)
	}
	return u
}

// ParseURL splits a docs:// address into its folder's name, the path
// within it and the page it names (0 for none); ok is false for any other
// address.
func ParseURL(raw string) (root, rel string, page int, ok bool) {
	if !strings.HasPrefix(raw, Scheme+"://") {
		return "", "", 0, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Path == "" || u.Path == "/" {
		return "", "", 0, false
	}
	rel = strings.TrimPrefix(u.Path, "/")
	if strings.Contains("/"+rel+"/", "/../") || strings.Contains("/"+rel+"/", "/./") {
		return "", "", 0, false
	}
	if p, found := strings.CutPrefix(u.Fragment, "page="); found {
		page, _ = strconv.Atoi(p)
		page = max(page, 0)
	}
	return u.Host, rel, page, true
}

// Cite is how a report names a hit: the path within its folder, and the
// page when there is one ("policies/leave.pdf, p. 3").
func Cite(rel string, page int) string {
	if page > 0 {
		return rel + ", p. " + strconv.Itoa(page)
	}
	return rel
}
