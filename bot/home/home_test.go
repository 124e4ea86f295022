package home_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/bottest"
	"github.com/researchbot/researchbot/bot/home"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestMain checks that no goroutine of the App outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const (
	admin  = "U0ADMIN01" // in SLACK_ADMINS
	planID = "run-1.plan"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// definitions is an in-memory Definitions holding the built-ins.
type definitions struct {
	mu   sync.Mutex
	defs map[string]checkpoints.Definition
}

func newDefinitions() *definitions {
	d := &definitions{defs: map[string]checkpoints.Definition{}}
	for _, b := range checkpoints.Builtins(t0) {
		d.defs[b.ID] = b
	}
	return d
}

func (d *definitions) Definitions(context.Context) ([]checkpoints.Definition, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []checkpoints.Definition
	for _, def := range d.defs {
		out = append(out, def)
	}
	return out, nil
}

func (d *definitions) Definition(_ context.Context, id string) (checkpoints.Definition, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	def, ok := d.defs[id]
	if !ok {
		return def, checkpoints.ErrNoDefinition
	}
	return def, nil
}

func (d *definitions) CreateDefinition(_ context.Context, def checkpoints.Definition) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.defs[def.ID]; ok {
		return checkpoints.ErrDefinitionExists
	}
	d.defs[def.ID] = def
	return nil
}

func (d *definitions) PutDefinition(_ context.Context, def checkpoints.Definition) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.defs[def.ID] = def
	return nil
}

func (d *definitions) ResetBreaker(context.Context, string) error { return nil }

func (d *definitions) CheckpointFailures(context.Context, string, time.Time, time.Duration) ([]time.Time, error) {
	return nil, nil
}

// streamList is a Streams of fixed streams.
type streamList []*scheduler.Stream

func (s streamList) List(context.Context) ([]*scheduler.Stream, error) { return s, nil }

// start runs an App on bottest with the Home plugged in as the assembly
// does (Approver approves in bottest.Channel; admin is in SLACK_ADMINS)
// and run-1 of bottest.Requester waiting at its plan review.
func start(t *testing.T, defs home.Definitions) (*bottest.Harness, *bottest.Engine) {
	t.Helper()
	engine := bottest.NewEngine()
	h := bottest.New(t, func(h *bottest.Harness, c *bot.Config) {
		c.Engine = engine
		c.Checkpoints.Approvers = map[string][]string{bottest.Channel: {bottest.Approver}}
		f, err := home.New(home.Config{Runs: engine, Memory: redisstore.NewSlackMemory(h.Redis), Definitions: defs, Admins: []string{admin},
			Streams: streamList{{ID: "s1", Spec: scheduler.Spec{Name: "heat pumps weekly", Channel: bottest.Channel}, Owner: bottest.Stranger, Paused: true}},
			Kit:     h.Kit()})
		if err != nil {
			t.Fatal(err)
		}
		c.Home = f
		c.Features = append(c.Features, checkpointButtons{})
	})
	h.Fake.AddUser(admin, "grace", "UTC")
	d := checkpoints.Builtins(t0)[0]
	inst := checkpoints.Instance{ID: planID, RunID: "run-1", DefinitionID: d.ID, ControlType: d.ControlType, Label: d.Label,
		Required: d.Required, Fields: d.Fields, Actions: d.Actions, State: checkpoints.StateOffered, Payload: json.RawMessage(`{}`), CreatedAt: t0, OfferedAt: t0}
	engine.Put(&pipeline.Run{ID: "run-1", Question: "Heat pumps in the cold?", RequestedBy: bottest.Requester, Status: pipeline.StatusWaiting,
		Waiting: planID, Checkpoints: []checkpoints.Instance{inst}, Origin: pipeline.Origin{Kind: bot.OriginKind, Channel: bottest.Channel, ThreadTS: "100.000001"}, CreatedAt: t0})
	return h, engine
}

// checkpointButtons stands for the feature that serves a checkpoint's
// Approve (bot/decisions, which the assembly plugs in and a feature's test
// may not import): the click is served, doing nothing, so the App tells
// the Home of it.
type checkpointButtons struct{}

func (checkpointButtons) Register(r *bot.Routes) {
	r.Action(blockkit.ActionApprove, func(context.Context, *bot.Request) error { return nil })
}

// homeOf is user's published App Home as JSON without HTML escaping, ""
// when none was published.
func homeOf(h *bottest.Harness, user string) string {
	v, ok := h.Fake.Home(user)
	if !ok {
		return ""
	}
	var doc any
	_ = json.Unmarshal(v.JSON, &doc)
	return string(bottest.RawJSON(doc))
}

