package pipeline

import (
	"fmt"
	"strings"
	"time"
)

// KindFile is the Source.Kind (provenance) of a file given to the run,
// beside web, academic and news.
const KindFile = "file"

// MaxFiles is how many files one run may be given.
const MaxFiles = 20

// File is a document given to a run: by the person who starts it (the
// terminal's --file, a file in Slack's start form) or shared with the bot
// in Slack (in the run's thread, or with the question in its direct
// messages). The caller reads and extracts it: the pipeline does no file
// I/O. Every string in it is untrusted data.
type File struct {
	// Name is the file's base name, shown and cited; never a local path.
	Name string `json:"name"`
	// Kind is the document's kind: KindPDF, "docx", "markdown", "csv" or "text".
	Kind string `json:"kind"`
	// Bytes is the file's size, counted against the run's page budget
	// like a fetched page.
	Bytes int64 `json:"bytes"`
	// Text is the extracted text; it is moved to the run's pages (stored
	// apart from the run) when the run starts working, and cleared here.
	Text       string `json:"text,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	PageCount  int    `json:"page_count,omitempty"`
	PageStarts []int  `json:"page_starts,omitempty"`
	// Note says what the reading left out ("more than 300 pages: read the first 300").
	Note string `json:"note,omitempty"`
	// SourceID is the file's source once attached; 0 before.
	SourceID int `json:"source_id,omitempty"`
	// SharedBy is the Slack user id of the person who shared the file
	// ("" for a terminal's file); the report cites it as "shared by".
	SharedBy string `json:"shared_by,omitempty"`
	// SharedIn is the Slack conversation the file was shared in (the run's
	// own channel for a file attached in the start form); "" for a
	// terminal's file. A run takes only files shared in its own
	// conversation (invariant 12): a file shared in a direct message never
	// reaches a channel's report.
	SharedIn string `json:"shared_in,omitempty"`
	// Withheld is set when the run's audience may not read the file: it is
	// never read into the run (its text is cleared).
	Withheld bool `json:"withheld,omitempty"`
}

// Visibility is who could read the file before it was given to the run:
// anyone for a terminal's file; for a file shared in Slack, the people in
// the conversation it was shared in and the person who shared it. Whether
// that conversation is public is not known here, so it is treated as
// private (fail closed).
func (f File) Visibility() Visibility {
	if f.SharedIn == "" && f.SharedBy == "" {
		return Visibility{}
	}
	return Visibility{Conversation: f.SharedIn, Reader: f.SharedBy}
}

// Describe is the file for people: "a.pdf (PDF, 12 pages)", or "notes.md".
func (f File) Describe() string {
	if k := sourceKind(f.Kind, f.PageCount); k != "" {
		return fmt.Sprintf("%s (%s)", f.Name, k)
	}
	return f.Name
}

// validateFiles states what is wrong with the files of a request that
// goes to the conversation channel ("" for the terminal).
func validateFiles(files []File) []string {
	var p []string
	if len(files) > MaxFiles {
		p = append(p, fmt.Sprintf("%d files given; a run reads at most %d", len(files), MaxFiles))
	}
	for _, f := range files {
		switch {
		case strings.TrimSpace(f.Name) == "" || strings.ContainsAny(f.Name, `/\`):
			p = append(p, fmt.Sprintf("file name %q must be a base name", f.Name))
		case strings.TrimSpace(f.Text) == "":
			p = append(p, fmt.Sprintf("file %s has no readable text", f.Name))
		}
	}
	return p
}

// attachFiles makes the run's files its first sources, read already:
// they are cited like fetched pages, ranked first and counted against the
// pages the run reads. It runs once, before the first search; the files'
// texts move to the pages, which the Store keeps apart from the run.
//
// A file the run's audience may not read (Audience.Permits) is withheld:
// its text is cleared and it never becomes a source.
func (r *Run) attachFiles(now time.Time) {
	withheld := r.Withheld.Count
	defer r.traceWithheld(now, StepPlan, withheld)
	for i := range r.Files {
		f := &r.Files[i]
		if f.SourceID != 0 || f.Withheld {
			continue
		}
		if !r.admit("file:"+f.Name, f.Visibility()) {
			f.Withheld, f.Text, f.PageStarts = true, "", nil
			continue
		}
		id := len(r.Sources) + 1
		r.Sources = append(r.Sources, Source{
			ID: id, Key: "file:" + f.Name, Title: f.Name, Backend: KindFile, Kind: KindFile,
			Heuristic: 1, Relevance: 1, Score: 1, Ranked: true, Selected: true, Fetched: true,
			Visibility: f.Visibility(),
		})
		r.Pages = append(r.Pages, Page{
			SourceID: id, Title: f.Name, File: f.Name, Text: f.Text, Truncated: f.Truncated, FetchedAt: now,
			Kind: f.Kind, PageCount: f.PageCount, PageStarts: f.PageStarts, SharedBy: f.SharedBy, SharedIn: f.SharedIn,
		})
		if f.Note != "" {
			r.trace(now, StepPlan, "%s: %s", f.Name, f.Note)
		}
		f.SourceID, f.Text, f.PageStarts = id, "", nil
	}
}

// filesText lists the run's files for people: "2 files given: a.pdf (PDF,
// 12 pages), notes.md", or "" for none. Withheld files are left out: even
// their names are not for the run's audience.
func filesText(files []File) string {
	files = admittedFiles(files)
	if len(files) == 0 {
		return ""
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Describe()
	}
	return fmt.Sprintf("%s given: %s", plural(len(files), "file", "files"), strings.Join(names, ", "))
}

// FilesAttached is the plan checkpoint's line about the files: "2 files
// attached; they will be read first", or "" for none.
func FilesAttached(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return "1 file attached; it will be read first"
	}
	return fmt.Sprintf("%d files attached; they will be read first", n)
}

// admittedFiles are the files that were not withheld.
func admittedFiles(files []File) []File {
	var out []File
	for _, f := range files {
		if !f.Withheld {
			out = append(out, f)
		}
	}
	return out
}
