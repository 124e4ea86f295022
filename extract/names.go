package extract

import (
	"mime"
	"path/filepath"
	"strings"
)

// nameTypes labels a file by its name's suffix, for the kinds Extract
// reads; PDFs are known by their bytes whatever the name says.
var nameTypes = map[string]string{
	".pdf":      "application/pdf",
	".docx":     "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".md":       "text/markdown",
	".markdown": "text/markdown",
	".csv":      "text/csv",
	".txt":      "text/plain",
	".text":     "text/plain",
	".html":     "text/html",
	".htm":      "text/html",
	".xhtml":    "application/xhtml+xml",
}

// TypeByName returns the media type of a file named name, by its suffix:
// the kinds Extract reads first, then the system's table; "" when unknown.
// A local file (the terminal's --file), a file shared in Slack and a file
// of the document collection are labelled the same way.
func TypeByName(name string) string {
	ext := strings.ToLower(filepath.Ext(name))
	if mt, ok := nameTypes[ext]; ok {
		return mt
	}
	return mime.TypeByExtension(ext)
}

// ReadsByName reports whether name's suffix is one of the kinds Extract
// reads (the document collection indexes only those).
func ReadsByName(name string) bool {
	_, ok := nameTypes[strings.ToLower(filepath.Ext(name))]
	return ok
}
