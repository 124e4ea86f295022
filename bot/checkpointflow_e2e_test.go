package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
)

// TestSkippingAnOptionalCheckpointThroughSlack: an admin's optional
// checkpoint sorted before the plan review is shown first, with Skip; a
// click on Skip collapses it and the plan review follows (the built-in is
// still asked), then the draft review, then the report, whose provenance
// records the skip.
func TestSkippingAnOptionalCheckpointThroughSlack(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	const user, channel = "U0REQ0002", "C0RESEARCH"
	fake, a, ctx := realBot(t, &researchtest.Researcher{}, user, channel)
	if err := a.Store.PutDefinition(ctx, checkpoints.Definition{
		ID: "audience_check", ControlType: "audience_check", Label: "Who is this for?", Position: checkpoints.AfterPlanning, SortOrder: 5,
		Modes: []string{checkpoints.ModeGuided}, Enabled: true, MaxRetries: 1,
		Fields:  []checkpoints.Field{{Key: "audience", Type: checkpoints.FieldText, Label: "Audience"}},
		Actions: []checkpoints.Action{checkpoints.Approve, checkpoints.Edit, checkpoints.Reject},
	}); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	click := func(want, action string) {
		t.Helper()
		m := waitCheckpoint(t, fake, channel, want)
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		defer ccancel()
		if _, err := fake.ClickButton(cctx, user, channel, m.TS, action, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	click("Who is this for?", blockkit.ActionSkip)
	click("Research plan", blockkit.ActionApprove)
	click("Draft review", blockkit.ActionApprove)
	waitFor(t, fake, "the report", func() bool {
		fs := fake.Files()
		return len(fs) > 0 && strings.HasPrefix(fs[len(fs)-1].Name, "research-")
	})
	runs, err := a.Engine.List(ctx, pipeline.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	if r := runs[0]; r.Report == nil || !strings.Contains(strings.Join(r.Report.Provenance.Decisions, "\n"), "audience_check: skipped") {
		t.Fatalf("the skip is not in the report's provenance: %+v", r.Report)
	}
}

// waitCheckpoint waits for the open checkpoint whose header contains want.
func waitCheckpoint(t *testing.T, fake *slackfake.Server, channel, want string) slackfake.Message {
	t.Helper()
	var found slackfake.Message
	waitFor(t, fake, "the "+want+" checkpoint", func() bool {
		m, label, ok := pendingCheckpoint(fake, channel)
		if ok && strings.Contains(label, want) {
			found = m
		}
		return ok && strings.Contains(label, want)
	})
	return found
}

// waitFor waits for cond, checked at each change fake records, failing
// after a minute.
func waitFor(t *testing.T, fake *slackfake.Server, what string, cond func() bool) {
	t.Helper()
	if !bot.WaitUntil(fake, time.Minute, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}
