package fetch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The extraction quality figures come from go-trafilatura's comparison
// corpus: about a thousand real-world pages (news, blogs, shops, forums in
// many languages, from the BBAW collection and others) with, per page,
// strings the main text must contain, strings of boilerplate it must not
// contain, and for most pages the publication date. The corpus (130 MB) is
// not copied into this repository: it is read from the module cache, where
// `go mod download` puts it, so every machine scores the same pages.
const corpusModule = "github.com/markusmobius/go-trafilatura@v1.12.2"

// corpusPage is one annotated page of the corpus.
type corpusPage struct {
	URL     string
	Path    string // the HTML file
	With    []string
	Without []string
	Date    string // YYYY-MM-DD, or "" when not annotated
}

// loadCorpus locates the corpus module with `go mod download` (from the
// module cache when it is there, otherwise from the module proxy) and reads
// its annotations. It skips tb with the reason when that is not possible.
func loadCorpus(tb testing.TB) []corpusPage {
	tb.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		tb.Skip("extraction corpus: the go command is not on PATH")
	}
	var stderr bytes.Buffer
	cmd := exec.Command(goCmd, "mod", "download", "-json", corpusModule)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); err != nil || jerr != nil || mod.Error != "" || mod.Dir == "" {
		tb.Skipf("extraction corpus: cannot download %s (offline? no module proxy?): %v %s %s",
			corpusModule, err, mod.Error, strings.TrimSpace(stderr.String()))
	}
	src, err := os.ReadFile(filepath.Join(mod.Dir, "scripts", "comparison", "data.go"))
	if err != nil {
		tb.Fatalf("extraction corpus: %v", err)
	}
	pages, err := parseComparisonData(src)
	if err != nil {
		tb.Fatalf("extraction corpus: %v", err)
	}
	for i := range pages {
		p := &pages[i]
		p.Path = filepath.Join(mod.Dir, "test-files", "comparison", p.Path)
		if _, err := os.Stat(p.Path); err != nil {
			p.Path = filepath.Join(mod.Dir, "test-files", "mock", filepath.Base(p.Path))
		}
	}
	return pages
}

// parseComparisonData reads the corpus annotations, a Go map literal
// `comparisonData = map[string]ComparisonEntry{URL: {File: …, With: …}}`,
// with go/parser: they are data, never compiled or run.
func parseComparisonData(src []byte) ([]corpusPage, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "data.go", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "comparisonData" && len(vs.Values) == 1 {
			lit, _ = vs.Values[0].(*ast.CompositeLit)
		}
		return lit == nil
	})
	if lit == nil {
		return nil, errors.New("no comparisonData map literal")
	}
	var pages []corpusPage
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return nil, errors.New("comparisonData: an element is not key: value")
		}
		pageURL, err := stringLit(kv.Key)
		if err != nil {
			return nil, err
		}
		entry, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("comparisonData[%q]: not a struct literal", pageURL)
		}
		p := corpusPage{URL: pageURL}
		for _, field := range entry.Elts {
			fkv, ok := field.(*ast.KeyValueExpr)
			if !ok {
				return nil, fmt.Errorf("comparisonData[%q]: a field is not name: value", pageURL)
			}
			name, _ := fkv.Key.(*ast.Ident)
			if name == nil {
				continue
			}
			switch name.Name {
			case "File":
				p.Path, err = stringLit(fkv.Value)
			case "Date":
				p.Date, err = stringLit(fkv.Value)
			case "With":
				p.With, err = stringsLit(fkv.Value)
			case "Without":
				p.Without, err = stringsLit(fkv.Value)
			}
			if err != nil {
				return nil, fmt.Errorf("comparisonData[%q].%s: %w", pageURL, name.Name, err)
			}
		}
		if p.Path == "" {
			return nil, fmt.Errorf("comparisonData[%q]: no File", pageURL)
		}
		pages = append(pages, p)
	}
	return pages, nil
}

func stringLit(e ast.Expr) (string, error) {
	bl, ok := e.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", errors.New("not a string literal")
	}
	return strconv.Unquote(bl.Value)
}

