package blockkit

import (
	"encoding/json"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// ActionNeverDomain is the action id of the source review's "Never use a
// site…" menu; each option's value is a domain, and the menu's block id is
// neverDomainBlockPrefix followed by the checkpoint instance id.
const ActionNeverDomain = "cp_never_domain"

const (
	neverDomainBlockPrefix = "cp_never:"
	maxNeverDomainOptions  = 100 // Slack's limit on a static_select's options
	maxOptionValue         = 150 // Slack's limit on an option's value
)

// NeverDomainInstance returns the checkpoint instance id a "Never use a
// site…" menu's block id carries.
func NeverDomainInstance(blockID string) (string, bool) {
	return strings.CutPrefix(blockID, neverDomainBlockPrefix)
}

// neverDomainBlocks is the source review's "Never use a site…" menu: one
// option per web domain among the listed sources, in the list's order;
// none for other checkpoints or when no source has a web domain.
func neverDomainBlocks(inst *checkpoints.Instance) []slack.Block {
	if inst.ControlType != checkpoints.SourceReview {
		return nil
	}
	var p pipeline.SourcesPayload
	if json.Unmarshal(inst.Payload, &p) != nil {
		return nil
	}
	var opts []*slack.OptionBlockObject
	seen := map[string]bool{}
	for _, s := range p.Sources {
		d := FirstNonEmpty(s.Domain, domainOf(s.URL))
		if seen[d] || len(d) > maxOptionValue || len(opts) == maxNeverDomainOptions {
			continue
		}
		seen[d] = true
		if _, err := (pipeline.DomainRules{Never: []string{d}}).Normalize(); err != nil {
			continue // not a web site (an MCP server, the document collection)
		}
		opts = append(opts, slack.NewOptionBlockObject(d, Plain("Never use "+d, 75), nil))
	}
	if len(opts) == 0 {
		return nil
	}
	sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, Plain("Never use a site…", 150), ActionNeverDomain, opts...)
	return []slack.Block{
		slack.NewActionBlock(neverDomainBlockPrefix+inst.ID, sel),
		ContextText("_Never use a site_ takes its sources out of this run and saves it to the never list of this channel (or of the stream), so later runs there skip it too."),
	}
}
