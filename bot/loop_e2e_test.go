package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// slackRun starts a guided run through the fake Slack and returns a
// function that clicks actionID on the checkpoint whose header has want.
func slackRun(t *testing.T, res *researchtest.Researcher, define ...checkpoints.Definition) (*slackfake.Server, func(want, actionID string) slackfake.Message, func() *pipeline.Run) {
	t.Helper()
	if testing.Short() {
		t.Skip("a whole research run")
	}
	const user, channel = "U0REQ0003", "C0RESEARCH"
	fake, a, ctx := realBot(t, res, user, channel)
	for _, d := range define {
		if err := a.Store.PutDefinition(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	click := func(want, actionID string) slackfake.Message {
		t.Helper()
		m := waitCheckpoint(t, fake, channel, want)
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		if _, err := fake.ClickButton(cctx, user, channel, m.TS, actionID, "", ""); err != nil {
			t.Fatal(err)
		}
		return m
	}
	run := func() *pipeline.Run {
		t.Helper()
		runs, err := a.Engine.List(ctx, pipeline.RunFilter{})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs %v, %v", runs, err)
		}
		return runs[0]
	}
	return fake, click, run
}

// TestARejectedDraftIsReviewedAndPublishedWithACaveatThroughSlack: every
// review scores 3, so the last draft is rejected; a person sees the
// reviewer's verdict, publishes it with a caveat, and the report says so.
func TestARejectedDraftIsReviewedAndPublishedWithACaveatThroughSlack(t *testing.T) {
	fake, click, run := slackRun(t, &researchtest.Researcher{ReviewScores: []float64{3}})
	click("Research plan", blockkit.ActionApprove)
	m := waitCheckpoint(t, fake, "C0RESEARCH", "Draft review")
	if text := string(m.Blocks); !strings.Contains(text, "The reviewer did not pass this draft") || !strings.Contains(text, "Publish with a caveat") {
		t.Fatalf("the draft review does not offer the choices for a rejected draft:\n%s", text)
	}
	click("Draft review", blockkit.ActionApprove)
	waitFor(t, fake, "the report", func() bool {
		r := run()
		return r.Status.Final()
	})
	r := run()
	if r.Status != pipeline.StatusCompleted || r.Report == nil || !strings.Contains(strings.Join(r.Report.Caveats, "\n"), "chose to publish it with this caveat") {
		t.Fatalf("status %s, report %+v", r.Status, r.Report)
	}
	waitFor(t, fake, "the receipt", func() bool {
		for _, msg := range fake.Messages("C0RESEARCH") {
			if msg.TS == m.TS && strings.Contains(string(msg.Blocks), "chose *Publish with a caveat*") {
				return true
			}
		}
		return false
	})
}

// TestApproveWithAnEmptyRequiredFieldIsRefusedThroughSlack: Approve on a
// checkpoint whose required field is empty is refused, ephemerally, with the
// field named, and the checkpoint still waits.
func TestApproveWithAnEmptyRequiredFieldIsRefusedThroughSlack(t *testing.T) {
	fake, click, run := slackRun(t, &researchtest.Researcher{}, checkpoints.Definition{
		ID: "audience_check", ControlType: "audience_check", Label: "Who is this for?", Position: checkpoints.AfterPlanning, SortOrder: 5,
		Modes: []string{checkpoints.ModeGuided}, Enabled: true, Required: true, MaxRetries: 1,
		Fields:  []checkpoints.Field{{Key: "audience", Type: checkpoints.FieldText, Label: "Audience", Required: true}},
		Actions: []checkpoints.Action{checkpoints.Approve, checkpoints.Edit, checkpoints.Reject},
	})
	click("Who is this for?", blockkit.ActionApprove)
	waitFor(t, fake, "the refusal", func() bool {
		for _, msg := range fake.Messages("C0RESEARCH") {
			if msg.Ephemeral && strings.Contains(string(msg.Blocks), "Not approved") && strings.Contains(string(msg.Blocks), "*Audience*") {
				return true
			}
		}
		return false
	})
	r := run()
	if inst := r.Current(); inst == nil || inst.DefinitionID != "audience_check" || inst.Decision != nil {
		t.Fatalf("a refused approve changed the checkpoint: %+v", inst)
	}
}
