package extract

import (
	"mime"
	"path/filepath"
	"strings"
)

// nameMediaTypes labels a file by its name's suffix, for the kinds Extract
// reads; PDFs are known by their bytes whatever the name says.
var nameMediaTypes = map[string]string{
	".pdf":      "application/pdf",
	".docx":     "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
	".txt":      "text/plain",
	".text":     "text/plain",
}

// MediaTypeOfName is the media type of a file named name, by its suffix:
// one of the kinds Extract reads, else the system's guess ("" when none).
// ok reports a kind Extract reads.
func MediaTypeOfName(name string) (mediaType string, ok bool) {
	ext := strings.ToLower(filepath.Ext(name))
	if mt, known := nameMediaTypes[ext]; known {
		return mt, true
	}
	return mime.TypeByExtension(ext), false
}
