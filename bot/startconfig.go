package bot

// How every run started in a channel takes the channel's remembered never
// list, and the person's token for workspace search: the transport's rules
// for starting a run, whichever way it is asked for (the slash command, a
// mention, the start form of bot/start, the assistant panel).

import (
	"context"
	"slices"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// StartConfig configures how an App starts runs. The start form itself is
// a feature (bot/start), given the same Defaults by the assembly.
type StartConfig struct {
	// Defaults remembers each channel's start-form settings (and its never
	// list); nil offers the built-in defaults and remembers nothing.
	Defaults ChannelDefaults
	// WorkspaceSearch keeps the action_token Slack sends with a person's
	// message (in an assistant thread, a DM, an app mention) with the run
	// it starts, so workspace search can search on their behalf
	// (SLACK_WORKSPACE_SEARCH); false keeps no token.
	WorkspaceSearch bool
}

// ChannelDefaults remembers, per channel, the settings last used in the start
// form, which the form offers next time (redisstore.ChannelDefaults).
type ChannelDefaults interface {
	Get(ctx context.Context, channel string) (map[string]string, error)
	Put(ctx context.Context, channel string, fields map[string]string) error
}

// defaultsBudget bounds the look-up of a channel's never list before a run
// starts (bot/start bounds its look-up of the form's defaults the same way:
// a trigger_id lives 3 s).
const defaultsBudget = 700 * time.Millisecond

// withChannelNever adds the never list remembered for channel to rules,
// except the domains rules allow explicitly; a storage failure keeps rules
// as they are.
func (a *App) withChannelNever(ctx context.Context, channel string, rules pipeline.DomainRules) pipeline.DomainRules {
	if a.cfg.Start.Defaults == nil || channel == "" {
		return rules
	}
	ctx, cancel := context.WithTimeout(ctx, defaultsBudget)
	defer cancel()
	f, err := a.cfg.Start.Defaults.Get(ctx, channel)
	if err != nil {
		a.log.Warn("bot: reading a channel's never list failed; the run goes on without it", "channel", channel, "err", err)
		return rules
	}
	saved, err := (pipeline.DomainRules{Never: blockkit.DomainList(f["never_domains"])}).Normalize()
	if err != nil {
		return rules
	}
	out := pipeline.DomainRules{Only: slices.Clone(rules.Only), Never: slices.Clone(rules.Never)}
	for _, d := range saved.Never {
		if !slices.Contains(out.Only, d) && !slices.Contains(out.Never, d) && len(out.Never) < pipeline.MaxDomainRules {
			out.Never = append(out.Never, d)
		}
	}
	return out
}
