package mcpsearch

import (
	"net/url"
	"strings"

	"github.com/researchbot/researchbot/search"
)

// Scheme is the URL scheme of an MCP server's results.
const Scheme = search.ItemScheme

// URL is the address of result id of server name: mcp://<name>/<escaped id>.
func URL(name, id string) string {
	return Scheme + "://" + name + "/" + url.PathEscape(id)
}

// ParseURL returns the server name and result id of an address made by URL;
// ok is false for any other URL.
func ParseURL(raw string) (name, id string, ok bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme != Scheme || u.Host == "" {
		return "", "", false
	}
	id, err = url.PathUnescape(strings.TrimPrefix(u.EscapedPath(), "/"))
	if err != nil || id == "" {
		return "", "", false
	}
	return strings.ToLower(u.Host), id, true
}

// resourceURI fills template with id: as it is when the template is "{id}"
// alone (ids are resource URIs), else path-escaped.
func resourceURI(template, id string) string {
	if template == "{id}" {
		return id
	}
	return strings.ReplaceAll(template, "{id}", url.PathEscape(id))
}
