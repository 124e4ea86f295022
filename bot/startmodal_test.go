package bot

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

func TestGoldenStartModals(t *testing.T) {
	cases := map[string]slack.ModalViewRequest{
		"start_channel": blockkit.StartModal(blockkit.DefaultStartSettings(), "", blockkit.StartMeta{Channel: "C1"}),
		"start_global":  blockkit.StartModal(blockkit.StartSettings{Mode: "auto", Depth: pipeline.DepthQuick, BudgetUSD: 0.75}, "", blockkit.StartMeta{}),
		"start_message": blockkit.StartModal(blockkit.StartSettings{Mode: "guided", Depth: pipeline.DepthComprehensive, ReviewSources: true}, "Is <!channel> district heating cheaper?\n\nasks <@U1>", blockkit.StartMeta{Channel: "C1", Thread: "100.1"}),
	}
	for name, view := range cases {
		t.Run(name, func(t *testing.T) {
			golden(t, "modal_"+name, view)
			if probs := blockProblems(view.Blocks.BlockSet, blockkit.MaxModalBlocks); len(probs) > 0 {
				t.Errorf("limits: %v", probs)
			}
		})
	}
}

func TestParseStartForm(t *testing.T) {
	val := func(v string) map[string]slack.BlockAction {
		return map[string]slack.BlockAction{blockkit.StartInput: {Value: v}}
	}
	sel := func(v string) map[string]slack.BlockAction {
		return map[string]slack.BlockAction{blockkit.StartInput: {SelectedOption: slack.OptionBlockObject{Value: v}}}
	}
	f, errs := blockkit.ParseStartForm(`{"c":"C1","t":"9.1"}`, map[string]map[string]slack.BlockAction{
		blockkit.StartQuestionBlock: val("  What is \u202eRAG and why?  "), blockkit.StartModeBlock: sel("guided"), blockkit.StartDepthBlock: sel("comprehensive"),
		blockkit.StartSourcesBlock: {blockkit.StartInput: {SelectedOptions: []slack.OptionBlockObject{{Value: blockkit.ReviewSourcesValue}}}}, blockkit.StartBudgetBlock: val("$2"),
	})
	if errs != nil || f.Channel != "C1" || f.Thread != "9.1" || f.Question != "What is RAG and why?" || f.Settings.RunMode() != "full" || f.Settings.Depth != pipeline.DepthComprehensive || f.Settings.BudgetUSD != 2 {
		t.Errorf("got %+v, %v", f, errs)
	}
	for _, c := range []struct {
		state map[string]map[string]slack.BlockAction
		block string
	}{
		{map[string]map[string]slack.BlockAction{blockkit.StartQuestionBlock: val("What is RAG and why?")}, blockkit.StartChannelBlock},
		{map[string]map[string]slack.BlockAction{blockkit.StartChannelBlock: {blockkit.StartInput: {SelectedConversation: "C2"}}, blockkit.StartQuestionBlock: val("short")}, blockkit.StartQuestionBlock},
		{map[string]map[string]slack.BlockAction{blockkit.StartChannelBlock: {blockkit.StartInput: {SelectedConversation: "C2"}}, blockkit.StartQuestionBlock: val("What is RAG and why?"), blockkit.StartBudgetBlock: val("51")}, blockkit.StartBudgetBlock},
		{map[string]map[string]slack.BlockAction{blockkit.StartChannelBlock: {blockkit.StartInput: {SelectedConversation: "C2"}}, blockkit.StartQuestionBlock: val("What is RAG and why?"), blockkit.StartBudgetBlock: val("NaN")}, blockkit.StartBudgetBlock},
	} {
		if _, errs := blockkit.ParseStartForm("", c.state); errs[c.block] == "" || len(errs) != 1 {
			t.Errorf("%v: errors %v, want one on %s", c.state, errs, c.block)
		}
	}
}
