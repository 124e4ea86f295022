package bot

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// TestDraftFileCommentSaysWhatChangedEscaped: the first draft's comment
// names it; a revision's names the draft it replaces and the diff summary,
// with a hostile section title shown as text.
func TestDraftFileCommentSaysWhatChangedEscaped(t *testing.T) {
	if got := DraftFileComment(pipeline.Draft{Version: 1}); !strings.Contains(got, "Draft 1 — the whole draft") {
		t.Errorf("first draft: %q", got)
	}
	d := pipeline.Draft{Version: 3, Diff: &pipeline.DraftDiff{Added: []string{"<!channel> Costs <https://evil.example|x>"}}}
	got := DraftFileComment(d)
	if !strings.Contains(got, "Draft 3 replaces draft 2. Changes: added &lt;!channel&gt; Costs") {
		t.Errorf("revision: %q", got)
	}
	if strings.Contains(got, "<!channel>") || strings.Contains(got, "<https://evil") {
		t.Errorf("hostile title survived: %q", got)
	}
}
