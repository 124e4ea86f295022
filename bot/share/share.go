// Package share is sharing a report from the assistant panel to a channel,
// a feature of the bot. A report written in an assistant thread is for the
// person alone, and may use what only they can read (a private channel's
// message found by workspace search, a file shared in their DM). Under it
// the Presenter offers "Share to this channel" (the channel the person was
// viewing) and "Choose a channel…" (a form). A share is made only by the
// person who asked, and only when every source the run used is one the
// channel's members could all read (pipeline.Run.ShareableTo): then the
// summary and the report file are posted in the channel and the share is
// recorded in the assistant thread (who, where, when). Otherwise nothing is
// posted, and the person is told how many sources the channel could not
// read — never which — and to ask in that channel instead.
//
// It plugs into the transport (package bot) through the routes it
// registers and renders with bot/blockkit; bot does not import it: the
// assembly (internal/app/roles) builds a Feature and lists it in
// bot.Config.Features.
package share

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// shareLockTTL bounds how long a share in progress keeps a second click on
// the same report and channel from posting it again (a sixtieth of the
// hour bot remembers a delivery for, as when this lived in bot).
const shareLockTTL = time.Minute

// Engine is what the feature needs of the research engine
// (*pipeline.Engine).
type Engine interface {
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
}

// Memory is what the feature remembers for every replica
// (redisstore.SlackMemory, the App's bot.SlackMemory): the shares made and
// in progress, and the assistant threads the App remembers.
type Memory interface {
	bot.AssistantThreads
	// SharedSummary returns the ts of a run's report shared to channel.
	SharedSummary(ctx context.Context, runID, channel string) (ts string, found bool, err error)
	RememberSharedSummary(ctx context.Context, runID, channel, ts string, ttl time.Duration) error
	// StartShare records, for ttl, that a run's report is being shared to
	// channel and reports whether it was not being shared already.
	StartShare(ctx context.Context, runID, channel string, ttl time.Duration) (first bool, err error)
}

// Config configures a Feature. Engine, Memory and the Kit's Sender
// are required.
type Config struct {
	Engine Engine
	Memory Memory
	// Kit is the transport's Sender, metrics, logger and clock (it dates
	// the shares' records).
	bot.Kit
}

// Feature shares reports from the assistant panel to channels.
type Feature struct {
	engine Engine
	mem    Memory
	send   *bot.Sender
	log    *slog.Logger
	clock  quartz.Clock
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: sharing needs",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil},
		bot.Need{Name: "a memory", Present: cfg.Memory != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, mem: cfg.Memory, send: kit.Sender, log: kit.Logger, clock: kit.Clock}, nil
}

// Register routes the share buttons and the channel form.
func (f *Feature) Register(r *bot.Routes) {
	r.Action(blockkit.ActionShare, f.onShare)
	r.Action(blockkit.ActionShareOther, f.onShareOther)
	r.View(blockkit.ShareCallback, f.onShareSubmit)
}

// onShare shares a report to the channel its button names.
func (f *Feature) onShare(ctx context.Context, req *bot.Request) error {
	runID, channel, ok := blockkit.ParseShareValue(req.Action.Value)
	if !ok {
		req.Log.Warn("bot: a share click with a value I did not write", "value", req.Action.Value)
		return bot.Tell(blockkit.RenderError("I couldn't read that click.", "Nothing was shared."), "Not shared")
	}
	return f.shareReport(ctx, req, runID, channel)
}

// onShareOther opens the form choosing the channel, pre-set to the one the
// person views beside the panel now.
func (f *Feature) onShareOther(ctx context.Context, req *bot.Request) error {
	runID := req.Action.Value
	r, err := f.shareable(ctx, req, runID)
	if err != nil {
		return err
	}
	viewing, err := bot.ViewedChannel(ctx, f.mem, r.Origin.Channel, r.Origin.ThreadTS)
	if err != nil {
		f.log.Warn("bot: recalling an assistant thread failed", "channel", r.Origin.Channel, "err", err)
	}
	if _, err := f.send.OpenView(ctx, req.TriggerID, blockkit.ShareModal(runID, viewing)); err != nil {
		return fmt.Errorf("opening the share form of run %s: %w", runID, err)
	}
	return nil
}

// onShareSubmit shares a report to the channel chosen in the form. A
// refusal is shown in the form; once the checks pass the form closes and
// what follows is answered in the thread.
func (f *Feature) onShareSubmit(ctx context.Context, req *bot.Request) error {
	v := req.Callback.View
	var channel string
	if v.State != nil {
		channel = v.State.Values[blockkit.ShareChannelBlock][blockkit.ValueActionID].SelectedConversation
	}
	if channel == "" {
		req.Ack(slack.NewErrorsViewSubmissionResponse(map[string]string{blockkit.ShareChannelBlock: "Choose a channel."}))
		return nil
	}
	return f.shareReport(ctx, req, v.PrivateMetadata, channel)
}

