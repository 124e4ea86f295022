package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Fields of the rb:slack:final:<run> hash, which records how far the final
// post of a run got, so Finished can be called again (the engine retries it
// until it succeeds) without posting anything twice.
const (
	finalSummary = "summary" // ts of the summary message
	finalFile    = "file"    // "uploaded", or "failed" when retrying cannot help
	finalNotice  = "notice"  // "1" once the upload-failure notice was posted
	finalShare   = "share"   // "1" once the share offer was posted (bot/share)
	finalDone    = "done"    // "1" once everything was shown
)

// Finished brings the progress message to its final state, posts the
// report summary (or the failure or cancellation) in the thread, attaches
// the full Markdown report, collapses a checkpoint message that still shows
// buttons and marks the root message.
//
// It is idempotent: what it has shown is recorded in Redis step by step, so
// a call after a failure (or a crash) does only what is left, and a call
// after a complete success posts nothing.
func (p *Presenter) Finished(ctx context.Context, r *pipeline.Run) error {
	log := p.log.With("run_id", r.ID, "status", r.Status)
	p.panel.runStatus(ctx, r) // the run has ended: no status in its assistant thread
	p.mu.Lock()
	if st := p.progress[r.ID]; st != nil {
		p.stopFlushLocked(st)
		delete(p.progress, r.ID)
	}
	p.mu.Unlock()
	done, err := p.mem.FinalPost(ctx, r.ID)
	if err != nil {
		// Without the record, posting could repeat what an earlier call posted.
		return fmt.Errorf("reading what was shown of run %s: %w", r.ID, err)
	}
	if done[finalDone] != "" {
		return nil
	}
	mark := func(field, value string) error {
		return p.mem.RememberFinalPost(ctx, r.ID, field, value, MessageKeyTTL)
	}
	// A run without a thread (a stream digest posted to its channel) is a new
	// message in the channel, with the file in that message's thread.
	thread := r.Origin.ThreadTS
	if thread != "" && !p.endStream(ctx, r, blockkit.StreamSummary(r), true) {
		if err := p.sendProgress(ctx, false, r.ID, r.Origin.Channel, thread, blockkit.RenderProgress(r, p.now()), blockkit.ProgressText(r)); err != nil {
			log.Warn("bot: final progress update failed", "err", err)
		}
	}
	summaryTS := done[finalSummary]
	if summaryTS == "" {
		var err error
		_, summaryTS, err = p.once.post(ctx, postKey{Run: r.ID, Post: "outcome"}, r.Origin.Channel, thread, blockkit.RenderFinished(r), blockkit.ReportText(r))
		if err != nil {
			log.Error("bot: posting the report failed", "err", err)
			return fmt.Errorf("posting the result of run %s: %w", r.ID, err)
		}
		if err := mark(finalSummary, summaryTS); err != nil {
			return fmt.Errorf("recording the result message of run %s: %w", r.ID, err)
		}
	}
	thread = cmp.Or(thread, summaryTS)
	if r.Report != nil && strings.TrimSpace(r.Report.Markdown) != "" && done[finalFile] == "" {
		if err := p.upload(ctx, r, thread); err != nil {
			if transient(err) {
				log.Warn("bot: uploading the report failed; it will be tried again", "err", err)
				return fmt.Errorf("uploading the report of run %s: %w", r.ID, err)
			}
			// Trying again cannot help (a missing scope, an archived
			// channel): say so once and finish without the file.
			log.Error("bot: uploading the report failed", "err", err)
			if done[finalNotice] == "" {
				if _, perr := p.send.Post(ctx, r.Origin.Channel, thread, blockkit.RenderError("I couldn't attach the full report file ("+blockkit.Escape(SlackErrorCode(err))+"). The summary above is complete; ask whoever runs researchbot to check the bot's file permissions (files:write).", ""), "Report upload failed"); perr == nil {
					_ = mark(finalNotice, "1")
				}
			}
			if err := mark(finalFile, "failed"); err != nil {
				return fmt.Errorf("recording the failed upload of run %s: %w", r.ID, err)
			}
		} else if err := mark(finalFile, "uploaded"); err != nil {
			return fmt.Errorf("recording the upload of run %s: %w", r.ID, err)
		}
	}
	if done[finalShare] == "" && p.offerShare(ctx, r) {
		if err := mark(finalShare, "1"); err != nil {
			log.Warn("bot: recording the share offer failed", "err", err)
		}
	}
	p.closeOpenCheckpoints(ctx, r)
	// Only a /research run's thread starts with its root message; a digest's
	// thread (a stream's creation thread, for a dry run) does not.
	if r.Origin.ThreadTS != "" && (r.Origin.Kind == OriginKind || r.Origin.Kind == "") {
		root := blockkit.RootInfo{Question: r.Question, RunID: r.ID, RequestedBy: r.RequestedBy, Mode: r.Mode, Depth: r.Depth, Status: r.Status}
		if err := p.send.Update(ctx, r.Origin.Channel, r.Origin.ThreadTS, blockkit.RenderRoot(root), blockkit.RootText(root)); err != nil {
			log.Warn("bot: marking the root message failed", "err", err)
		}
	}
	if err := mark(finalDone, "1"); err != nil {
		log.Warn("bot: recording that the run was shown failed", "err", err)
	}
	log.Info("bot: run finished")
	return nil
}

// upload attaches the full Markdown report to the thread.
func (p *Presenter) upload(ctx context.Context, r *pipeline.Run, thread string) error {
	_, err := p.send.UploadFile(ctx, slack.UploadFileParameters{
		Content:         r.Report.Markdown,
		FileSize:        len(r.Report.Markdown),
		Filename:        blockkit.ReportFileName(r.ID),
		Title:           blockkit.ReportFileTitle(r),
		Channel:         r.Origin.Channel,
		ThreadTimestamp: thread,
	})
	return err
}

// transient reports whether a failed Web API call may succeed when tried
// again: rate limits, server errors, timeouts and network failures are;
// Slack's refusals (missing_scope, not_in_channel, is_archived, …) are not.
func transient(err error) bool {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		return true
	case errors.As(err, &sc):
		return sc.Retryable()
	case errors.As(err, &se):
		switch se.Err {
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited":
			return true
		}
		return false
	}
	return true
}

// offerShare posts, under a report finished in an assistant thread, the
// offer to share it to a channel (bot/share), naming the channel the person
// views beside the panel. It reports whether it posted it.
func (p *Presenter) offerShare(ctx context.Context, r *pipeline.Run) bool {
	if r.Status != pipeline.StatusCompleted || r.Report == nil || r.Origin.Kind != OriginKind || r.Origin.ThreadTS == "" {
		return false
	}
	t, ok := p.panel.Thread(ctx, r.Origin.Channel, r.Origin.ThreadTS)
	if !ok {
		return false
	}
	if _, err := p.send.Post(ctx, r.Origin.Channel, r.Origin.ThreadTS, blockkit.RenderShareOffer(r.ID, t.Context), blockkit.ShareOfferText); err != nil {
		p.log.Warn("bot: offering to share the report failed", "run_id", r.ID, "err", err)
		return false
	}
	return true
}
