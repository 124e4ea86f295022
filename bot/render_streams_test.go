package bot

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// sampleSpec is a complete stream configuration with hostile text in it.
func sampleSpec() scheduler.Spec {
	return scheduler.Spec{
		Owner: "U123", Channel: "C0RESEARCH", CreatedAt: t0,
		Purpose:          "Track <!channel> heat pump rivals & pricing",
		BusinessGoals:    []string{"Inform pricing", "Spot new entrants"},
		ExpectedOutcomes: "Quarterly pricing decisions",
		Name:             "Heat pump <watch>", Type: scheduler.TypeCompetitive,
		FocusAreas: []string{"Nordics", "Germany"}, Keywords: []string{"heat pump", "air-to-water"},
		Competitors: []string{"Acme <http://evil.example|click>"},
		Frequency:   scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "Europe/Paris", Weekday: time.Monday, MonthDay: 1,
	}
}

func sampleStream() *scheduler.Stream {
	spec := sampleSpec()
	return &scheduler.Stream{
		ID: "s-abc", Version: 3, Spec: spec, Owner: "U123", CreatedAt: t0, Policy: scheduler.PolicyHoldDraft,
		NextFire: time.Date(2026, 3, 16, 8, 0, 0, 0, time.UTC),
		Digests: []scheduler.DigestRecord{
			{RunID: "run-1", FireAt: t0, Trigger: scheduler.TriggerDryRun, Status: scheduler.DigestCompleted, NewItems: 4},
			{RunID: "run-2", FireAt: t0.Add(48 * time.Hour), Trigger: scheduler.TriggerSchedule, Status: scheduler.DigestCompleted, NothingNew: true},
			{FireAt: t0.Add(96 * time.Hour), Trigger: scheduler.TriggerSchedule, Status: scheduler.DigestSkipped, Skipped: "the previous digest (run run-2) was still running"},
			{RunID: "run-3", FireAt: t0.Add(120 * time.Hour), Trigger: scheduler.TriggerRunNow, Status: scheduler.DigestFailed, Note: "the model <!here> failed"},
		},
	}
}

