package bot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// hostileMD is model Markdown with a mention, a broadcast and a masked link
// hidden in bold, code, a heading and a link to a page that was not fetched.
const hostileMD = "## Findings <!channel>\n\n**Heat pumps <!here>** keep `70% <@U999>` [1] per [the study](https://blog.example.com/rag-fresh) and [a phish](https://evil.example).\n\n- <http://evil.example|click> _now_"

// markdownReport is finishedRun with hostile Markdown in every prose field.
func markdownReport() *pipeline.Run {
	r := finishedRun()
	r.Report.Abstract = hostileMD
	r.Report.Conclusion = "**Incremental** indexing wins. " + hostileMD
	r.Report.Sections[0].Content = hostileMD
	r.Report.Caveats = []string{"Only `2` pages <!channel> were **read**."}
	return r
}

// markdownDraft is draftInstance with hostile Markdown in its prose.
func markdownDraft() *checkpoints.Instance {
	inst := draftInstance()
	var p pipeline.DraftPayload
	_ = json.Unmarshal(inst.Payload, &p)
	p.Abstract, p.Summary = hostileMD, "**Solid** coverage <!channel>; `cite` more."
	p.Sections = []string{"**Background** <!here>", "`Causes`"}
	p.Claims.Unsupported[0].Sentence = "Indexes go **stale** <!channel> [3]."
	p.Disagreements[0].A.Claim = "Within `weeks` <!subteam^S1>"
	p.Disagreements[0].Assessment = "Both **hold** <http://evil.example|x>."
	inst.Payload = mustJSON(p)
	return inst
}

// markdownCritical is criticalInstance with hostile Markdown in its items.
func markdownCritical() *checkpoints.Instance {
	inst := criticalInstance()
	var p pipeline.CriticalPayload
	_ = json.Unmarshal(inst.Payload, &p)
	p.Items[0].Description = "The **40% decay** claim <!channel> has `no` source."
	p.Items[0].SuggestedFix = "Cite [3] or see [this](https://evil.example)."
	inst.Payload = mustJSON(p)
	return inst
}

func TestGoldenMarkdownRenderers(t *testing.T) {
	cases := map[string][]slack.Block{
		"report_markdown":     blockkit.RenderFinished(markdownReport()),
		"checkpoint_draft_md": blockkit.RenderCheckpoint(markdownDraft(), "U123"),
		"checkpoint_crit_md":  blockkit.RenderCheckpoint(markdownCritical(), "U123"),
	}
	for name, blocks := range cases {
		t.Run(name, func(t *testing.T) {
			golden(t, "msg_"+name, msg(blocks))
			b, _ := json.Marshal(blocks)
			all := texts(blocks)
			for _, bad := range []string{"<!channel>", "<!here>", "<@U999>", "<!subteam", "<http://evil.example", "<https://evil.example", "](http://evil.example", "](https://evil.example"} {
				if strings.Contains(all, bad) {
					t.Errorf("%s shows %q:\n%s", name, bad, b)
				}
			}
			// Markdown's "**" is converted in mrkdwn (a markdown block keeps it).
			var v any
			_ = json.Unmarshal(b, &v)
			walkObjects(v, func(m map[string]any) {
				if s, _ := m["text"].(string); m["type"] == "mrkdwn" && strings.Contains(s, "**") {
					t.Errorf("%s shows \"**\" in mrkdwn: %.120q", name, s)
				}
			})
			if probs := blockProblems(blocks, blockkit.MaxBlocks); len(probs) > 0 {
				t.Errorf("limits: %v", probs)
			}
		})
	}
	if all := texts(blockkit.RenderFinished(markdownReport())); !strings.Contains(all, "<https://blog.example.com/rag-fresh|the study>") || !strings.Contains(all, "*Heat pumps &lt;!here&gt;*") {
		t.Errorf("the report lost its formatting or its link to a fetched page:\n%s", all)
	}
}

// texts joins every displayed text in blocks.
func texts(blocks []slack.Block) string {
	b, _ := json.Marshal(blocks)
	return displayedText(b)
}