// open opens user's App Home and waits until a version containing want is
// published; it returns that version.
func open(t *testing.T, h *bottest.Harness, user, want string) slack.View {
	t.Helper()
	if err := h.Fake.OpenHome(h.Ctx, user); err != nil {
		t.Fatal(err)
	}
	h.Wait("an App Home of "+user+" with "+want, func() bool { return strings.Contains(homeOf(h, user), want) })
	v, _ := h.Fake.Home(user)
	return v.SlackView()
}

// buttons lists the buttons of a view as "action_id=value".
func buttons(v slack.View) []string {
	var out []string
	for _, b := range v.Blocks.BlockSet {
		if ab, ok := b.(*slack.ActionBlock); ok && ab.Elements != nil {
			for _, e := range ab.Elements.ElementSet {
				if btn, ok := e.(*slack.ButtonBlockElement); ok {
					out = append(out, btn.ActionID+"="+btn.Value)
				}
			}
		}
	}
	return out
}

// TestHomeShowsWhatWaitsOnEachPerson: the requester's and the channel's
// approver's Homes offer the plan review's buttons; another person's does
// not, but lists their own stream; no one but an admin sees the admin
// section.
func TestHomeShowsWhatWaitsOnEachPerson(t *testing.T) {
	h, _ := start(t, newDefinitions())
	approve := blockkit.ActionApprove + "=" + planID
	for _, user := range []string{bottest.Requester, bottest.Approver} {
		v := open(t, h, user, "Heat pumps in the cold?")
		if !slices.Contains(buttons(v), approve) {
			t.Errorf("%s's Home lacks %s: %v", user, approve, buttons(v))
		}
	}
	v := open(t, h, bottest.Stranger, "heat pumps weekly")
	if slices.Contains(buttons(v), approve) {
		t.Errorf("another person's Home offers the plan review: %v", buttons(v))
	}
	if s := homeOf(h, bottest.Requester); strings.Contains(s, "heat pumps weekly") {
		t.Errorf("the requester's Home lists another person's stream:\n%s", s)
	}
	for _, user := range []string{bottest.Requester, bottest.Approver, bottest.Stranger} {
		if s := homeOf(h, user); strings.Contains(s, "Checkpoint definitions") {
			t.Errorf("%s, no admin, sees the admin section", user)
		}
	}
	open(t, h, admin, "Checkpoint definitions (admin)")
}

// TestHomeWithoutDefinitionsHasNoAdminSection: with no definitions store
// even an admin sees none, and an admin button changes nothing.
func TestHomeWithoutDefinitionsHasNoAdminSection(t *testing.T) {
	h, _ := start(t, nil)
	open(t, h, admin, "Your recent runs")
	if s := homeOf(h, admin); strings.Contains(s, "Checkpoint definitions") {
		t.Fatalf("an admin section without definitions:\n%s", s)
	}
}

// TestAdminDisablesADefinitionFromTheHome: a non-admin's forged Disable is
// refused in a notice and changes nothing; the admin's disables the plan
// review, and their Home is published again offering Enable.
func TestAdminDisablesADefinitionFromTheHome(t *testing.T) {
	defs := newDefinitions()
	h, _ := start(t, defs)
	v := open(t, h, admin, "Checkpoint definitions (admin)")
	disable := blockkit.ActionHomeDisable + "=" + checkpoints.PlanReview
	if !slices.Contains(buttons(v), disable) {
		t.Fatalf("the admin's Home lacks %s: %v", disable, buttons(v))
	}
	if _, err := h.Fake.ClickViewButton(h.Ctx, bottest.Stranger, v, blockkit.ActionHomeDisable, checkpoints.PlanReview); err != nil {
		t.Fatal(err)
	}
	h.Wait("the refusal", func() bool { return viewTo(h, bottest.Stranger, "Only admins") })
	if d, _ := defs.Definition(h.Ctx, checkpoints.PlanReview); !d.Enabled {
		t.Fatal("a non-admin disabled the plan review")
	}

	if _, err := h.Fake.ClickViewButton(h.Ctx, admin, v, blockkit.ActionHomeDisable, checkpoints.PlanReview); err != nil {
		t.Fatal(err)
	}
	enable := blockkit.ActionHomeEnable + "=" + checkpoints.PlanReview
	h.Wait("the admin's Home to offer Enable", func() bool {
		v, _ := h.Fake.Home(admin)
		return slices.Contains(buttons(v.SlackView()), enable)
	})
	if d, _ := defs.Definition(h.Ctx, checkpoints.PlanReview); d.Enabled {
		t.Fatal("the disable was not stored")
	}
}

