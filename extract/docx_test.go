package extract

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

// buildDOCX writes a minimal Word document whose body is bodyXML.
func buildDOCX(t testing.TB, bodyXML string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, data := range map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="` + docxType + `.main+xml"/></Types>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			bodyXML + `</w:body></w:document>`,
	} {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(data))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func para(s string) string { return `<w:p><w:r><w:t>` + s + `</w:t></w:r></w:p>` }

func TestDOCXParagraphsAndTables(t *testing.T) {
	body := buildDOCX(t, para("The proposal covers three sites.")+
		`<w:tbl><w:tr><w:tc>`+para("Site")+`</w:tc><w:tc>`+para("Cost")+`</w:tc></w:tr><w:tr><w:tc>`+para("North")+`</w:tc><w:tc>`+para("12")+`</w:tc></w:tr></w:tbl>`+
		para("Delivery starts in May."))
	d, err := Extract(context.Background(), body, docxType, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Kind != KindDOCX || !strings.HasPrefix(d.Text, "The proposal covers three sites.") || !strings.HasSuffix(d.Text, "Delivery starts in May.") ||
		!strings.Contains(d.Text, "| Site | Cost |") || !strings.Contains(d.Text, "| North | 12 |") {
		t.Errorf("doc = %+v", d)
	}
}

// TestDOCXRealFile reads the Word document shipped in a PDF library's
// testdata (the story its PDFs were exported from).
func TestDOCXRealFile(t *testing.T) {
	files := modulePDFs(t, "github.com/dslipak/pdf@v0.0.2/testdata/story.docx")
	body, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	d, err := Extract(context.Background(), body, docxType, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	pdfs := modulePDFs(t, "github.com/dslipak/pdf@v0.0.2/testdata/story_freeconvert-com__pdf17_2trailer.pdf")
	pb, err := os.ReadFile(pdfs[0])
	if err != nil {
		t.Fatal(err)
	}
	p, err := PDF(context.Background(), pb, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	// The same story read from Word and from its PDF share most words.
	dw, pw := strings.Fields(d.Text), strings.Fields(p.Text)
	if len(dw) < 50 {
		t.Fatalf("only %d words: %q", len(dw), d.Text)
	}
	seen := map[string]bool{}
	for _, w := range pw {
		seen[w] = true
	}
	common := 0
	for _, w := range dw {
		if seen[w] {
			common++
		}
	}
	if common*10 < len(dw)*7 {
		t.Errorf("%d of %d words of the DOCX are in its PDF", common, len(dw))
	}
}

func TestDOCXHostile(t *testing.T) {
	ctx := context.Background()
	_, err := Extract(ctx, []byte("PK\x03\x04 not really"), docxType, Limits{})
	if e := wantReason(t, err, ReasonDamaged); !strings.HasPrefix(e.Error(), "damaged DOCX") {
		t.Errorf("message %q", e.Error())
	}
	_, err = Extract(ctx, buildDOCX(t, ""), docxType, Limits{})
	wantReason(t, err, ReasonNoText)

	// A bomb: 64 MiB of paragraphs that compress to about 64 KiB.
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	f, _ := w.Create("word/document.xml")
	f.Write([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`))
	chunk := []byte(strings.Repeat(para("boom"), 1000))
	for written := 0; written < 64<<20; written += len(chunk) {
		f.Write(chunk)
	}
	f.Write([]byte(`</w:body></w:document>`))
	w.Close()
	_, err = Extract(ctx, b.Bytes(), docxType, Limits{})
	if e := wantReason(t, err, ReasonTooLarge); !strings.Contains(e.Error(), "zip bomb") {
		t.Errorf("message %q", e.Error())
	}
}

func FuzzDOCX(f *testing.F) {
	seeds := [][]byte{
		buildDOCX(f, para("hello")+`<w:tbl><w:tr><w:tc>`+para("a")+`</w:tc></w:tr></w:tbl>`),
		buildDOCX(f, `<w:p><w:hyperlink r:id="rId9"><w:r><w:t>x</w:t></w:r></w:hyperlink></w:p>`),
		[]byte("PK\x03\x04"),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	lim := Limits{MaxBytes: 1 << 20, MaxPageBytes: 4 << 20, MaxRunes: 2000}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Extract(context.Background(), data, docxType, lim)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not an *Error", err, err)
			}
			return
		}
		if utf8.RuneCountInString(d.Text) > lim.MaxRunes || !utf8.ValidString(d.Text) || strings.TrimSpace(d.Text) == "" {
			t.Fatalf("bad text %q", d.Text)
		}
	})
}
