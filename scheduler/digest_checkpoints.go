package scheduler

import (
	"slices"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// DigestCheckpoints decides the checkpoints of digest runs (Origin.Kind
// "stream") per the stream's policy: the pipeline.AutoDecider the assembly
// registers for them in pipeline.Config.AutoDeciders.
type DigestCheckpoints struct {
	// Clock stamps the decisions; nil means the real clock.
	Clock quartz.Clock
}

var _ pipeline.AutoDecider = DigestCheckpoints{}

// AutoDecide approves every checkpoint of an auto-mode run, and every checkpoint
// but draft_review of a guided one (policy hold_draft): the draft then waits for
// the owner, who is the run's requester. At the critical issues it chooses
// to revise (Edit), never to publish a draft with critical issues unseen.
func (c DigestCheckpoints) AutoDecide(r *pipeline.Run, inst *checkpoints.Instance) (checkpoints.Decision, bool) {
	if r.Mode != checkpoints.ModeAuto && inst.DefinitionID == checkpoints.DraftReview {
		return checkpoints.Decision{}, false
	}
	action := checkpoints.Approve
	if inst.DefinitionID == checkpoints.CriticalIssues {
		action = checkpoints.Edit // "revise with these issues": the writer fixes them, as the reviewer asks
	}
	if !slices.Contains(inst.Actions, action) && len(inst.Actions) > 0 {
		return checkpoints.Decision{}, false
	}
	clock := c.Clock
	if clock == nil {
		clock = quartz.NewReal()
	}
	return checkpoints.Decision{Action: action, By: "auto", Note: "decided automatically by the stream's checkpoint policy", At: clock.Now()}, true
}
