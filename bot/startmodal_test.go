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
		"start_global":  blockkit.StartModal(blockkit.StartSettings{Mode: "auto", Depth: pipeline.DepthQuick, BudgetUSD: 0.75, Domains: pipeline.DomainRules{Only: []string{"example.org", "example.net"}, Never: []string{"spam.example"}}}, "", blockkit.StartMeta{}),
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