func TestGoldenStreamMessages(t *testing.T) {
	review := sampleSpec().ReviewLines()
	paused := sampleStream()
	paused.Paused, paused.NextFire, paused.Digests = true, time.Time{}, nil
	paused.Domains = pipeline.DomainRules{Only: []string{"example.org"}, Never: []string{"spam.example"}}
	cases := map[string][]slack.Block{
		"root": blockkit.RenderStreamRoot("U123"),
		"turn_question": blockkit.RenderStreamTurn(scheduler.Turn{Step: scheduler.StepExploration,
			Message: "What would you like to keep an eye on? <!channel> *bold*"}, "U123"),
		"turn_suggestions": blockkit.RenderStreamTurn(scheduler.Turn{Number: 4, Step: scheduler.StepStreamType, TargetField: scheduler.FieldStreamType,
			Message: "What type of research is this?", Suggestions: []string{"competitive", "regulatory", "market"}}, "U123"),
		"turn_options": blockkit.RenderStreamTurn(scheduler.Turn{Number: 5, Step: scheduler.StepFocusAreas, TargetField: scheduler.FieldFocusAreas,
			Message: "Which areas?", Options: []string{"Nordics", "Germany", "<@U999> hostile option that is much longer than seventy-five characters in total"}}, "U123"),
		"turn_skippable": blockkit.RenderStreamTurn(scheduler.Turn{Number: 6, Step: scheduler.StepCompetitors, TargetField: scheduler.FieldCompetitors,
			Message: "Which companies should it monitor? (optional)", Options: []string{"Acme", "Globex"}, Skippable: true}, "U123"),
		"turn_review": blockkit.RenderStreamTurn(scheduler.Turn{Number: 9, Step: scheduler.StepReview, Message: "Here is the configuration.",
			Suggestions: []string{scheduler.ReviewConfirm, scheduler.ReviewChange}, Review: review}, "U123"),
		"answered": blockkit.RenderStreamAnswered(blockkit.RenderStreamTurn(scheduler.Turn{Step: scheduler.StepStreamType, TargetField: scheduler.FieldStreamType,
			Message: "What type?", Suggestions: []string{"market"}}, "U123"), "What type?", "U123", "chose *market*"),
		"answered_review": blockkit.RenderStreamAnswered(blockkit.RenderStreamTurn(scheduler.Turn{Number: 9, Step: scheduler.StepReview, Message: "Here is the configuration.",
			Suggestions: []string{scheduler.ReviewConfirm, scheduler.ReviewChange}, Review: review}, "U123"), "Here is the configuration.", "U123", "edited *Keywords*"),
		"field_form_keywords":  blockkit.RenderStreamFieldModal(scheduler.FieldKeywords, "heat pump\n<!channel> air-to-water", `{"c":"C1"}`).Blocks.BlockSet,
		"field_form_frequency": blockkit.RenderStreamFieldModal(scheduler.FieldReportFrequency, "weekly", `{"c":"C1"}`).Blocks.BlockSet,
		"created":              blockkit.RenderStreamCreated(sampleStream()),
		"help":                 blockkit.RenderStreamHelp(),
		"list":                 blockkit.RenderStreamList([]*scheduler.Stream{sampleStream(), paused}, t0),
		"list_empty":           blockkit.RenderStreamList(nil, t0),
		"show":                 blockkit.RenderStreamShow(sampleStream()),
		"show_paused":          blockkit.RenderStreamShow(paused),
		"delete_confirm":       blockkit.RenderStreamDeleteConfirm(sampleStream()),
		"deleted":              blockkit.RenderStreamChanged(sampleStream(), ":wastebasket: Deleted the research stream"),
		"paused":               blockkit.RenderStreamChanged(sampleStream(), ":double_vertical_bar: Paused"),
		"not_allowed":          blockkit.RenderStreamNotAllowed(sampleStream(), "pause"),
	}
	for name, blocks := range cases {
		t.Run(name, func(t *testing.T) {
			golden(t, "stream_"+name, msg(blocks))
			if probs := blockProblems(blocks, blockkit.MaxBlocks); len(probs) > 0 {
				t.Errorf("limits: %v", probs)
			}
			b, _ := json.Marshal(blocks)
			for _, bad := range []string{"<!channel>", "<!here>", "<http://evil.example|", "<@U999>", "<watch>"} {
				if strings.Contains(string(b), bad) {
					t.Errorf("unescaped %q in %s", bad, b)
				}
			}
		})
	}
}

// TestStreamTurnControls checks which controls each kind of turn offers.
func TestStreamTurnControls(t *testing.T) {
	ids := func(blocks []slack.Block) string {
		b, _ := json.Marshal(blocks)
		var out []string
		for _, id := range []string{blockkit.ActionStreamPick + "0", blockkit.ActionStreamOptions, blockkit.ActionStreamContinue, blockkit.ActionStreamSkip, blockkit.ActionStreamConfirm, blockkit.ActionStreamChange} {
			if strings.Contains(string(b), `"`+id+`"`) {
				out = append(out, id)
			}
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		turn scheduler.Turn
		want string
	}{
		{scheduler.Turn{Step: scheduler.StepExploration, Message: "q"}, ""},
		{scheduler.Turn{Step: scheduler.StepStreamType, Suggestions: []string{"market"}}, "st_pick_0"},
		{scheduler.Turn{Step: scheduler.StepKeywords, Options: []string{"a", "b"}}, "st_options,st_continue"},
		{scheduler.Turn{Step: scheduler.StepCompetitors, Options: []string{"a"}, Skippable: true}, "st_options,st_continue,st_skip"},
		{scheduler.Turn{Step: scheduler.StepReview, Suggestions: []string{"Confirm", "Change"}}, "st_confirm,st_change"},
	}
	for _, c := range cases {
		if got := ids(blockkit.RenderStreamTurn(c.turn, "U1")); got != c.want {
			t.Errorf("%s turn: controls %q, want %q", c.turn.Step, got, c.want)
		}
	}
}