func stringsLit(e ast.Expr) ([]string, error) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, errors.New("not a []string literal")
	}
	out := make([]string, 0, len(cl.Elts))
	for _, el := range cl.Elts {
		s, err := stringLit(el)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// textScore counts, over pages, the expected strings found (true positives)
// and missed (false negatives), and the boilerplate strings found (false
// positives) and left out (true negatives): the corpus's own scoring.
type textScore struct{ TP, FN, FP, TN int }

// scoreText scores one page's extracted text against its annotations.
func scoreText(p corpusPage, text string) textScore {
	var s textScore
	for _, w := range p.With {
		if text != "" && strings.Contains(text, w) {
			s.TP++
		} else {
			s.FN++
		}
	}
	for _, w := range p.Without {
		if text != "" && strings.Contains(text, w) {
			s.FP++
		} else {
			s.TN++
		}
	}
	return s
}

func (s *textScore) add(o textScore) {
	s.TP += o.TP
	s.FN += o.FN
	s.FP += o.FP
	s.TN += o.TN
}

func (s textScore) Precision() float64 { return ratio(s.TP, s.TP+s.FP) }
func (s textScore) Recall() float64    { return ratio(s.TP, s.TP+s.FN) }
func (s textScore) F1() float64        { return ratio(2*s.TP, 2*s.TP+s.FP+s.FN) }
func (s textScore) Accuracy() float64  { return ratio(s.TP+s.TN, s.TP+s.TN+s.FP+s.FN) }

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// dateScore counts, over the pages annotated with a date, the dates found
// right, found wrong, and not found.
type dateScore struct{ Right, Wrong, Missing int }

func (d dateScore) Accuracy() float64 { return ratio(d.Right, d.Right+d.Wrong+d.Missing) }

func TestParseComparisonData(t *testing.T) {
	src := []byte(`package main
var comparisonData = map[string]ComparisonEntry{
	"https://a.example/x": {
		File:    "a.html",
		Date:    "2019-08-02",
		Authors: []string{"Ann"},
		With:    []string{"kept one", "kept \"two\""},
		Without: []string{"Impressum"},
	},
	"https://b.example/": {File: "b.html", With: []string{"b"}},
}`)
	pages, err := parseComparisonData(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 {
		t.Fatalf("got %d pages, want 2", len(pages))
	}
	a := pages[0]
	if a.URL != "https://a.example/x" || a.Path != "a.html" || a.Date != "2019-08-02" ||
		len(a.With) != 2 || a.With[1] != `kept "two"` || len(a.Without) != 1 {
		t.Errorf("page a = %+v", a)
	}
	if _, err := parseComparisonData([]byte(`package main
var comparisonData = map[string]ComparisonEntry{"u": {With: []string{"x"}}}`)); err == nil {
		t.Error("an entry without File was accepted")
	}
}

func TestScoreText(t *testing.T) {
	p := corpusPage{With: []string{"alpha", "beta"}, Without: []string{"menu", "footer"}}
	got := scoreText(p, "alpha and the menu")
	if want := (textScore{TP: 1, FN: 1, FP: 1, TN: 1}); got != want {
		t.Errorf("scoreText = %+v, want %+v", got, want)
	}
	if got := scoreText(p, ""); got != (textScore{FN: 2, TN: 2}) {
		t.Errorf("empty text scores %+v", got)
	}
	s := textScore{TP: 8, FN: 2, FP: 2, TN: 8}
	if s.Precision() != 0.8 || s.Recall() != 0.8 || s.F1() != 0.8 || s.Accuracy() != 0.8 {
		t.Errorf("P=%v R=%v F1=%v A=%v", s.Precision(), s.Recall(), s.F1(), s.Accuracy())
	}
}

// scoreCorpus runs extractFn on every page and scores the texts and dates.
func scoreCorpus(tb testing.TB, pages []corpusPage, extractFn func(body []byte, pageURL *url.URL) extraction) (textScore, dateScore) {
	var text textScore
	var date dateScore
	for _, p := range pages {
		body, err := os.ReadFile(p.Path)
		if err != nil {
			tb.Fatal(err)
		}
		u, err := url.Parse(p.URL)
		if err != nil {
			tb.Fatalf("corpus page %q: %v", p.URL, err)
		}
		ex := extractFn(body, u)
		text.add(scoreText(p, ex.Text))
		switch {
		case p.Date == "":
		case ex.Published.IsZero():
			date.Missing++
		case ex.Published.Format("2006-01-02") == p.Date:
			date.Right++
		default:
			date.Wrong++
		}
	}
	return text, date
}

// extractUncapped is extract as the fetcher calls it, without the text cap.
func extractUncapped(body []byte, pageURL *url.URL) extraction {
	ex, err := extract(body, "text/html", "text/html", pageURL, 1<<30)
	if err != nil {
		return extraction{}
	}
	return ex
}

// BenchmarkExtractionQuality prints how well extract keeps main text and
// drops boilerplate on the corpus (precision, recall, F1 over the annotated
// strings) and how often it finds the annotated publication date.
func BenchmarkExtractionQuality(b *testing.B) {
	pages := loadCorpus(b)
	for range b.N {
		text, date := scoreCorpus(b, pages, extractUncapped)
		b.ReportMetric(float64(len(pages)), "pages")
		b.ReportMetric(text.Precision(), "precision")
		b.ReportMetric(text.Recall(), "recall")
		b.ReportMetric(text.F1(), "F1")
		b.ReportMetric(date.Accuracy(), "date-accuracy")
	}
}
