package blockkit

import (
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

func TestParseStartForm(t *testing.T) {
	val := func(v string) map[string]slack.BlockAction {
		return map[string]slack.BlockAction{StartInput: {Value: v}}
	}
	sel := func(v string) map[string]slack.BlockAction {
		return map[string]slack.BlockAction{StartInput: {SelectedOption: slack.OptionBlockObject{Value: v}}}
	}
	f, errs := ParseStartForm(`{"c":"C1","t":"9.1"}`, map[string]map[string]slack.BlockAction{
		startQuestionBlock: val("  What is \u202eRAG and why?  "), startModeBlock: sel("guided"), startDepthBlock: sel("comprehensive"),
		startSourcesBlock: {StartInput: {SelectedOptions: []slack.OptionBlockObject{{Value: reviewSourcesValue}}}}, startBudgetBlock: val("$2"),
	})
	if errs != nil || f.Channel != "C1" || f.Thread != "9.1" || f.Question != "What is RAG and why?" || f.Settings.RunMode() != "full" || f.Settings.Depth != pipeline.DepthComprehensive || f.Settings.BudgetUSD != 2 {
		t.Errorf("got %+v, %v", f, errs)
	}
	for _, c := range []struct {
		state map[string]map[string]slack.BlockAction
		block string
	}{
		{map[string]map[string]slack.BlockAction{startQuestionBlock: val("What is RAG and why?")}, startChannelBlock},
		{map[string]map[string]slack.BlockAction{startChannelBlock: {StartInput: {SelectedConversation: "C2"}}, startQuestionBlock: val("short")}, startQuestionBlock},
		{map[string]map[string]slack.BlockAction{startChannelBlock: {StartInput: {SelectedConversation: "C2"}}, startQuestionBlock: val("What is RAG and why?"), startBudgetBlock: val("51")}, startBudgetBlock},
		{map[string]map[string]slack.BlockAction{startChannelBlock: {StartInput: {SelectedConversation: "C2"}}, startQuestionBlock: val("What is RAG and why?"), startBudgetBlock: val("NaN")}, startBudgetBlock},
		{map[string]map[string]slack.BlockAction{startChannelBlock: {StartInput: {SelectedConversation: "C2"}}, startQuestionBlock: val("What is RAG and why?"), startOnlyBlock: val("example.org, bad_one")}, startOnlyBlock},
		{map[string]map[string]slack.BlockAction{startChannelBlock: {StartInput: {SelectedConversation: "C2"}}, startQuestionBlock: val("What is RAG and why?"), startNeverBlock: val("-x.example")}, startNeverBlock},
		{map[string]map[string]slack.BlockAction{startChannelBlock: {StartInput: {SelectedConversation: "C2"}}, startQuestionBlock: val("What is RAG and why?"), startOnlyBlock: val("x.org"), startNeverBlock: val("X.org")}, startNeverBlock},
	} {
		if _, errs := ParseStartForm("", c.state); errs[c.block] == "" || len(errs) != 1 {
			t.Errorf("%v: errors %v, want one on %s", c.state, errs, c.block)
		}
	}
}

func TestParseStartFormDomains(t *testing.T) {
	f, errs := ParseStartForm(`{"c":"C1"}`, map[string]map[string]slack.BlockAction{
		startQuestionBlock: {StartInput: {Value: "What is RAG and why?"}},
		startOnlyBlock:     {StartInput: {Value: "Example.org, https://docs.example.net/x\nexample.com"}},
		startNeverBlock:    {StartInput: {Value: "spam.example"}},
	})
	if errs != nil {
		t.Fatal(errs)
	}
	if got := f.Settings.Domains.String(); got != "only example.org, docs.example.net, example.com · never spam.example" {
		t.Errorf("domains = %q", got)
	}
}
