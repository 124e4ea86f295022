package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// "Never use a site…" at the source review: the domain leaves the run at
// once (pipeline.Engine.NeverDomain) and is saved to the never list of the
// run's stream (a digest) or of its channel (the start form's "Never these
// sites", which every run started in the channel applies).

// DomainExcluder takes a domain out of a run at its source review; it is
// part of Engine (the engine always does).
type DomainExcluder interface {
	NeverDomain(ctx context.Context, instanceID, by, domain string) (*pipeline.Run, string, error)
}

// StreamDomainSaver adds a domain to a stream's never list (the assembly
// passes the stream service).
type StreamDomainSaver interface {
	NeverDomain(ctx context.Context, streamID, domain, actor string) (name string, err error)
}

// registerNeverDomain routes the source review's "Never use a site…" menu.
func (a *App) registerNeverDomain(r *Routes) {
	r.Action(blockkit.ActionNeverDomain, a.onNeverDomain)
}

// onNeverDomain handles a choice in the "Never use a site…" menu: only the
// requester and the channel's approvers may; the person is told what was
// excluded, what was saved where, and how to undo it.
func (a *App) onNeverDomain(ctx context.Context, req *Request) error {
	act, user := req.Action, req.UserID
	instID, ok := blockkit.NeverDomainInstance(act.BlockID)
	if !ok || act.SelectedOption.Value == "" {
		return Tell(blockkit.RenderError("This menu doesn't belong to any source review I know.", "Nothing was changed."), "Nothing was changed")
	}
	log := req.Log.With("checkpoint_id", instID)
	r, _, problem := a.check(ctx, instID, user)
	if problem != nil {
		log.Info("bot: never-use choice refused")
		return Tell(problem, "Nothing was changed")
	}
	run, domain, err := a.engine.NeverDomain(ctx, instID, user, act.SelectedOption.Value)
	switch {
	case errors.Is(err, pipeline.ErrNotCurrent), errors.Is(err, pipeline.ErrNotSourceReview):
		return Tell(superseded(r), "Nothing was changed")
	case err != nil && run == nil && domain == "":
		return Tell(blockkit.RenderError("I can't use that as a domain: "+blockkit.EscapeTruncate(err.Error(), 300), "Nothing was changed."), "Nothing was changed")
	case err != nil:
		return fmt.Errorf("never use %s in run %s: %w", domain, r.ID, err)
	}
	log.Info("bot: a domain excluded at the source review", "run_id", run.ID, "domain", domain)
	if inst := run.Current(); inst != nil && req.Callback != nil && req.Callback.Container.MessageTs != "" {
		blocks := blockkit.RenderCheckpoint(inst, run.RequestedBy)
		text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": your decision is needed", 300)
		if err := a.send.Update(ctx, req.Callback.Container.ChannelID, req.Callback.Container.MessageTs, blocks, text); err != nil {
			log.Warn("bot: showing the source review without the excluded site failed", "err", err)
		}
	}
	saved := a.saveNeverDomain(ctx, run, domain, user)
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
func (a *App) saveNeverDomain(ctx context.Context, r *pipeline.Run, domain, user string) string {
	if id := r.Origin.StreamID; id != "" {
		if a.cfg.Streams.Domains == nil {
			return "Nothing was saved for the stream: streams' domain lists are not enabled here."
		}
		name, err := a.cfg.Streams.Domains.NeverDomain(ctx, id, domain, user)
		if err != nil {
			a.log.Warn("bot: saving a domain to a stream's never list failed", "stream_id", id, "err", err)
			return "I couldn't save it to the stream's never list (" + blockkit.EscapeTruncate(err.Error(), 200) + "); only this run skips it."
		}
		q := blockkit.EscapeTruncate(blockkit.OneLine(name), 80)
		return fmt.Sprintf("Saved to the never list of stream *%s*: its later digests skip %s. `/research stream show %s` shows its lists; to undo, set them again with `/research stream domains %s --never-domain …` (or `--clear`).", q, blockkit.Escape(domain), q, q)
	}
	channel := r.Origin.Channel
	if a.cfg.Start.Defaults == nil || channel == "" {
		return "Nothing was saved: this channel's defaults are not kept here, so only this run skips it."
	}
	f, err := a.cfg.Start.Defaults.Get(ctx, channel)
	if err == nil {
		never := blockkit.DomainList(f["never_domains"])
		if !slices.Contains(never, domain) {
			never = append(never, domain)
		}
		if len(never) > pipeline.MaxDomainRules {
			return fmt.Sprintf("Not saved: this channel's never list already holds %d sites; only this run skips it.", pipeline.MaxDomainRules)
		}
		if f == nil {
			f = map[string]string{}
		}
		f["never_domains"] = strings.Join(never, ",")
		f["only_domains"] = strings.Join(slices.DeleteFunc(blockkit.DomainList(f["only_domains"]), func(o string) bool { return o == domain }), ",")
		err = a.cfg.Start.Defaults.Put(ctx, channel, f)
	}
	if err != nil {
		a.log.Warn("bot: saving a domain to a channel's never list failed", "channel", channel, "err", err)
		return "I couldn't save it to this channel's never list (my storage did not answer); only this run skips it."
	}
	return fmt.Sprintf("Saved to this channel's never list: later runs in <#%s> skip %s too. To undo, open the start form (`/research` without a question) and remove it from *Never these sites*; the form remembers what you start with.", channel, blockkit.Escape(domain))
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
