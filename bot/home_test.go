package bot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// homeSample is an App Home with one pending decision (with a link), two
// runs and a stream.
func homeSample() HomeView {
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
	return HomeView{
		Pending: []HomePending{{Run: waiting, Inst: inst, Link: "https://fake.slack.com/archives/C1/p100000002"}, {Run: optional, Inst: opt}, {Run: stuck, Inst: draft}},
		Runs:    []*pipeline.Run{waiting, optional, done},
		Streams: []*scheduler.Stream{sampleStream()},
		Now:     t0.Add(10 * time.Minute),
	}
}

// homeAdminSample is the admin section: the built-ins, one custom
// definition with a tripped breaker, and a disabled one.
func homeAdminSample() *HomeAdmin {
	defs := checkpoints.Builtins(t0)
	risk := builtin(checkpoints.PlanReview)
	risk.ID, risk.ControlType, risk.Label, risk.SortOrder, risk.Required = "risk_check", "risk_check", "Risk check", 5, false
	old := risk
	old.ID, old.Label, old.Enabled = "old_check", "Old check", false
	admin := &HomeAdmin{Runs: 12}
	for _, d := range append(defs, risk, old) {
		hd := HomeDefinition{Def: d}
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
	empty := HomeView{Now: t0}
	for name, v := range map[string]HomeView{"home_user": user, "home_admin": admin, "home_empty": empty} {
		golden(t, name, RenderHome(v))
	}
	golden(t, "home_modal_create", DefinitionModal(checkpoints.Definition{Modes: []string{"guided"}, MaxRetries: 2, BreakerThreshold: 5, BreakerWindow: time.Hour}, true))
	golden(t, "home_modal_edit_plan", DefinitionModal(builtin(checkpoints.PlanReview), false))
}

func TestHomeShowsTheSameButtonsAsTheThread(t *testing.T) {
	v := homeSample()
	blocks := RenderHome(v).Blocks.BlockSet
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
	if n := len(RenderHome(v).Blocks.BlockSet); n > MaxViewBlocks {
		t.Fatalf("%d blocks, Slack allows %d", n, MaxViewBlocks)
	}
}

// form fills the definition form's state like Slack sends it.
type form map[string]map[string]slack.BlockAction

func (f form) text(block, v string) form {
	f[block] = map[string]slack.BlockAction{startInput: {Value: v}}
	return f
}

func (f form) pick(block string, values ...string) form {
	a := slack.BlockAction{}
	for _, v := range values {
		a.SelectedOptions = append(a.SelectedOptions, slack.OptionBlockObject{Value: v})
		a.SelectedOption = slack.OptionBlockObject{Value: v}
	}
	f[block] = map[string]slack.BlockAction{startInput: a}
	return f
}

func TestDefinitionFormParsesAndPlacesEveryProblem(t *testing.T) {
	state := form{}.text(defIDBlock, "risk_check").text(defLabelBlock, "Risk check").pick(defPositionBlock, "after_planning").
		text(defSortBlock, "5").pick(defModesBlock, "guided", "full").text(defTimeoutBlock, "2h").text(defRetriesBlock, "2").
		text(defThresholdBlock, "5").text(defWindowBlock, "1h").
		text(slotBlock(0, slotKey), "level").text(slotBlock(0, slotLabel), "Risk level").pick(slotBlock(0, slotType), "select").
		text(slotBlock(0, slotOptions), "low | Low\nhigh | High").pick(slotBlock(0, slotRequired), requiredValue).
		text(slotBlock(2, slotKey), "score").text(slotBlock(2, slotLabel), "Score").pick(slotBlock(2, slotType), "range").
		text(slotBlock(2, slotMin), "1").text(slotBlock(2, slotMax), "5").text(slotBlock(2, slotDefault), "3")
	d, slots, errs := parseDefinitionForm(definitionMeta{Slots: 3}, checkpoints.Definition{}, state)
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
	state.text(slotBlock(2, slotMax), "").text(slotBlock(0, slotDefault), "medium").text(defSortBlock, "first").text(defLabelBlock, "")
	d, slots, errs = parseDefinitionForm(definitionMeta{Slots: 3}, checkpoints.Definition{}, state)
	for k, v := range definitionErrors(checkpoints.DefinitionProblems(d), slots, true) {
		errs[k] = v
	}
	want := map[string]string{
		defSortBlock: "Must be a whole number.", defLabelBlock: "label is empty",
		slotBlock(2, slotMax): "range needs both min and max", slotBlock(0, slotDefault): `"medium" is not one of the options`,
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
		state[in.BlockID] = map[string]slack.BlockAction{startInput: a}
	}
	return state
}

// Every built-in saved unchanged through the edit form stays as it was:
// what the form does not show (runtime options, help, max length, actions)
// is kept.
func TestTheEditFormRoundTripsEveryBuiltin(t *testing.T) {
	for _, d := range checkpoints.Builtins(t0) {
		view := DefinitionModal(d, false)
		var meta definitionMeta
		if err := json.Unmarshal([]byte(view.PrivateMetadata), &meta); err != nil {
			t.Fatal(err)
		}
		got, _, errs := parseDefinitionForm(meta, d, formAsOpened(view))
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
