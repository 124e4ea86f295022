// Package start is the start form, a feature of the bot: "/research"
// without text, the global shortcut "Start research" and the message
// shortcut "Research this" open it; its submission starts the research
// through the transport (bot.Request.StartResearch) after remembering the
// channel's settings, which the form offers next time. It plugs into the
// transport (package bot) through the routes it registers and renders with
// bot/blockkit; bot does not import it: the assembly (internal/app/roles)
// builds a Feature and lists it in bot.Config.Features.
//
// Research by mention ("@researchbot <question>") is not this feature's:
// it is a way of saying /research, routed by the transport with the
// mentions (bot's converse.go), as is the slash command with text. The
// channel's never list that every run started in a channel takes
// (bot.StartConfig.Defaults) is the transport's rule too; this feature
// writes it when the form is submitted.
package start

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Config configures a Feature. Sender is required.
type Config struct {
	// Defaults remembers each channel's start-form settings (and its never
	// list); nil offers the built-in defaults and remembers nothing. The
	// assembly gives the same store to bot.StartConfig.Defaults, which
	// applies the never list to every run started in the channel.
	Defaults bot.ChannelDefaults
	// Kit is the transport's Sender (it opens the form), metrics, logger
	// and clock.
	bot.Kit
}

// Feature opens the start form and starts the research it asks for.
type Feature struct {
	defaults bot.ChannelDefaults
	send     *bot.Sender
	log      *slog.Logger
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: the start form needs"); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{defaults: cfg.Defaults, send: kit.Sender, log: kit.Logger}, nil
}

// defaultsBudget bounds the look-up of a channel's defaults before a form
// opens: a trigger_id lives 3 s.
const defaultsBudget = 700 * time.Millisecond

// Register routes /research without text, the two shortcuts and the start
// form's submission.
func (f *Feature) Register(r *bot.Routes) {
	r.Command(bot.CmdStart, func(ctx context.Context, req *bot.Request) error {
		f.openStartForm(ctx, req.TriggerID, req.UserID, "", blockkit.StartMeta{Channel: req.Channel})
		return nil
	})
	r.Shortcut(blockkit.ShortcutStart, f.onShortcut)
	r.Shortcut(blockkit.ShortcutResearchThis, f.onShortcut)
	r.View(blockkit.CallbackStart, f.onStartSubmission)
}

// onShortcut handles the global shortcut "Start research" and the message
// shortcut "Research this": both open the start form, the latter with the
// message's text as the question and its thread as the place of the run.
func (f *Feature) onShortcut(ctx context.Context, req *bot.Request) error {
	cb := req.Callback
	var meta blockkit.StartMeta
	question := ""
	switch {
	case cb.Type == slack.InteractionTypeShortcut && cb.CallbackID == blockkit.ShortcutStart:
	case cb.Type == slack.InteractionTypeMessageAction && cb.CallbackID == blockkit.ShortcutResearchThis:
		meta.Channel = cb.Channel.ID
		meta.Thread = blockkit.FirstNonEmpty(cb.Message.ThreadTimestamp, cb.Message.Timestamp, cb.MessageTs)
		question = blockkit.Unescape(cb.Message.Text)
	default:
		f.log.Warn("bot: unknown shortcut", "callback_id", cb.CallbackID, "type", string(cb.Type))
		return nil
	}
	f.openStartForm(ctx, cb.TriggerID, cb.User.ID, question, meta)
	return nil
}

// openStartForm opens the start form with the channel's defaults.
func (f *Feature) openStartForm(ctx context.Context, triggerID, user, question string, meta blockkit.StartMeta) {
	view := blockkit.StartModal(f.startDefaults(ctx, meta.Channel), question, meta)
	if _, err := f.send.OpenView(ctx, triggerID, view); err != nil {
		f.log.Error("bot: opening the start form failed", "user", user, "err", err)
		if meta.Channel != "" {
			f.send.Ephemeral(ctx, meta.Channel, user, meta.Thread, blockkit.RenderError("I couldn't open the form ("+blockkit.Escape(bot.SlackErrorCode(err))+").", "Please try again, or type `/research your question`."), "Could not open the form")
		}
	}
}

// startDefaults returns channel's remembered settings, or the built-in ones.
func (f *Feature) startDefaults(ctx context.Context, channel string) blockkit.StartSettings {
	s := blockkit.DefaultStartSettings()
	if f.defaults == nil || channel == "" {
		return s
	}
	ctx, cancel := context.WithTimeout(ctx, defaultsBudget)
	defer cancel()
	fields, err := f.defaults.Get(ctx, channel)
	if err != nil {
		f.log.Warn("bot: reading a channel's defaults failed; using the built-in ones", "channel", channel, "err", err)
		return s
	}
	if m, review := blockkit.SettingsOfMode(fields["mode"]); m == "auto" || m == "guided" {
		s.Mode, s.ReviewSources = m, review
	}
	if dep, ok := pipeline.ParseDepth(fields["depth"]); ok && dep != "" {
		s.Depth = dep
	}
	if b, err := strconv.ParseFloat(fields["budget_usd"], 64); err == nil && b > 0 && b <= blockkit.MaxStartBudgetUSD {
		s.BudgetUSD = b
	}
	// Remembered rules that no longer validate are dropped, not shown.
	if d, err := (pipeline.DomainRules{Only: blockkit.DomainList(fields["only_domains"]), Never: blockkit.DomainList(fields["never_domains"])}).Normalize(); err == nil {
		s.Domains = d
	}
	return s
}

// onStartSubmission validates a submitted start form before the ack
// (problems go back into the form) and starts the research after it.
func (f *Feature) onStartSubmission(ctx context.Context, req *bot.Request) error {
	cb := req.Callback
	var state map[string]map[string]slack.BlockAction
	if cb.View.State != nil {
		state = cb.View.State.Values
	}
	form, errs := blockkit.ParseStartForm(cb.View.PrivateMetadata, state)
	if errs != nil {
		if !req.Ack(slack.NewErrorsViewSubmissionResponse(errs)) {
			req.Log.Warn("bot: a start form with problems was closed before they could be shown")
		}
		return nil
	}
	req.Ack(nil)
	c := bot.Command{Kind: bot.CmdResearch, Question: form.Question, Mode: form.Settings.RunMode(), Depth: form.Settings.Depth, ThreadTS: form.Thread, BudgetUSD: form.Settings.BudgetUSD, Domains: form.Settings.Domains, Files: form.Files}
	req.Thread, req.Log = form.Thread, req.Log.With("channel", form.Channel)
	// Remembered before the run starts: the run applies the channel's never
	// list (bot.StartConfig.Defaults), which is now what the form said.
	if f.defaults != nil {
		fields := map[string]string{"mode": c.Mode, "depth": string(c.Depth), "budget_usd": strconv.FormatFloat(c.BudgetUSD, 'f', -1, 64),
			"only_domains": strings.Join(c.Domains.Only, ","), "never_domains": strings.Join(c.Domains.Never, ",")}
		if err := f.defaults.Put(ctx, form.Channel, fields); err != nil {
			req.Log.Warn("bot: remembering the channel's defaults failed", "err", err)
		}
	}
	req.StartResearch(ctx, form.Channel, c)
	return nil
}
