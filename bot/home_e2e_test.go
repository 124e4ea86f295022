package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/bot/home"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// appHome is the App Home as the assembly builds it over a's engine and
// Slack memory, for the App c configures (its Slack). With admins
// (SLACK_ADMINS) it has a's checkpoint definitions, which they and
// workspace admins manage from it; with none, no admin section.
func appHome(t *testing.T, c *bot.Config, a *app.App, admins []string) *home.Feature {
	t.Helper()
	hc := home.Config{Runs: a.Engine, Memory: redisstore.NewSlackMemory(a.Conn.Client), Admins: admins, Kit: kitOf(c)}
	if admins != nil {
		hc.Definitions = a.Store
	}
	f, err := home.New(hc)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// homeText is every text the user's App Home shows, "" when none was published.
func homeText(fake *slackfake.Server, user string) string {
	v, ok := fake.Home(user)
	if !ok {
		return ""
	}
	var doc struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	_ = json.Unmarshal(v.JSON, &doc)
	return displayed(slackfake.Message{Blocks: doc.Blocks}) + "\n" + string(doc.Blocks)
}

// openHome opens user's App Home and waits until a version containing want
// (and, when set, not containing notWant) is published.
func openHome(t *testing.T, ctx context.Context, fake *slackfake.Server, user, want, notWant string) slack.View {
	t.Helper()
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := fake.OpenHome(cctx, user); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fake, "an App Home with "+want, func() bool {
		s := homeText(fake, user)
		return strings.Contains(s, want) && (notWant == "" || !strings.Contains(s, notWant))
	})
	v, _ := fake.Home(user)
	return v.SlackView()
}

// lastForm is the newest version of the definition form.
func lastForm(t *testing.T, fake *slackfake.Server) slack.View {
	t.Helper()
	var form slack.View
	waitFor(t, fake, "the definition form", func() bool {
		for _, v := range fake.Views() {
			if sv := v.SlackView(); sv.CallbackID == blockkit.CallbackDefinition {
				form = sv
			}
		}
		return form.ID != ""
	})
	return form
}

// value fills one input of a form.
func value(v string) map[string]slack.BlockAction {
	return map[string]slack.BlockAction{"value": {Value: v}}
}

func picked(values ...string) map[string]slack.BlockAction {
	a := slack.BlockAction{}
	for _, v := range values {
		a.SelectedOptions = append(a.SelectedOptions, slack.OptionBlockObject{Value: v})
		a.SelectedOption = slack.OptionBlockObject{Value: v}
	}
	return map[string]slack.BlockAction{"value": a}
}

