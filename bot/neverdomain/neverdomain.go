// Package neverdomain is "Never use a site…" at the source review, a
// feature of the bot: the domain leaves the run at once
// (pipeline.Engine.NeverDomain) and is saved to the never list of the run's
// stream (a digest) or of its channel (the start form's "Never these
// sites", which every run started in the channel applies). Only the
// requester and the channel's approvers may (bot.Request.CheckCheckpoint).
//
// It plugs into the transport (package bot) through the route it
// registers and renders with bot/blockkit; bot does not import it: the
// assembly (internal/app/roles) builds a Feature and lists it in
// bot.Config.Features.
package neverdomain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine takes a domain out of a run at its source review
// (*pipeline.Engine).
type Engine interface {
	NeverDomain(ctx context.Context, instanceID, by, domain string) (*pipeline.Run, string, error)
}

// StreamDomains adds a domain to a stream's never list (the assembly
// passes the stream service).
type StreamDomains interface {
	NeverDomain(ctx context.Context, streamID, domain, actor string) (name string, err error)
}

// ChannelDefaults remembers, per channel, the settings last used in the
// start form, among them its never list (redisstore.ChannelDefaults, the
// App's bot.StartConfig.Defaults).
type ChannelDefaults interface {
	Get(ctx context.Context, channel string) (map[string]string, error)
	Put(ctx context.Context, channel string, fields map[string]string) error
}

// Config configures a Feature. Engine and the Kit's Sender are
// required.
type Config struct {
	Engine Engine
	// Streams saves a digest's choice to its stream's never list; nil says
	// streams' lists are not enabled.
	Streams StreamDomains
	// Defaults keeps a channel run's choice in the channel's never list
	// (give the App's Start.Defaults); nil says only the run skips it.
	Defaults ChannelDefaults
	// Kit is the transport's Sender, metrics, logger and clock.
	bot.Kit
}

// Feature takes a site out of a run at its source review and saves it to
// the never list of the run's stream or channel.
type Feature struct {
	engine   Engine
	streams  StreamDomains
	defaults ChannelDefaults
	send     *bot.Sender
	log      *slog.Logger
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: never-use needs",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, streams: cfg.Streams, defaults: cfg.Defaults, send: kit.Sender, log: kit.Logger}, nil
}

// Register routes the source review's "Never use a site…" menu.
func (f *Feature) Register(r *bot.Routes) {
	r.Action(blockkit.ActionNeverDomain, f.onNeverDomain)
}

// onNeverDomain handles a choice in the "Never use a site…" menu: only the
// requester and the channel's approvers may; the person is told what was
// excluded, what was saved where, and how to undo it.
func (f *Feature) onNeverDomain(ctx context.Context, req *bot.Request) error {
	act, user := req.Action, req.UserID
	instID, ok := blockkit.NeverDomainInstance(act.BlockID)
	if !ok || act.SelectedOption.Value == "" {
		return bot.Tell(blockkit.RenderError("This menu doesn't belong to any source review I know.", "Nothing was changed."), "Nothing was changed")
	}
	log := req.Log.With("checkpoint_id", instID)
	r, problem := req.CheckCheckpoint(ctx, instID)
	if problem != nil {
		log.Info("bot: never-use choice refused")
		return bot.Tell(problem, "Nothing was changed")
	}
	run, domain, err := f.engine.NeverDomain(ctx, instID, user, act.SelectedOption.Value)
	switch {
	case errors.Is(err, pipeline.ErrNotCurrent), errors.Is(err, pipeline.ErrNotSourceReview):
		return bot.Tell(blockkit.RenderNotCurrent(r.ID), "Nothing was changed")
	case err != nil && run == nil && domain == "":
		return bot.Tell(blockkit.RenderError("I can't use that as a domain: "+blockkit.EscapeTruncate(err.Error(), 300), "Nothing was changed."), "Nothing was changed")
	case err != nil:
		return fmt.Errorf("never use %s in run %s: %w", domain, r.ID, err)
	}
	log.Info("bot: a domain excluded at the source review", "run_id", run.ID, "domain", domain)
	if inst := run.Current(); inst != nil && req.Callback != nil && req.Callback.Container.MessageTs != "" {
		blocks := blockkit.RenderCheckpoint(inst, run.RequestedBy)
		text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": your decision is needed", 300)
		if err := f.send.Update(ctx, req.Callback.Container.ChannelID, req.Callback.Container.MessageTs, blocks, text); err != nil {
			log.Warn("bot: showing the source review without the excluded site failed", "err", err)
		}
	}
	saved := f.saveNeverDomain(ctx, run, domain, user)
	msg := fmt.Sprintf("*Never using %s.* %s", blockkit.Escape(domain), excludedCount(run, domain))
	req.Reply(ctx, []slack.Block{blockkit.Section(msg + "\n" + saved)}, "Never using "+domain)
	return nil
}

