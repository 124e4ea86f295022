package blockkit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// TestGoldenShare: the offer under a report in an assistant thread (with
// and without a channel being viewed), the form to choose a channel, what
// the channel sees and the record in the thread.
func TestGoldenShare(t *testing.T) {
	at := time.Date(2026, 3, 14, 9, 30, 0, 0, time.UTC)
	run := &pipeline.Run{ID: "r-1", Status: pipeline.StatusCompleted, Report: feedbackReport()}
	golden(t, "share_offer", msg(RenderShareOffer("r-1", "C0TEAM")))
	golden(t, "share_offer_no_channel", msg(RenderShareOffer("r-1", "")))
	golden(t, "share_modal", ShareModal("r-1", "C0TEAM"))
	golden(t, "share_modal_no_channel", ShareModal("r-1", ""))
	golden(t, "share_report", msg(RenderSharedReport(run, "U0ADA")))
	golden(t, "share_record", msg(RenderShareRecord("U0ADA", "C0TEAM", at)))
	golden(t, "share_refused", msg(RenderError(ShareRefusal("C0TEAM", 2), "")))
}

// TestShareValue: a Share button's value names its run and channel, and
// only a value of that shape is read back.
func TestShareValue(t *testing.T) {
	run, ch, ok := ParseShareValue(ShareValue("r-1", "C0TEAM"))
	if !ok || run != "r-1" || ch != "C0TEAM" {
		t.Errorf("ParseShareValue = %q, %q, %v", run, ch, ok)
	}
	for _, bad := range []string{"", "r-1", "r-1 ", " C0TEAM", "r-1 <!channel>", "r-1 U0ADA"} {
		if _, _, ok := ParseShareValue(bad); ok {
			t.Errorf("ParseShareValue(%q) ok", bad)
		}
	}
}

// TestShareTexts: the refusal names how many sources and the channel, says
// what to do, and never more; a channel id that is not one is not linked.
func TestShareTexts(t *testing.T) {
	if got := ShareRefusal("C0TEAM", 1); !strings.Contains(got, "1 source it used") || !strings.Contains(got, "<#C0TEAM>") || !strings.Contains(got, "Ask your question in <#C0TEAM> instead") {
		t.Errorf("refusal = %q", got)
	}
	if got := ShareRefusal("C0TEAM", 3); !strings.Contains(got, "3 sources it used") {
		t.Errorf("refusal = %q", got)
	}
	if got := ShareNotInChannel("C0TEAM"); !strings.Contains(got, "invite me to <#C0TEAM> first") {
		t.Errorf("not in channel = %q", got)
	}
	b, _ := json.Marshal(RenderShareOffer("r-1", "<!channel>"))
	if strings.Contains(string(b), "<!channel>") || strings.Contains(string(b), ActionShare+`"`) {
		t.Errorf("an offer for a bad channel id: %s", b)
	}
	if blocks := RenderSharedReport(&pipeline.Run{ID: "r-1", Status: pipeline.StatusCompleted, Report: bigReport()}, "U0ADA"); len(blocks) > MaxBlocks {
		t.Errorf("%d blocks in the shared report", len(blocks))
	}
}

// bigReport is a report with more sections and references than a message
// holds.
func bigReport() *pipeline.Report {
	rep := feedbackReport()
	for i := range 80 {
		rep.Sections = append(rep.Sections, pipeline.Section{Title: strings.Repeat("x", 90), Content: strings.Repeat("word ", 60+i)})
	}
	return rep
}
