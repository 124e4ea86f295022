package bot_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// untouched is the state Slack sends for a form submitted as it was shown:
// every input's initial value.
func untouched(form slack.View) map[string]map[string]slack.BlockAction {
	values := map[string]map[string]slack.BlockAction{}
	for _, b := range form.Blocks.BlockSet {
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
		default:
			continue
		}
		values[in.BlockID] = map[string]slack.BlockAction{blockkit.StartInput: a}
	}
	return values
}

func defKeys(d checkpoints.Definition) []string {
	var ks []string
	for _, f := range d.Fields {
		ks = append(ks, f.Key)
	}
	return ks
}

// TestAppHomeAdminReordersFields: in the definition form an admin moves
// the plan review's last field to the top; the fields are stored in the new
// order, each one whole, and the form shows that order when opened again. A
// position outside the form's is refused on its field, and nothing is saved.
func TestAppHomeAdminReordersFields(t *testing.T) {
	const admin = "U0ADMIN01"
	fake, a, ctx, _ := startRealStack(t, &researchtest.Researcher{}, func(c *bot.Config, a *app.App) {
		c.Home = appHome(t, c, a, []string{admin})
	})
	fake.AddUser(admin, "grace", "UTC")
	before, err := a.Store.Definition(ctx, checkpoints.PlanReview)
	if err != nil {
		t.Fatal(err)
	}
	n := len(before.Fields)
	if n < 3 {
		t.Fatalf("the plan review has %d fields; this test moves the last of at least 3", n)
	}
	edit := func() slack.View {
		t.Helper()
		home := openHome(t, ctx, fake, admin, "Checkpoint definitions (admin)", "")
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		seen := map[string]bool{}
		for _, v := range fake.Views() {
			seen[v.SlackView().ID] = true
		}
		if _, err := fake.ClickViewButton(cctx, admin, home, blockkit.ActionHomeEdit, checkpoints.PlanReview); err != nil {
			t.Fatal(err)
		}
		var form slack.View
		waitFor(t, fake, "a new edit form", func() bool {
			for _, v := range fake.Views() {
				if sv := v.SlackView(); sv.CallbackID == blockkit.CallbackDefinition && !seen[sv.ID] {
					form = sv
				}
			}
			return form.ID != ""
		})
		return form
	}
	submit := func(form slack.View, values map[string]map[string]slack.BlockAction) slackfake.ViewSubmissionAck {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		ack, err := fake.SubmitView(cctx, admin, form, values)
		if err != nil {
			t.Fatal(err)
		}
		va, _ := ack.ViewSubmission()
		return va
	}
	last := n - 1

	// A forged position is refused on that field's block; nothing is saved.
	form := edit()
	values := untouched(form)
	values[blockID(last, "position")] = picked("99")
	if va := submit(form, values); va.ResponseAction != "errors" || !strings.Contains(va.Errors[blockID(last, "position")], "Pick a position from 1 to") {
		t.Fatalf("a position outside the form: %+v", va)
	}
	if d, _ := a.Store.Definition(ctx, checkpoints.PlanReview); !slices.Equal(defKeys(d), defKeys(before)) {
		t.Fatalf("a refused form changed the order: %v", defKeys(d))
	}

	// The last field moved to position 1: it comes first, the others keep
	// their order after it.
	values[blockID(last, "position")] = picked("1")
	if va := submit(form, values); va.ResponseAction != "" {
		t.Fatalf("moving a field: %+v", va)
	}
	want := append([]string{before.Fields[last].Key}, defKeys(before)[:last]...)
	after, err := a.Store.Definition(ctx, checkpoints.PlanReview)
	if err != nil || !slices.Equal(defKeys(after), want) {
		t.Fatalf("stored order %v (%v), want %v", defKeys(after), err, want)
	}
	if after.Fields[0].Label != before.Fields[last].Label || after.Fields[0].Type != before.Fields[last].Type || after.Fields[0].RuntimeOptions != before.Fields[last].RuntimeOptions {
		t.Errorf("the moved field changed: %+v, was %+v", after.Fields[0], before.Fields[last])
	}
	form = edit()
	if got := untouched(form)[blockID(0, "key")][blockkit.StartInput].Value; got != before.Fields[last].Key {
		t.Errorf("the form opened again shows %q first, want %q", got, before.Fields[last].Key)
	}
}

// blockID is the block id of one part of a field slot of the form.
func blockID(slot int, part string) string { return "f" + string(rune('0'+slot)) + "_" + part }