// TestAppHomeAdminCreatesACheckpointThatAUserMeets is the App Home end to
// end, on the real engine: an admin creates a checkpoint with a select, a
// range, chips and a textarea through the form (the first submission has a
// field error and saves nothing); a user's run asks it before the plan
// review; the user's App Home shows each pending decision with its buttons,
// the user skips the optional one and approves the plan from there, and the
// App Home clears. A non-admin sees no admin section, and a submission of
// the admin form by a non-admin is refused.
func TestAppHomeAdminCreatesACheckpointThatAUserMeets(t *testing.T) {
	if testing.Short() {
		t.Skip("a research run")
	}
	const admin, user, channel = "U0ADMIN01", "U0REQ0001", "C0RESEARCH"
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, a *app.App) {
		c.Home = appHome(t, c, a, []string{admin})
	})
	fake.AddUser(admin, "grace", "UTC")

	// The admin opens the App Home and the form.
	home := openHome(t, ctx, fake, admin, "Checkpoint definitions (admin)", "")
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := fake.ClickViewButton(cctx, admin, home, blockkit.ActionHomeCreate, ""); err != nil {
		t.Fatal(err)
	}
	form := lastForm(t, fake)
	values := map[string]map[string]slack.BlockAction{
		"def_id": value("risk_check"), "def_label": value("Risk check"), "def_position": picked("after_planning"),
		"def_sort": value("5"), "def_modes": picked("guided"), "def_retries": value("1"),
		"def_breaker_threshold": value("5"), "def_breaker_window": value("1h"),
		"f0_key": value("level"), "f0_label": value("Risk level"), "f0_type": picked("select"), "f0_options": value("low | Low\nhigh | High"),
		"f1_key": value("score"), "f1_label": value("Score"), "f1_type": picked("range"), "f1_min": value("1"), "f1_default": value("3"),
	}
	ack, err := fake.SubmitView(cctx, admin, form, values)
	if err != nil {
		t.Fatal(err)
	}
	va, _ := ack.ViewSubmission()
	if va.ResponseAction != "errors" || !strings.Contains(va.Errors["f1_max"], "range needs both min and max") {
		t.Fatalf("the first submission: %+v", va)
	}
	if _, err := a.Store.Definition(ctx, "risk_check"); !errors.Is(err, checkpoints.ErrNoDefinition) {
		t.Fatalf("a refused form was stored: %v", err)
	}
	values["f1_max"] = value("5")
	values["f2_key"], values["f2_label"], values["f2_type"] = value("notes"), value("Notes"), picked("textarea")
	values["f3_key"], values["f3_label"], values["f3_type"], values["f3_options"] = value("tags"), value("Tags"), picked("chips"), value("cost\nsafety")
	form = lastForm(t, fake)
	if ack, err = fake.SubmitView(cctx, admin, form, values); err != nil {
		t.Fatal(err)
	}
	if va, _ = ack.ViewSubmission(); va.ResponseAction != "" {
		t.Fatalf("the corrected submission: %+v", va)
	}
	def, err := a.Store.Definition(ctx, "risk_check")
	if err != nil || len(def.Fields) != 4 || def.Fields[1].Default != 3.0 || !def.Enabled || def.Required {
		t.Fatalf("stored %+v, %v", def, err)
	}
	waitFor(t, fake, "the admin's App Home to list the new checkpoint", func() bool { return strings.Contains(homeText(fake, admin), "`risk_check` (custom)") })

	// A non-admin: no admin section, and a tampered admin form is refused.
	openHome(t, ctx, fake, user, "Waiting for your decision", "")
	if s := homeText(fake, user); strings.Contains(s, "Checkpoint definitions") || strings.Contains(s, blockkit.ActionHomeCreate) {
		t.Fatalf("a non-admin sees the admin section:\n%s", s)
	}
	tampered := slack.View{Type: slack.VTModal, CallbackID: blockkit.CallbackDefinition, PrivateMetadata: `{"id":"plan_review","slots":0}`,
		Title: &slack.TextBlockObject{Type: "plain_text", Text: "Edit"}}
	ack, err = fake.SubmitView(cctx, user, tampered, map[string]map[string]slack.BlockAction{"def_label": value("Owned"), "def_modes": picked("guided"), "def_position": picked("after_planning")})
	if err != nil {
		t.Fatal(err)
	}
	if va, _ = ack.ViewSubmission(); va.ResponseAction != "update" || !strings.Contains(string(va.View), "Only admins") {
		t.Fatalf("a non-admin's submission: %+v %s", va, va.View)
	}
	if d, _ := a.Store.Definition(ctx, checkpoints.PlanReview); d.Label == "Owned" {
		t.Fatal("a non-admin changed the plan review")
	}

	// The user's run meets the custom checkpoint first, then the plan review.
	if _, err := fake.SlashCommand(cctx, slackfake.SlashCommand{Command: "/research", Text: "How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	waitCheckpoint(t, fake, channel, "Risk check")
	// The bot remembers where it posted the checkpoint just after the post
	// returns; a person who opens the App Home before that sees the decision
	// without its link, and opens the Home again.
	openHome(t, ctx, fake, user, "*Risk check*", "")
	pending := func() bool {
		s := homeText(fake, user)
		return strings.Contains(s, "in its thread>") && strings.Contains(s, blockkit.ActionSkip)
	}
	if !bot.WaitUntil(fake, 10*time.Second, func() bool {
		if pending() {
			return true
		}
		_ = fake.OpenHome(cctx, user)
		return false
	}) {
		t.Fatalf("the pending decision lacks its link or Skip:\n%s", homeText(fake, user))
	}
	shown, _ := fake.Home(user)
	home = shown.SlackView()
	riskInst := pendingInstance(t, fake, a, "risk_check")
	if _, err := fake.ClickViewButton(cctx, user, home, blockkit.ActionSkip, riskInst); err != nil {
		t.Fatal(err)
	}
	waitCheckpoint(t, fake, channel, "Research plan")
	home = openHome(t, ctx, fake, user, "*Research plan*", riskInst)
	planInst := pendingInstance(t, fake, a, checkpoints.PlanReview)
	if _, err := fake.ClickViewButton(cctx, user, home, blockkit.ActionApprove, planInst); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fake, "the App Home to clear the plan review", func() bool { return !strings.Contains(homeText(fake, user), planInst) })

	// A decision made in a form opened from the App Home refreshes it too.
	waitCheckpoint(t, fake, channel, "Draft review")
	draftInst := pendingInstance(t, fake, a, checkpoints.DraftReview)
	home = openHome(t, ctx, fake, user, draftInst, "")
	if _, err := fake.ClickViewButton(cctx, user, home, blockkit.ActionReject, draftInst); err != nil {
		t.Fatal(err)
	}
	var reject slack.View
	waitFor(t, fake, "the reject form", func() bool {
		for _, v := range fake.Views() {
			if sv := v.SlackView(); sv.CallbackID == blockkit.CallbackReject && sv.PrivateMetadata == draftInst {
				reject = sv
			}
		}
		return reject.ID != ""
	})
	reason := map[string]map[string]slack.BlockAction{}
	for _, b := range reject.Blocks.BlockSet {
		if in, ok := b.(*slack.InputBlock); ok {
			reason[in.BlockID] = map[string]slack.BlockAction{reasonAction(in): {Value: "Say more about air-source pumps below -20 °C."}}
		}
	}
	if _, err := fake.SubmitView(cctx, user, reject, reason); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fake, "the App Home to clear the draft review", func() bool {
		s := homeText(fake, user)
		return s != "" && !strings.Contains(s, draftInst)
	})
	// A non-admin's tampered admin click changes nothing.
	fakeHome := slack.View{ID: "VTAMPERED", Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: []slack.Block{
		slack.NewActionBlock("x", slack.NewButtonBlockElement(blockkit.ActionHomeDisable, "risk_check", &slack.TextBlockObject{Type: "plain_text", Text: "Disable"}))}}}
	if _, err := fake.ClickViewButton(cctx, user, fakeHome, blockkit.ActionHomeDisable, "risk_check"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fake, "the refusal", func() bool {
		for _, v := range fake.Views() {
			if v.UserID == user && strings.Contains(string(v.JSON), "Only admins") {
				return true
			}
		}
		return false
	})
	if d, _ := a.Store.Definition(ctx, "risk_check"); !d.Enabled {
		t.Fatal("a non-admin disabled a checkpoint")
	}
	// A workspace admin (users.info) is an admin too, and disables it.
	const wsAdmin = "U0WSADM01"
	fake.AddUser(wsAdmin, "linus", "UTC")
	fake.SetAdmin(wsAdmin, true)
	home = openHome(t, ctx, fake, wsAdmin, "Checkpoint definitions (admin)", "")
	if _, err := fake.ClickViewButton(cctx, wsAdmin, home, blockkit.ActionHomeDisable, "risk_check"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, fake, "the App Home to show it disabled", func() bool {
		return strings.Contains(homeText(fake, wsAdmin), "`risk_check` (custom) — :white_circle: disabled")
	})
	if d, _ := a.Store.Definition(ctx, "risk_check"); d.Enabled {
		t.Fatal("the disable was not stored")
	}
	if s := homeText(fake, wsAdmin); !strings.Contains(s, "In the last 7 days: 1 skipped.") {
		t.Fatalf("the admin section does not count the skipped instance:\n%s", s)
	}

	r := runOf(t, a)
	if got := r.Instance(riskInst); got == nil || got.State != checkpoints.StateSkipped {
		t.Fatalf("the risk check was not skipped: %+v", got)
	}
	if got := r.Instance(planInst); got == nil || got.Decision == nil || got.Decision.Action != checkpoints.Approve || got.Decision.By != user {
		t.Fatalf("the plan review was not approved from the App Home: %+v", got)
	}
}

// runOf is the only run of the test.
func runOf(t *testing.T, a *app.App) *pipeline.Run {
	t.Helper()
	runs, err := a.Engine.List(context.Background(), pipeline.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	return runs[0]
}

// pendingInstance waits until the run waits at a checkpoint of defID and
// returns that instance's id.
func pendingInstance(t *testing.T, fake *slackfake.Server, a *app.App, defID string) string {
	t.Helper()
	var id string
	waitFor(t, fake, "the run to wait at "+defID, func() bool {
		if inst := runOf(t, a).Current(); inst != nil && inst.DefinitionID == defID && inst.Open() {
			id = inst.ID
		}
		return id != ""
	})
	return id
}

// reasonAction is the action id of an input block's element.
func reasonAction(in *slack.InputBlock) string {
	if el, ok := in.Element.(*slack.PlainTextInputBlockElement); ok {
		return el.ActionID
	}
	return ""
}
