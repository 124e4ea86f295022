package mcpsearch

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the short texts of a result.
const (
	maxTitle   = 300
	maxSnippet = 1000
	maxID      = 2000
)

// item is one search hit in the search/fetch convention of research
// connectors ({"results":[{"id","title","url","text"}]}), or a resource link.
type item struct {
	ID      string `json:"id"`
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	Text    string `json:"text"`
}

// errToolFailed is a tool answer marked as an error; the server's text is
// not passed on (it is untrusted and may be written to steer).
var errToolFailed = errors.New("the tool answered with an error")

// searchItems reads a search tool's answer: its structured content, else
// resource links and JSON text contents.
func searchItems(res *mcp.CallToolResult) ([]item, error) {
	if res.IsError {
		return nil, errToolFailed
	}
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			if items, ok := decodeItems(raw); ok {
				return items, nil
			}
		}
	}
	var out []item
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ResourceLink:
			out = append(out, item{ID: c.URI, Title: firstNonEmpty(c.Title, c.Name), Snippet: c.Description})
		case *mcp.TextContent:
			if items, ok := decodeItems([]byte(c.Text)); ok {
				out = append(out, items...)
			}
		}
	}
	return out, nil
}

// decodeItems accepts {"results":[…]} or […].
func decodeItems(raw []byte) ([]item, bool) {
	var wrapped struct {
		Results []item `json:"results"`
	}
	if json.Unmarshal(raw, &wrapped) == nil && wrapped.Results != nil {
		return wrapped.Results, true
	}
	var list []item
	if json.Unmarshal(raw, &list) == nil {
		return list, true
	}
	return nil, false
}

// readText reads a read tool's answer: a structured {"title","text"}, else
// its text contents (each one a {"title","text"} object or plain text).
func readText(res *mcp.CallToolResult) (title, text string, err error) {
	if res.IsError {
		return "", "", errToolFailed
	}
	if res.StructuredContent != nil {
		if raw, err := json.Marshal(res.StructuredContent); err == nil {
			var it item
			if json.Unmarshal(raw, &it) == nil && it.Text != "" {
				return it.Title, it.Text, nil
			}
		}
	}
	var parts []string
	for _, c := range res.Content {
		t, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		var it item
		if json.Unmarshal([]byte(t.Text), &it) == nil && it.Text != "" {
			title = firstNonEmpty(title, it.Title)
			parts = append(parts, it.Text)
			continue
		}
		parts = append(parts, t.Text)
	}
	return title, strings.Join(parts, "\n\n"), nil
}

// resourceText joins the text contents of a resource (blobs are skipped).
func resourceText(res *mcp.ReadResourceResult) string {
	var parts []string
	for _, c := range res.Contents {
		if c != nil && c.Text != "" {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// cleanLine makes untrusted text one line of at most n bytes of valid
// UTF-8 without control characters.
func cleanLine(s string, n int) string {
	s, _ = cleanText(s, n)
	return strings.Join(strings.Fields(s), " ")
}

// cleanText keeps valid UTF-8 without control characters (newlines and
// tabs stay), cut at n bytes on a rune boundary; cut reports a cut.
func cleanText(s string, n int) (out string, cut bool) {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t') || unicode.Is(unicode.Cf, r) {
			continue
		}
		if b.Len()+utf8.RuneLen(r) > n {
			return b.String(), true
		}
		b.WriteRune(r)
	}
	return b.String(), false
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
