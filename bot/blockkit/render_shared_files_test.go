package blockkit

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestASharedFileIsCitedAsSharedByItsSharer: the report's source list
// names a shared file and mentions who shared it; a sharer that is not a
// user id is never turned into a mention, and a file's name is escaped.
func TestASharedFileIsCitedAsSharedByItsSharer(t *testing.T) {
	rep := &pipeline.Report{Title: "Heat pumps", Abstract: "They work [1][2][3].", References: []pipeline.Reference{
		{N: 1, Title: "trial.pdf", Domain: pipeline.KindFile, File: true, SharedBy: "U0ADA0001", Kind: pipeline.KindPDF, Pages: 3},
		{N: 2, Title: "<!channel>.md", Domain: pipeline.KindFile, File: true, SharedBy: "<!here>"},
		{N: 3, Title: "notes.md", Domain: pipeline.KindFile, File: true},
	}}
	b, err := json.Marshal(RenderReport(rep, nil))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"[1] trial.pdf — shared by \\u003c@U0ADA0001\\u003e · PDF, 3 pages",
		"[2] \\u0026lt;!channel\\u0026gt;.md — file",
		"[3] notes.md — file",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the sources do not say %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "<!here>") || strings.Contains(s, "\\u003c!here\\u003e") || strings.Contains(s, "\\u003c!channel\\u003e") {
		t.Errorf("a mention was smuggled in:\n%s", s)
	}
}

// TestFileMessagesEscapeWhatPeopleShared: the messages about shared files
// show names and reasons as text, and the sharer as a mention only when it
// is a user id.
func TestFileMessagesEscapeWhatPeopleShared(t *testing.T) {
	b, _ := json.Marshal(RenderFileProblems([]FileProblem{{Name: "<@U0EVIL01>.xlsx", Why: "this kind of file is not read; accepted: PDF"}}, "The research goes on without it."))
	if s := string(b); strings.Contains(s, "\\u003c@U0EVIL01") || !strings.Contains(s, "\\u0026lt;@U0EVIL01\\u0026gt;.xlsx") || !strings.Contains(s, "The research goes on without it.") {
		t.Errorf("the problems message: %s", s)
	}
	files := []pipeline.File{
		{Name: "trial.pdf", Kind: pipeline.KindPDF, PageCount: 2, SharedBy: "U0ADA0001"},
		{Name: "notes.md", Kind: "markdown", SharedBy: "<!channel>"},
	}
	b, _ = json.Marshal(RenderFilesAttached(files, 3))
	s := string(b)
	for _, want := range []string{"*trial.pdf* (PDF, 2 pages), shared by \\u003c@U0ADA0001\\u003e", "• *notes.md*", "3 files attached; they will be read first."} {
		if !strings.Contains(s, want) {
			t.Errorf("the files-added message does not say %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "channel") {
		t.Errorf("a sharer that is not a user id was shown: %s", s)
	}
}
