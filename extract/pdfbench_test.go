//go:build pdfbench

package extract

// The measurement behind the choice of PDF library. It compares candidate
// pure-Go libraries on a corpus of real PDFs that no one here wrote, against
// poppler's pdftotext as the reference, and prints one row per candidate:
// documents read, pages, word-bag F1 against the reference, pages per
// second and peak heap. Run it with
//
//	go test -tags pdfbench -run TestComparePDFLibraries -v ./extract/
//
// The corpus is found at run time: the directories in EXTRACT_PDF_CORPUS
// (colon-separated), else the test PDFs shipped in modules of the module
// cache (pdfcpu's pkg/testdata, the candidates' own testdata) and the PDFs
// Debian packages install under /usr/share/doc (gzipped ones included).
// Without a corpus or pdftotext the test is skipped, saying what is missing.
// EXTRACT_PDF_TRACE=1 prints each file's name and word F1 as it is read.

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dslipak "github.com/dslipak/pdf"
	ledongthuc "github.com/ledongthuc/pdf"
)

// corpusFile is one PDF of the corpus with its reference text per page.
type corpusFile struct {
	name  string
	body  []byte
	pages []string // pdftotext's pages
}

// candidate reads a PDF into the text of its pages.
type candidate struct {
	name string
	read func(body []byte) ([]string, error)
}

func TestComparePDFLibraries(t *testing.T) {
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("pdftotext (Debian's poppler-utils) is not installed: it is the reference; apt-get install poppler-utils")
	}
	files := loadCorpus(t)
	if len(files) == 0 {
		t.Skip("no PDF corpus found: set EXTRACT_PDF_CORPUS, or download github.com/pdfcpu/pdfcpu@v0.11.1 into the module cache, or install Debian docs that ship PDFs")
	}
	refPages := 0
	for _, f := range files {
		refPages += len(f.pages)
	}
	t.Logf("corpus: %d PDFs, %d pages (per pdftotext)", len(files), refPages)

	cands := []candidate{
		{"github.com/ledongthuc/pdf", readLedongthuc},
		{"extract.PDF (ledongthuc + bounds)", func(b []byte) ([]string, error) {
			d, err := PDF(context.Background(), b, Limits{MaxPages: 1 << 20, MaxRunes: math.MaxInt32})
			if err != nil {
				return nil, err
			}
			var pages []string
			for i, s := range d.PageStarts {
				end := len(d.Text)
				if i+1 < len(d.PageStarts) {
					end = d.PageStarts[i+1]
				}
				pages = append(pages, d.Text[s:end])
			}
			return pages, nil
		}},
		// Last: a hung read keeps its goroutine busy until the process
		// ends, which would slow the rows after it.
		{"github.com/dslipak/pdf", readDslipak},
	}
	fmt.Printf("%-36s %7s %7s %8s %8s %9s %10s\n", "library", "read", "pages", "F1 mean", "F1 all", "pages/s", "peak heap")
	for _, c := range cands {
		runtime.GC()
		peak := startPeakHeap()
		var ok, pages int
		var f1sum float64
		var tpAll, candAll, refAll int
		var failures []string
		start := time.Now()
		for _, f := range files {
			if os.Getenv("EXTRACT_PDF_TRACE") != "" {
				fmt.Fprintln(os.Stderr, c.name, f.name)
			}
			got, err := readWithin(c.read, f.body, perFileTimeout)
			if err != nil {
				failures = append(failures, f.name+": "+firstLine(err.Error()))
				continue
			}
			ok++
			pages += len(got)
			tp, nc, nr := overlap(strings.Join(got, "\n"), strings.Join(f.pages, "\n"))
			tpAll, candAll, refAll = tpAll+tp, candAll+nc, refAll+nr
			f1sum += f1(tp, nc, nr)
			if os.Getenv("EXTRACT_PDF_TRACE") != "" {
				fmt.Fprintf(os.Stderr, "  F1 %.3f\n", f1(tp, nc, nr))
			}
		}
		elapsed := time.Since(start)
		heap := peak()
		// Failed documents count as F1 0 in the mean: a library that
		// cannot open a file extracts nothing from it.
		fmt.Printf("%-36s %3d/%-3d %7d %8.3f %8.3f %9.0f %8.1fMB\n", c.name, ok, len(files), pages,
			f1sum/float64(len(files)), f1(tpAll, candAll, refAll), float64(pages)/elapsed.Seconds(), float64(heap)/(1<<20))
		sort.Strings(failures)
		for _, s := range failures {
			t.Logf("  %s failed: %s", c.name, s)
		}
	}
}

