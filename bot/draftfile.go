package bot

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// The draft in the thread: when the draft review is offered, the draft is
// attached to the run's thread as a Markdown file, so the reviewer reads
// what they approve; each revision replaces the file of the previous one.

// Fields of what SlackMemory.DraftFile remembers of a run: the draft
// version attached and its file id.
const (
	draftFileVersion = "version"
	draftFileID      = "file"
)

// DraftFileComment is the one line posted with a draft's file: which draft
// it is and what changed since the previous one. It is mrkdwn, escaped.
func DraftFileComment(d pipeline.Draft) string {
	line := fmt.Sprintf(":page_facing_up: Draft %d — the whole draft to review, as a Markdown file.", d.Version)
	if d.Diff != nil {
		line = fmt.Sprintf(":page_facing_up: Draft %d replaces draft %d. Changes: %s", d.Version, d.Version-1, blockkit.Escape(d.Diff.Summary()))
	}
	return blockkit.Truncate(line, 1000)
}

// attachDraft attaches the run's latest draft to its thread when inst is a
// draft review and that draft is not attached yet, then deletes the file of
// the draft it replaces. It is best-effort: the checkpoint message is what
// the decision needs, so failures are logged.
func (p *Presenter) attachDraft(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) {
	if inst.DefinitionID != checkpoints.DraftReview || len(r.Drafts) == 0 || r.Origin.Channel == "" {
		return
	}
	log := p.log.With("run_id", r.ID)
	d := r.Drafts[len(r.Drafts)-1]
	had, err := p.mem.DraftFile(ctx, r.ID)
	if err != nil {
		log.Warn("bot: reading which draft is attached failed", "err", err)
		return
	}
	if had[draftFileVersion] == strconv.Itoa(d.Version) {
		return // a reminder, or the same offer shown again
	}
	md := pipeline.BuildReport(r, time.Time{}).Markdown
	file, err := p.send.UploadFile(ctx, slack.UploadFileParameters{
		Content:         md,
		FileSize:        len(md),
		Filename:        fmt.Sprintf("draft-%s-v%d.md", blockkit.FileSafe(r.ID), d.Version),
		Title:           blockkit.Truncate(blockkit.OneLine(fmt.Sprintf("Draft %d: %s", d.Version, blockkit.FirstNonEmpty(d.Title, "Research report"))), 200),
		InitialComment:  DraftFileComment(d),
		Channel:         r.Origin.Channel,
		ThreadTimestamp: r.Origin.ThreadTS,
	})
	if err != nil {
		log.Warn("bot: attaching the draft failed", "version", d.Version, "err", err)
		return
	}
	if err := p.mem.RememberDraftFile(ctx, r.ID, draftFileVersion, strconv.Itoa(d.Version), MessageKeyTTL); err != nil {
		log.Warn("bot: remembering the attached draft failed", "err", err)
	}
	if err := p.mem.RememberDraftFile(ctx, r.ID, draftFileID, file.ID, MessageKeyTTL); err != nil {
		log.Warn("bot: remembering the attached draft failed", "err", err)
	}
	if old := had[draftFileID]; old != "" && old != file.ID {
		if err := p.send.DeleteFile(ctx, old); err != nil {
			log.Warn("bot: deleting the previous draft's file failed", "file", old, "err", err)
		}
	}
}
