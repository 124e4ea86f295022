package bot

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// clarifyInstance is the clarify checkpoint as the engine makes it for two
// questions: one answer field per question, labelled with it, and the
// reply in one's own words. The model's text tries Slack markup.
func clarifyInstance() *checkpoints.Instance {
	p := pipeline.ClarifyPayload{
		Question: "What about Rust? <!channel>",
		Questions: []pipeline.ClarifyingQuestion{
			{Question: "Do you mean the programming language, the video game or corrosion?", Why: "Each needs different sources <@U999>."},
			{Question: "For adopting it at work, or for learning it?", Why: "It changes which sub-questions matter."},
		},
		Assumptions: []string{"Rust the programming language", "adoption in a company & its costs"},
	}
	inst := instanceOf(checkpoints.Clarify, "run-42.cp-1", p, nil)
	var fields []checkpoints.Field
	for _, f := range inst.Fields {
		switch f.Key {
		case checkpoints.KeyAnswer1:
			f.Label, f.Help = "1. "+p.Questions[0].Question, "Why I ask: "+p.Questions[0].Why
		case checkpoints.KeyAnswer2:
			f.Label, f.Help = "2. "+p.Questions[1].Question, "Why I ask: "+p.Questions[1].Why
		case checkpoints.KeyAnswer3:
			continue
		}
		fields = append(fields, f)
	}
	inst.Fields = fields
	return inst
}

// The clarify message, its Answer form, the acknowledgement of answers
// given by a mention, its collapsed record, and a plan review naming the
// plan's assumptions (golden files).
func TestGoldenClarify(t *testing.T) {
	plan := planInstance()
	p := planPayload()
	p.Assumptions = []string{"Rust the programming language <!here>"}
	plan.Payload = mustJSON(p)
	skipped := clarifyInstance()
	skipped.State = checkpoints.StateSkipped
	skipped.Audit = []checkpoints.AuditEntry{{At: t0, Actor: "U123", From: checkpoints.StateOffered, To: checkpoints.StateSkipped, Note: "skipped: skipped by U123"}}
	timedOut := clarifyInstance()
	timedOut.State = checkpoints.StateSkipped
	timedOut.Audit = []checkpoints.AuditEntry{{At: t0, Actor: "engine", From: checkpoints.StateOffered, To: checkpoints.StateSkipped, Note: "skipped: timed out"}}
	msgs := map[string][]slack.Block{
		"checkpoint_clarify":     blockkit.RenderCheckpoint(clarifyInstance(), "U123"),
		"clarify_answered":       blockkit.RenderClarifyAnswered("U123"),
		"clarify_decided":        blockkit.RenderDecided(decided(clarifyInstance(), checkpoints.Edit, "", nil)),
		"clarify_skipped":        blockkit.RenderDecided(skipped),
		"clarify_timed_out":      blockkit.RenderDecided(timedOut),
		"checkpoint_plan_assume": blockkit.RenderCheckpoint(plan, "U123"),
	}
	for name, blocks := range msgs {
		t.Run(name, func(t *testing.T) {
			golden(t, "msg_"+name, msg(blocks))
			if probs := blockProblems(blocks, blockkit.MaxBlocks); len(probs) > 0 {
				t.Errorf("limits: %v", probs)
			}
		})
	}
	t.Run("modal", func(t *testing.T) {
		view := blockkit.EditModal(clarifyInstance())
		golden(t, "modal_edit_clarify", view)
		if probs := blockProblems(view.Blocks.BlockSet, blockkit.MaxModalBlocks); len(probs) > 0 {
			t.Errorf("limits: %v", probs)
		}
	})
}