// perFileTimeout is how long one library may take on one PDF before it is
// counted as hung (a library that loops forever on a real PDF has failed).
const perFileTimeout = 5 * time.Second

// readWithin runs read on body and gives up after d. A read that gives up
// leaves its goroutine running until the test process ends: the libraries
// cannot be interrupted, which is why a hang is a disqualifying result.
func readWithin(read func([]byte) ([]string, error), body []byte, d time.Duration) ([]string, error) {
	type result struct {
		pages []string
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		p, err := read(body)
		ch <- result{p, err}
	}()
	select {
	case r := <-ch:
		return r.pages, r.err
	case <-time.After(d):
		return nil, fmt.Errorf("hung: no result within %s", d)
	}
}

func readLedongthuc(body []byte) (pages []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	r, err := ledongthuc.NewReader(headerShim{body}, int64(len(body)))
	if err != nil {
		return nil, err
	}
	for i := 1; i <= r.NumPage(); i++ {
		s, _ := r.Page(i).GetPlainText(nil)
		pages = append(pages, s)
	}
	return pages, nil
}

func readDslipak(body []byte) (pages []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	r, err := dslipak.NewReader(headerShim{body}, int64(len(body)))
	if err != nil {
		return nil, err
	}
	for i := 1; i <= r.NumPage(); i++ {
		s, _ := r.Page(i).GetPlainText(nil)
		pages = append(pages, s)
	}
	return pages, nil
}

// loadCorpus finds the corpus and runs the reference on every file.
func loadCorpus(t *testing.T) []corpusFile {
	var paths []string
	if env := os.Getenv("EXTRACT_PDF_CORPUS"); env != "" {
		for _, dir := range filepath.SplitList(env) {
			paths = append(paths, globPDFs(dir)...)
		}
	} else {
		modcache := strings.TrimSpace(goEnv(t, "GOMODCACHE"))
		for _, pat := range []string{
			"github.com/pdfcpu/pdfcpu@v0.11.1/pkg/testdata",
			"github.com/ledongthuc/pdf@*/testdata",
			"github.com/dslipak/pdf@*/testdata",
		} {
			dirs, _ := filepath.Glob(filepath.Join(modcache, pat))
			for _, d := range dirs {
				paths = append(paths, globPDFs(d)...)
			}
		}
		filepath.WalkDir("/usr/share/doc", func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".pdf") || strings.HasSuffix(p, ".pdf.gz")) {
				paths = append(paths, p)
			}
			return nil
		})
	}
	var files []corpusFile
	for _, p := range paths {
		body, err := readMaybeGzip(p)
		if err != nil || !bytes.HasPrefix(body, []byte("%PDF-")) || len(body) > DefaultMaxBytes {
			continue // not a PDF, or beyond what fetch reads
		}
		ref, err := reference(body)
		if err != nil || len(words(strings.Join(ref, " "))) < 20 {
			continue // the reference cannot read it either, or it has no text to compare
		}
		files = append(files, corpusFile{name: p, body: body, pages: ref})
	}
	return files
}

func globPDFs(dir string) []string {
	var out []string
	for _, pat := range []string{"*.pdf", "*.PDF", "*.pdf.gz"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		out = append(out, m...)
	}
	return out
}

func readMaybeGzip(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil || !strings.HasSuffix(p, ".gz") {
		return b, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, DefaultMaxBytes+1))
}

// reference returns pdftotext's text of body, one string per page.
func reference(body []byte) ([]string, error) {
	cmd := exec.Command("pdftotext", "-q", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = bytes.NewReader(body)
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	pages := strings.Split(string(out), "\f")
	if len(pages) > 1 && strings.TrimSpace(pages[len(pages)-1]) == "" {
		pages = pages[:len(pages)-1]
	}
	return pages, nil
}

func goEnv(t *testing.T, key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return string(out)
}

// startPeakHeap samples the live heap every millisecond (runtime/metrics,
// no stop-the-world) until the returned function is called, which returns
// the peak.
func startPeakHeap() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return s
}