// viewTo reports whether a view opened for user contains text.
func viewTo(h *bottest.Harness, user, text string) bool {
	for _, v := range h.Fake.Views() {
		if v.UserID == user && v.Method == "views.open" && strings.Contains(string(v.JSON), text) {
			return true
		}
	}
	return false
}

// TestDefinitionForm: the admin's Create opens the form; a built-in's id is
// refused on its field and nothing is created; a new id is stored enabled
// and the Home lists it. A non-admin's submission is refused.
func TestDefinitionForm(t *testing.T) {
	defs := newDefinitions()
	h, _ := start(t, defs)
	v := open(t, h, admin, "Checkpoint definitions (admin)")
	if _, err := h.Fake.ClickViewButton(h.Ctx, admin, v, blockkit.ActionHomeCreate, ""); err != nil {
		t.Fatal(err)
	}
	var form slack.View
	h.Wait("the definition form", func() bool {
		for _, fv := range h.Fake.Views() {
			if sv := fv.SlackView(); sv.CallbackID == blockkit.CallbackDefinition {
				form = sv
			}
		}
		return form.ID != ""
	})
	values := map[string]map[string]slack.BlockAction{
		blockkit.DefIDBlock: value(checkpoints.PlanReview), "def_label": value("Mine"), "def_position": picked("after_planning"),
		"def_modes": picked("guided"), "def_retries": value("1"), "def_breaker_threshold": value("5"), "def_breaker_window": value("1h"),
	}
	ack := h.Submit(admin, slackfake.View{JSON: viewJSON(form)}, values)
	if ack.ResponseAction != "errors" || !strings.Contains(ack.Errors[blockkit.DefIDBlock], "built-in") {
		t.Fatalf("a built-in's id: %+v", ack)
	}
	values[blockkit.DefIDBlock] = value("risk_check")
	if ack = h.Submit(admin, slackfake.View{JSON: viewJSON(form)}, values); ack.ResponseAction != "" {
		t.Fatalf("a new definition: %+v", ack)
	}
	if d, err := defs.Definition(h.Ctx, "risk_check"); err != nil || !d.Enabled || d.Label != "Mine" {
		t.Fatalf("stored %+v, %v", d, err)
	}
	h.Wait("the Home to list the new definition", func() bool { return strings.Contains(homeOf(h, admin), "`risk_check` (custom)") })

	// A non-admin's forged form (the admin's was closed).
	forged := slack.View{Type: slack.VTModal, CallbackID: blockkit.CallbackDefinition, PrivateMetadata: form.PrivateMetadata, Title: form.Title}
	values[blockkit.DefIDBlock] = value("stranger_check")
	if ack = h.Submit(bottest.Stranger, slackfake.View{JSON: viewJSON(forged)}, values); ack.ResponseAction != "update" || !strings.Contains(string(ack.View), "Only admins") {
		t.Fatalf("a non-admin's submission: %+v", ack)
	}
	if _, err := defs.Definition(h.Ctx, "stranger_check"); err == nil {
		t.Fatal("a non-admin created a definition")
	}
}

func value(v string) map[string]slack.BlockAction {
	return map[string]slack.BlockAction{"value": {Value: v}}
}

func picked(v string) map[string]slack.BlockAction {
	o := slack.OptionBlockObject{Value: v}
	return map[string]slack.BlockAction{"value": {SelectedOption: o, SelectedOptions: []slack.OptionBlockObject{o}}}
}

func viewJSON(v slack.View) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TestAClickOnTheHomePublishesItAgain: a click on a checkpoint's button
// on the Home tab publishes the clicker's Home again (the App tells the
// feature, bot.Home.Clicked), whatever the click's outcome.
func TestAClickOnTheHomePublishesItAgain(t *testing.T) {
	h, _ := start(t, nil)
	v := open(t, h, bottest.Requester, "Heat pumps in the cold?")
	before := len(h.Fake.Calls("views.publish"))
	if _, err := h.Fake.ClickViewButton(h.Ctx, bottest.Requester, v, blockkit.ActionApprove, planID); err != nil {
		t.Fatal(err)
	}
	h.Wait("the Home published again", func() bool { return len(h.Fake.Calls("views.publish")) > before })
}

// TestNewNamesWhatIsMissing: New refuses a Config without runs, a memory
// or a way to reach Slack, and says which.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := home.New(home.Config{})
	if err == nil || !strings.Contains(err.Error(), "a Sender") || !strings.Contains(err.Error(), "the runs") || !strings.Contains(err.Error(), "a memory") {
		t.Errorf("New(empty) = %v", err)
	}
}
