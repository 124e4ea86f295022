package bot

import (
	"encoding/json"
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

// form fills the definition form's state like Slack sends it.
type form map[string]map[string]slack.BlockAction

func (f form) text(block, v string) form {
	f[block] = map[string]slack.BlockAction{blockkit.StartInput: {Value: v}}
	return f
}

func (f form) pick(block string, values ...string) form {
	a := slack.BlockAction{}
	for _, v := range values {
		a.SelectedOptions = append(a.SelectedOptions, slack.OptionBlockObject{Value: v})
		a.SelectedOption = slack.OptionBlockObject{Value: v}
	}
	f[block] = map[string]slack.BlockAction{blockkit.StartInput: a}
	return f
}

func TestDefinitionFormParsesAndPlacesEveryProblem(t *testing.T) {
	state := form{}.text(blockkit.DefIDBlock, "risk_check").text(blockkit.DefLabelBlock, "Risk check").pick(blockkit.DefPositionBlock, "after_planning").
		text(blockkit.DefSortBlock, "5").pick(blockkit.DefModesBlock, "guided", "full").text(blockkit.DefTimeoutBlock, "2h").text(blockkit.DefRetriesBlock, "2").
		text(blockkit.DefThresholdBlock, "5").text(blockkit.DefWindowBlock, "1h").
		text(blockkit.SlotBlock(0, blockkit.SlotKey), "level").text(blockkit.SlotBlock(0, blockkit.SlotLabel), "Risk level").pick(blockkit.SlotBlock(0, blockkit.SlotType), "select").
		text(blockkit.SlotBlock(0, blockkit.SlotOptions), "low | Low\nhigh | High").pick(blockkit.SlotBlock(0, blockkit.SlotRequired), blockkit.RequiredValue).
		text(blockkit.SlotBlock(2, blockkit.SlotKey), "score").text(blockkit.SlotBlock(2, blockkit.SlotLabel), "Score").pick(blockkit.SlotBlock(2, blockkit.SlotType), "range").
		text(blockkit.SlotBlock(2, blockkit.SlotMin), "1").text(blockkit.SlotBlock(2, blockkit.SlotMax), "5").text(blockkit.SlotBlock(2, blockkit.SlotDefault), "3")
	d, slots, errs := blockkit.ParseDefinitionForm(blockkit.DefinitionMeta{Slots: 3}, checkpoints.Definition{}, state)
	if len(errs) != 0 || len(checkpoints.DefinitionProblems(d)) != 0 {
		t.Fatalf("a valid form: %v %v", errs, checkpoints.DefinitionProblems(d))
	}
	if d.ID != "risk_check" || d.Timeout != 2*time.Hour || d.SortOrder != 5 || len(d.Fields) != 2 || slots[1] != 2 {
		t.Fatalf("parsed %+v, slots %v", d, slots)
	}
	if f := d.Fields[0]; !f.Required || len(f.Options) != 2 || f.Options[1] != (checkpoints.Option{Value: "high", Label: "High"}) {
		t.Fatalf("select field %+v", f)
	}
	if f := d.Fields[1]; f.Default != 3.0 || *f.Max != 5 {
		t.Fatalf("range field %+v", f)
	}

	// A range without max in slot 2, an unknown option default in slot 0,
	// a bad number and no label: each problem on its own block.
	state.text(blockkit.SlotBlock(2, blockkit.SlotMax), "").text(blockkit.SlotBlock(0, blockkit.SlotDefault), "medium").text(blockkit.DefSortBlock, "first").text(blockkit.DefLabelBlock, "")
	d, slots, errs = blockkit.ParseDefinitionForm(blockkit.DefinitionMeta{Slots: 3}, checkpoints.Definition{}, state)
	for k, v := range blockkit.DefinitionErrors(checkpoints.DefinitionProblems(d), slots, true) {
		errs[k] = v
	}
	want := map[string]string{
		blockkit.DefSortBlock: "Must be a whole number.", blockkit.DefLabelBlock: "label is empty",
		blockkit.SlotBlock(2, blockkit.SlotMax): "range needs both min and max", blockkit.SlotBlock(0, blockkit.SlotDefault): `"medium" is not one of the options`,
	}
	for block, msg := range want {
		if !strings.Contains(errs[block], msg) {
			t.Errorf("block %s: %q, want %q (all: %v)", block, errs[block], msg, errs)
		}
	}
}

func TestGoldenBreakerAlert(t *testing.T) {
	golden(t, "msg_breaker_alert", msg(RenderBreakerAlert(builtin(checkpoints.PlanReview), 5)))
}

// formAsOpened is the state Slack sends for a form submitted as it was opened.
func formAsOpened(v slack.ModalViewRequest) map[string]map[string]slack.BlockAction {
	state := map[string]map[string]slack.BlockAction{}
	for _, b := range v.Blocks.BlockSet {
		in, ok := b.(*slack.InputBlock)
		if !ok {
			continue
		}
		var a slack.BlockAction
		switch el := in.Element.(type) {
		case *slack.PlainTextInputBlockElement:
			a.Value = el.InitialValue
		case *slack.SelectBlockElement:
			if el.InitialOption != nil {
				a.SelectedOption = *el.InitialOption
			}
		case *slack.CheckboxGroupsBlockElement:
			for _, o := range el.InitialOptions {
				a.SelectedOptions = append(a.SelectedOptions, *o)
			}
		}
		state[in.BlockID] = map[string]slack.BlockAction{blockkit.StartInput: a}
	}
	return state
}

// Every built-in saved unchanged through the edit form stays as it was:
// what the form does not show (runtime options, help, max length, actions)
// is kept.
func TestTheEditFormRoundTripsEveryBuiltin(t *testing.T) {
	for _, d := range checkpoints.Builtins(t0) {
		view := blockkit.DefinitionModal(d, false)
		var meta blockkit.DefinitionMeta
		if err := json.Unmarshal([]byte(view.PrivateMetadata), &meta); err != nil {
			t.Fatal(err)
		}
		got, _, errs := blockkit.ParseDefinitionForm(meta, d, formAsOpened(view))
		if len(errs) > 0 {
			t.Fatalf("%s: %v", d.ID, errs)
		}
		if ps := append(checkpoints.DefinitionProblems(got), checkpoints.ChangeProblems(d, got)...); len(ps) > 0 {
			t.Fatalf("%s: %v", d.ID, ps)
		}
		a, _ := json.Marshal(checkpoints.DocumentOf(got))
		b, _ := json.Marshal(checkpoints.DocumentOf(d))
		if string(a) != string(b) {
			t.Errorf("%s changed:\n%s\n%s", d.ID, a, b)
		}
	}
}
