package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// mdLink finds the target of a Markdown link: [text](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// slugDrop is what GitHub drops from a heading to make its anchor.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchors returns the anchors of a Markdown file's headings, as GitHub
// makes them.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	fenced := false
	for line := range strings.SplitSeq(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(line, "#"))
		out[strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(h), ""), " ", "-")] = true
	}
	return out
}

// TestDocumentationLinksResolve: every relative link of README.md and
// docs/ names a file of the repository, and every #anchor a heading of the
// file it points into, so moving text between them cannot leave a link
// dangling.
func TestDocumentationLinksResolve(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(repoRoot, "README.md"))
	if len(files) < 5 {
		t.Fatalf("only %d documentation files found", len(files))
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links to %s, which does not exist", file, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			md, err := os.ReadFile(dest)
			if err != nil {
				t.Errorf("%s links to %s: %v", file, target, err)
				continue
			}
			if !anchors(string(md))[anchor] {
				t.Errorf("%s links to %s: no heading makes the anchor #%s", file, target, anchor)
			}
		}
	}
}