// excludedCount says how many of the run's sources the choice took out.
func excludedCount(r *pipeline.Run, domain string) string {
	n := 0
	for _, s := range r.Sources {
		if strings.HasPrefix(s.FetchErr, pipeline.NeverDomainReason) && strings.HasSuffix(s.FetchErr, "(never "+domain+")") {
			n++
		}
	}
	return fmt.Sprintf("%s of this run's sources %s taken out, and no later step of this run will read it (the report's “How this report was made” records it).",
		blockkit.Count(n), map[bool]string{true: "was", false: "were"}[n == 1])
}

// saveNeverDomain saves domain to the never list of the run's stream or
// channel and says what was saved and how to undo it.
func (f *Feature) saveNeverDomain(ctx context.Context, r *pipeline.Run, domain, user string) string {
	if id := r.Origin.StreamID; id != "" {
		if f.streams == nil {
			return "Nothing was saved for the stream: streams' domain lists are not enabled here."
		}
		name, err := f.streams.NeverDomain(ctx, id, domain, user)
		if err != nil {
			f.log.Warn("bot: saving a domain to a stream's never list failed", "stream_id", id, "err", err)
			return "I couldn't save it to the stream's never list (" + blockkit.EscapeTruncate(err.Error(), 200) + "); only this run skips it."
		}
		q := blockkit.EscapeTruncate(blockkit.OneLine(name), 80)
		return fmt.Sprintf("Saved to the never list of stream *%s*: its later digests skip %s. `/research stream show %s` shows its lists; to undo, set them again with `/research stream domains %s --never-domain …` (or `--clear`).", q, blockkit.Escape(domain), q, q)
	}
	channel := r.Origin.Channel
	if f.defaults == nil || channel == "" {
		return "Nothing was saved: this channel's defaults are not kept here, so only this run skips it."
	}
	fields, err := f.defaults.Get(ctx, channel)
	if err == nil {
		never := blockkit.DomainList(fields["never_domains"])
		if !slices.Contains(never, domain) {
			never = append(never, domain)
		}
		if len(never) > pipeline.MaxDomainRules {
			return fmt.Sprintf("Not saved: this channel's never list already holds %d sites; only this run skips it.", pipeline.MaxDomainRules)
		}
		if fields == nil {
			fields = map[string]string{}
		}
		fields["never_domains"] = strings.Join(never, ",")
		fields["only_domains"] = strings.Join(slices.DeleteFunc(blockkit.DomainList(fields["only_domains"]), func(o string) bool { return o == domain }), ",")
		err = f.defaults.Put(ctx, channel, fields)
	}
	if err != nil {
		f.log.Warn("bot: saving a domain to a channel's never list failed", "channel", channel, "err", err)
		return "I couldn't save it to this channel's never list (my storage did not answer); only this run skips it."
	}
	return fmt.Sprintf("Saved to this channel's never list: later runs in <#%s> skip %s too. To undo, open the start form (`/research` without a question) and remove it from *Never these sites*; the form remembers what you start with.", channel, blockkit.Escape(domain))
}
