package extract

import (
	"context"
	"strings"
	"testing"
)

func TestExtractKinds(t *testing.T) {
	ctx := context.Background()
	pdf := buildPDF(pdfSpec{pages: []string{textOps("A PDF sent as a download.")}})
	for _, c := range []struct {
		body, mediaType string
		kind            Kind
		text            string
	}{
		{"Plain words.\r\nSecond line.", "text/plain; charset=utf-8", KindText, "Plain words.\nSecond line."},
		{"# Title\n\nSome *Markdown*.", "text/markdown", KindMarkdown, "# Title\n\nSome *Markdown*."},
		{"city,share\nOslo,31\n", "text/csv", KindCSV, "city,share\nOslo,31"},
		{string(pdf), "application/octet-stream", KindPDF, "A PDF sent as a download."},
	} {
		d, err := Extract(ctx, []byte(c.body), c.mediaType, Limits{})
		if err != nil || d.Kind != c.kind || d.Text != c.text {
			t.Errorf("%s: %+v, %v", c.mediaType, d, err)
		}
	}
	for _, mt := range []string{"image/png", "application/msword", ""} {
		_, err := Extract(ctx, []byte("\x89PNG\r\n"), mt, Limits{})
		e := wantReason(t, err, ReasonUnsupported)
		if !strings.Contains(e.Error(), "accepted: PDF (application/pdf), Word (.docx), plain text") {
			t.Errorf("%q: message %q", mt, e.Error())
		}
	}
	_, err := Extract(ctx, []byte("<html>not a PDF</html>"), "application/pdf", Limits{})
	wantReason(t, err, ReasonDamaged)
	_, err = Extract(ctx, []byte("   \n"), "text/plain", Limits{})
	wantReason(t, err, ReasonNoText)
	_, err = Extract(ctx, []byte("0123456789"), "text/plain", Limits{MaxBytes: 5})
	wantReason(t, err, ReasonTooLarge)
}

func TestIsPDFIsTheBytesNotTheName(t *testing.T) {
	if !IsPDF([]byte("%PDF-1.4\n")) || IsPDF([]byte("<html>%PDF-1.4")) || IsPDF(nil) {
		t.Error("IsPDF judges by the first bytes only")
	}
}
