package docsearch

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"
)

// benchDocuments is how many documents the benchmark indexes.
const benchDocuments = 10000

// corpusTexts is the visible text of the real web pages go-trafilatura ships
// as its test corpus (test-files/comparison: 1,000-odd pages of news,
// blogs and documentation in several languages), one string per page of at
// least 2,000 bytes.
func corpusTexts(b *testing.B) []string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		b.Skipf("no module cache: %v", err)
	}
	dirs, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "github.com/markusmobius/go-trafilatura@*/test-files/comparison"))
	if len(dirs) == 0 {
		b.Skip("go-trafilatura's test pages are not in the module cache (go mod download github.com/markusmobius/go-trafilatura)")
	}
	var texts []string
	_ = filepath.WalkDir(dirs[0], func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		if t := visibleText(raw); len(t) >= 2000 {
			texts = append(texts, t)
		}
		return nil
	})
	if len(texts) == 0 {
		b.Skip("no usable pages in the corpus")
	}
	return texts
}

// visibleText is the text of an HTML page outside script and style, one
// line per text node.
func visibleText(page []byte) string {
	z := html.NewTokenizer(bytes.NewReader(page))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			if n, _ := z.TagName(); string(n) == "script" || string(n) == "style" || string(n) == "noscript" {
				skip++
			}
		case html.EndTagToken:
			if n, _ := z.TagName(); (string(n) == "script" || string(n) == "style" || string(n) == "noscript") && skip > 0 {
				skip--
			}
		case html.TextToken:
			if skip == 0 {
				if t := strings.Join(strings.Fields(string(z.Text())), " "); t != "" {
					b.WriteString(t + "\n")
				}
			}
		}
	}
}

// writeCorpus writes n Markdown documents under dir, document i being a
// window of 1,500–5,500 bytes of page i mod len(texts), starting at an
// offset that depends on i: each document differs, all are real text.
func writeCorpus(b *testing.B, dir string, texts []string, n int) (total int64) {
	b.Helper()
	for i := range n {
		t := texts[i%len(texts)]
		size := 1500 + (i*7919)%4000
		from := (i / len(texts) * 997) % max(1, len(t)-size)
		to := min(len(t), from+size)
		body := fmt.Sprintf("# Document %d\n\n%s\n", i, strings.ToValidUTF8(t[from:to], ""))
		p := filepath.Join(dir, fmt.Sprintf("d%02d", i%100), fmt.Sprintf("doc-%05d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
		total += int64(len(body))
	}
	return total
}

// BenchmarkCollection10k indexes 10,000 documents made from a real web
// corpus (see corpusTexts), then times searches of two-word queries taken
// from the corpus. Each op is one search; the metrics give the first
// indexing's time and size, an Update that finds nothing changed, and the
// median and 95th-percentile search latency.
//
//	go test -run '^$' -bench Collection10k -benchtime 200x ./search/docsearch
func BenchmarkCollection10k(b *testing.B) {
	texts := corpusTexts(b)
	dir := filepath.Join(b.TempDir(), "corpus")
	corpusBytes := writeCorpus(b, dir, texts, benchDocuments)
	c, err := Open(Config{Dirs: []string{dir}, IndexDir: filepath.Join(b.TempDir(), "index")})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	start := time.Now()
	rep, err := c.Update(ctx)
	if err != nil {
		b.Fatal(err)
	}
	indexTime := time.Since(start)
	if rep.Added != benchDocuments || rep.Skipped != 0 {
		b.Fatalf("indexed %+v", rep)
	}
	start = time.Now()
	if rep, err := c.Update(ctx); err != nil || rep.Unchanged != benchDocuments || len(rep.Read) != 0 {
		b.Fatalf("second update %+v, %v", rep, err)
	}
	noop := time.Since(start)
	st := c.Status()

	var queries []string
	for i := 0; len(queries) < 200; i++ {
		words := strings.Fields(texts[(i*31)%len(texts)])
		if len(words) < 40 {
			continue
		}
		queries = append(queries, words[(i*13)%(len(words)-2)]+" "+words[(i*13)%(len(words)-2)+1])
	}
	var took []time.Duration
	found := 0
	for i := 0; b.Loop(); i++ {
		t := time.Now()
		hits, err := c.Search(ctx, queries[i%len(queries)], 10)
		took = append(took, time.Since(t))
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) > 0 {
			found++
		}
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(st.IndexBytes)/(1<<20), "index-MiB")
	b.ReportMetric(float64(corpusBytes)/(1<<20), "corpus-MiB")
	b.ReportMetric(indexTime.Seconds(), "index-s")
	b.ReportMetric(float64(noop.Milliseconds()), "noop-update-ms")
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "p95-ms")
	b.ReportMetric(float64(found)/float64(len(took)), "found/query")
}
