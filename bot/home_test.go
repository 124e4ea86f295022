package bot

import (
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// homeSample is an App Home with one pending decision (with a link), two
// runs and a stream.
func homeSample() blockkit.HomeView {
	waiting := sampleRun()
	waiting.Status = pipeline.StatusWaiting
	inst := planInstance()
	inst.DeadlineAt = t0.Add(24 * time.Hour)
	optional := sampleRun()
	optional.ID, optional.Status, optional.Question = "run-43", pipeline.StatusWaiting, "What changed in <!channel> EU AI rules?"
	opt := instanceOf(checkpoints.CriticalIssues, "run-43.cp1", nil, nil)
	opt.DefinitionID, opt.ControlType, opt.Label, opt.Required = "risk_check", "risk_check", "Risk check", false
	done := finishedRun()
	done.ID = "run-41"
	stuck := sampleRun()
	stuck.ID, stuck.Status = "run-44", pipeline.StatusWaiting
	draft := draftInstance()
	draft.ID, draft.State, draft.Attempt, draft.LastError = "run-44.cp-3", checkpoints.StateFailed, 4, "channel_not_found"
	stuck.Stranded = draft.ID
	return blockkit.HomeView{
		Pending: []blockkit.HomePending{{Run: waiting, Inst: inst, Link: "https://fake.slack.com/archives/C1/p100000002"}, {Run: optional, Inst: opt}, {Run: stuck, Inst: draft}},
		Runs:    []*pipeline.Run{waiting, optional, done},
		Streams: []*scheduler.Stream{sampleStream()},
		Now:     t0.Add(10 * time.Minute),
	}
}

// homeAdminSample is the admin section: the built-ins, one custom
// definition with a tripped breaker, and a disabled one.
func homeAdminSample() *blockkit.HomeAdmin {
	defs := checkpoints.Builtins(t0)
	risk := builtin(checkpoints.PlanReview)
	risk.ID, risk.ControlType, risk.Label, risk.SortOrder, risk.Required = "risk_check", "risk_check", "Risk check", 5, false
	old := risk
	old.ID, old.Label, old.Enabled = "old_check", "Old check", false
	admin := &blockkit.HomeAdmin{Runs: 12}
	for _, d := range append(defs, risk, old) {
		hd := blockkit.HomeDefinition{Def: d}
		switch d.ID {
		case checkpoints.PlanReview:
			hd.Counts = map[checkpoints.State]int{checkpoints.StateCollapsed: 9, checkpoints.StateTimedOut: 1, checkpoints.StateOffered: 2}
		case "risk_check":
			hd.Failures, hd.Tripped = 5, true
			hd.Counts = map[checkpoints.State]int{checkpoints.StateFailed: 5, checkpoints.StateSkipped: 3}
		}
		admin.Definitions = append(admin.Definitions, hd)
	}
	return admin
}

func TestGoldenHome(t *testing.T) {
	user := homeSample()
	admin := homeSample()
	admin.Admin = homeAdminSample()
	empty := blockkit.HomeView{Now: t0}
	for name, v := range map[string]blockkit.HomeView{"home_user": user, "home_admin": admin, "home_empty": empty} {
		golden(t, name, blockkit.RenderHome(v))
	}
	golden(t, "home_modal_create", blockkit.DefinitionModal(checkpoints.Definition{Modes: []string{"guided"}, MaxRetries: 2, BreakerThreshold: 5, BreakerWindow: time.Hour}, true))
	golden(t, "home_modal_edit_plan", blockkit.DefinitionModal(builtin(checkpoints.PlanReview), false))
}

func TestHomeShowsTheSameButtonsAsTheThread(t *testing.T) {
	v := homeSample()
	blocks := blockkit.RenderHome(v).Blocks.BlockSet
	var ids []string
	for _, b := range blocks {
		if ab, ok := b.(*slack.ActionBlock); ok {
			for _, e := range ab.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					ids = append(ids, btn.ActionID+"="+btn.Value)
				}
			}
		}
	}
	want := "cp_approve=" + v.Pending[0].Inst.ID
	if !strings.Contains(strings.Join(ids, " "), want) || !strings.Contains(strings.Join(ids, " "), "cp_skip=run-43.cp1") {
		t.Fatalf("buttons %v lack %s and the optional one's Skip", ids, want)
	}
	for _, b := range blocks {
		if b.BlockType() == slack.MBTHeader {
			if h := b.(*slack.HeaderBlock); strings.Contains(h.Text.Text, "admin") {
				t.Fatal("a non-admin's home shows the admin section")
			}
		}
	}
}

func TestHomeBlocksStayWithinSlackLimits(t *testing.T) {
	v := homeSample()
	v.Admin = homeAdminSample()
	for range 40 {
		v.Admin.Definitions = append(v.Admin.Definitions, v.Admin.Definitions[0])
	}
	for range 30 {
		v.Pending = append(v.Pending, v.Pending[0])
	}
	if n := len(blockkit.RenderHome(v).Blocks.BlockSet); n > blockkit.MaxViewBlocks {
		t.Fatalf("%d blocks, Slack allows %d", n, blockkit.MaxViewBlocks)
	}
}

func TestGoldenBreakerAlert(t *testing.T) {
	golden(t, "msg_breaker_alert", msg(RenderBreakerAlert(builtin(checkpoints.PlanReview), 5)))
}

// TestHomeWarnsBesideACheckpointWhoseDecisionWasLost: a run asks again for
// a decision the store lost; the App Home says so in that checkpoint's
// entry (with its buttons), and not beside the other pending ones.
func TestHomeWarnsBesideACheckpointWhoseDecisionWasLost(t *testing.T) {
	v := homeSample()
	lost := *v.Pending[0].Run
	lost.LostDecision = &pipeline.LostDecision{Checkpoint: v.Pending[0].Inst.ID, At: t0.Add(5 * time.Minute), Evidence: "a version lower than one seen"}
	v.Pending[0].Run = &lost
	golden(t, "home_lost", blockkit.RenderHome(v))
	var sections []string
	for _, b := range blockkit.RenderHome(v).Blocks.BlockSet {
		if s, ok := b.(*slack.SectionBlock); ok && s.Text != nil {
			sections = append(sections, s.Text.Text)
		}
	}
	warned := 0
	for _, s := range sections {
		if !strings.Contains(s, "An earlier decision on it was lost when the bot's storage was restored") {
			continue
		}
		warned++
		if !strings.Contains(s, "*Research plan*") || !strings.Contains(s, "in its thread") {
			t.Errorf("the warning is not beside the plan review's entry: %q", s)
		}
	}
	if warned != 1 {
		t.Fatalf("%d warnings of a lost decision, want 1:\n%s", warned, strings.Join(sections, "\n---\n"))
	}
}
