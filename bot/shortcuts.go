package bot

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// StartConfig configures how an App starts runs.
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

// defaultsBudget bounds the look-up of a channel's defaults before a form
// opens: a trigger_id lives 3 s.
const defaultsBudget = 700 * time.Millisecond

// onShortcut handles the global shortcut "Start research" and the message
// shortcut "Research this": both open the start form, the latter with the
// message's text as the question and its thread as the place of the run.
func (a *App) onShortcut(k *acker, d delivery, cb slack.InteractionCallback) {
	k.ack(nil)
	var meta blockkit.StartMeta
	question := ""
	switch {
	case cb.Type == slack.InteractionTypeShortcut && cb.CallbackID == blockkit.ShortcutStart:
	case cb.Type == slack.InteractionTypeMessageAction && cb.CallbackID == blockkit.ShortcutResearchThis:
		meta.Channel = cb.Channel.ID
		meta.Thread = blockkit.FirstNonEmpty(cb.Message.ThreadTimestamp, cb.Message.Timestamp, cb.MessageTs)
		question = blockkit.Unescape(cb.Message.Text)
	default:
		a.log.Warn("bot: unknown shortcut", "callback_id", cb.CallbackID, "type", string(cb.Type))
		return
	}
	if !a.pool.submit(func(ctx context.Context) {
		if a.firstDelivery(ctx, d) {
			a.openStartForm(ctx, cb.TriggerID, cb.User.ID, question, meta)
		}
	}) {
		a.log.Warn("bot: busy; could not open the start form", "user", cb.User.ID)
	}
}

// openStartForm opens the start form with the channel's defaults.
func (a *App) openStartForm(ctx context.Context, triggerID, user, question string, meta blockkit.StartMeta) {
	view := blockkit.StartModal(a.startDefaults(ctx, meta.Channel), question, meta)
	if _, err := a.send.OpenView(ctx, triggerID, view); err != nil {
		a.log.Error("bot: opening the start form failed", "user", user, "err", err)
		if meta.Channel != "" {
			a.send.Ephemeral(ctx, meta.Channel, user, meta.Thread, blockkit.RenderError("I couldn't open the form ("+blockkit.Escape(SlackErrorCode(err))+").", "Please try again, or type `/research your question`."), "Could not open the form")
		}
	}
}

// startDefaults returns channel's remembered settings, or the built-in ones.
func (a *App) startDefaults(ctx context.Context, channel string) blockkit.StartSettings {
	s := blockkit.DefaultStartSettings()
	if a.cfg.Start.Defaults == nil || channel == "" {
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, defaultsBudget)
	defer cancel()
	f, err := a.cfg.Start.Defaults.Get(ctx, channel)
	if err != nil {
		a.log.Warn("bot: reading a channel's defaults failed; using the built-in ones", "channel", channel, "err", err)
		return s
	}
	if m, review := blockkit.SettingsOfMode(f["mode"]); m == "auto" || m == "guided" {
		s.Mode, s.ReviewSources = m, review
	}
	if dep, ok := pipeline.ParseDepth(f["depth"]); ok && dep != "" {
		s.Depth = dep
	}
	if b, err := strconv.ParseFloat(f["budget_usd"], 64); err == nil && b > 0 && b <= blockkit.MaxStartBudgetUSD {
		s.BudgetUSD = b
	}
	// Remembered rules that no longer validate are dropped, not shown.
	if d, err := (pipeline.DomainRules{Only: blockkit.DomainList(f["only_domains"]), Never: blockkit.DomainList(f["never_domains"])}).Normalize(); err == nil {
		s.Domains = d
	}
	return s
}

// registerStart routes /research without text and the start form.
func (a *App) registerStart(r *Routes) {
	r.Command(CmdStart, func(ctx context.Context, req *Request) error {
		a.openStartForm(ctx, req.TriggerID, req.UserID, "", blockkit.StartMeta{Channel: req.Channel})
		return nil
	})
	r.View(blockkit.CallbackStart, a.onStartSubmission)
}

// onStartSubmission validates a submitted start form before the ack
// (problems go back into the form) and starts the research after it.
func (a *App) onStartSubmission(ctx context.Context, req *Request) error {
	cb := req.Callback
	var state map[string]map[string]slack.BlockAction
	if cb.View.State != nil {
		state = cb.View.State.Values
	}
	f, errs := blockkit.ParseStartForm(cb.View.PrivateMetadata, state)
	if errs != nil {
		if !req.Ack(slack.NewErrorsViewSubmissionResponse(errs)) {
			req.Log.Warn("bot: a start form with problems was closed before they could be shown")
		}
		return nil
	}
	req.Ack(nil)
	c := Command{Kind: CmdResearch, Question: f.Question, Mode: f.Settings.RunMode(), Depth: f.Settings.Depth, ThreadTS: f.Thread, BudgetUSD: f.Settings.BudgetUSD, Domains: f.Settings.Domains, Files: f.Files}
	start := &Request{
		UserID: req.UserID, TeamID: req.TeamID, Channel: f.Channel, Thread: f.Thread,
		Command: &slack.SlashCommand{TeamID: req.TeamID, ChannelID: f.Channel, UserID: req.UserID},
		Parsed:  c, Log: req.Log.With("channel", f.Channel), send: a.send, app: a,
	}
	// Remembered before the run starts: the run applies the channel's never
	// list (withChannelNever), which is now what the form said.
	if a.cfg.Start.Defaults != nil {
		fields := map[string]string{"mode": c.Mode, "depth": string(c.Depth), "budget_usd": strconv.FormatFloat(c.BudgetUSD, 'f', -1, 64),
			"only_domains": strings.Join(c.Domains.Only, ","), "never_domains": strings.Join(c.Domains.Never, ",")}
		if err := a.cfg.Start.Defaults.Put(ctx, f.Channel, fields); err != nil {
			start.Log.Warn("bot: remembering the channel's defaults failed", "err", err)
		}
	}
	a.serve(ctx, a.startResearch, start)
	return nil
}

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