// shareable loads run runID and checks that req's person may share its
// report: they asked for it, and it is finished. Answers go to its thread.
func (f *Feature) shareable(ctx context.Context, req *bot.Request, runID string) (*pipeline.Run, error) {
	r, err := f.engine.Load(ctx, runID)
	switch {
	case errors.Is(err, pipeline.ErrNotFound):
		return nil, bot.Tell(blockkit.RenderError("I couldn't find run "+blockkit.RunRef(runID)+" any more.", "Nothing was shared."), "Not shared")
	case err != nil:
		return nil, fmt.Errorf("loading run %s to share it: %w", runID, err)
	}
	if req.Callback != nil && req.Callback.Type == slack.InteractionTypeViewSubmission {
		req.Channel, req.Thread = r.Origin.Channel, r.Origin.ThreadTS
	}
	if req.UserID != r.RequestedBy {
		req.Log.Info("bot: a share refused: not the requester", "run_id", r.ID, "user", req.UserID)
		return nil, bot.Tell(blockkit.RenderError(blockkit.ShareNotRequester(r.RequestedBy), "Nothing was shared."), "Not shared")
	}
	if r.Report == nil || r.Status != pipeline.StatusCompleted {
		return nil, bot.Tell(blockkit.RenderError("Run "+blockkit.RunRef(r.ID)+" has no finished report to share.", "Nothing was shared."), "Not shared")
	}
	return r, nil
}

// shareReport shares run runID's report to channel after the checks:
// the requester, a finished report, the audience boundary, not shared
// there already. It posts the summary, attaches the file in its thread and
// records the share in the run's thread.
func (f *Feature) shareReport(ctx context.Context, req *bot.Request, runID, channel string) error {
	r, err := f.shareable(ctx, req, runID)
	if err != nil {
		return err
	}
	if ok, withheld := r.ShareableTo(pipeline.ChannelAudience(channel)); !ok {
		req.Log.Info("bot: a share refused: the channel could not read every source", "run_id", r.ID, "channel", channel, "withheld", withheld)
		return bot.Tell(blockkit.RenderError(blockkit.ShareRefusal(channel, withheld), "Nothing was shared."), "Not shared")
	}
	if _, done, err := f.mem.SharedSummary(ctx, r.ID, channel); err != nil {
		return fmt.Errorf("recalling the shares of run %s: %w", r.ID, err)
	} else if done {
		return bot.Tell(blockkit.RenderError("This report is already shared to "+blockkit.ChannelRef(channel)+".", "Nothing was posted again."), "Already shared")
	}
	if first, err := f.mem.StartShare(ctx, r.ID, channel, shareLockTTL); err != nil {
		return fmt.Errorf("recording a share of run %s: %w", r.ID, err)
	} else if !first {
		return bot.Tell(blockkit.RenderError("I'm sharing this report to "+blockkit.ChannelRef(channel)+" already.", "Nothing was posted again."), "Already sharing")
	}
	req.Ack(nil) // the form closes: what follows is answered in the thread
	req.Channel, req.Thread = r.Origin.Channel, r.Origin.ThreadTS
	ts, err := f.send.Post(ctx, channel, "", blockkit.RenderSharedReport(r, req.UserID), blockkit.ReportText(r))
	if err != nil {
		switch code := bot.SlackErrorCode(err); code {
		case "not_in_channel", "channel_not_found":
			return bot.Tell(blockkit.RenderError(blockkit.ShareNotInChannel(channel), "Nothing was shared."), "Not shared")
		case "is_archived":
			return bot.Tell(blockkit.RenderError(blockkit.ChannelRef(channel)+" is archived.", "Nothing was shared; choose another channel."), "Not shared")
		default:
			return fmt.Errorf("posting the shared report of run %s: %w", r.ID, err)
		}
	}
	if err := f.mem.RememberSharedSummary(ctx, r.ID, channel, ts, bot.MessageKeyTTL); err != nil {
		req.Log.Warn("bot: remembering a share failed", "run_id", r.ID, "err", err)
	}
	if md := r.Report.Markdown; strings.TrimSpace(md) != "" {
		if _, err := f.send.UploadFile(ctx, slack.UploadFileParameters{
			Content: md, FileSize: len(md), Filename: blockkit.ReportFileName(r.ID), Title: blockkit.ReportFileTitle(r),
			Channel: channel, ThreadTimestamp: ts,
		}); err != nil {
			req.Log.Error("bot: attaching the shared report's file failed", "run_id", r.ID, "err", err)
			req.Reply(ctx, blockkit.RenderError("I shared the summary to "+blockkit.ChannelRef(channel)+" but couldn't attach the report file ("+blockkit.Escape(bot.SlackErrorCode(err))+").", "The file is in this thread; share it there by hand if you need to."), "File not attached")
		}
	}
	if _, err := f.send.Post(ctx, r.Origin.Channel, r.Origin.ThreadTS, blockkit.RenderShareRecord(req.UserID, channel, f.clock.Now()), blockkit.ShareRecordText(channel)); err != nil {
		req.Log.Warn("bot: recording a share in the thread failed", "run_id", r.ID, "err", err)
	}
	req.Log.Info("bot: report shared", "run_id", r.ID, "channel", channel, "user", req.UserID)
	return nil
}
