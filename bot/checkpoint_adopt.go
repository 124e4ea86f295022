package bot

import (
	"context"

	"github.com/researchbot/researchbot/checkpoints"
)

// AdoptClickedMessage remembers the message the person clicked as the
// message of checkpoint inst when nothing is remembered for it. Posting a
// checkpoint and remembering where it went are two steps: a process killed
// between them (a SIGKILL, a crash) leaves a message with live buttons
// that nothing knows of. A click on it names it, so the decision that
// follows collapses it instead of leaving its buttons and posting a
// separate record, and a later offer of the checkpoint supersedes it
// instead of leaving two messages that both ask. A message already
// remembered is left as it is.
//
// Where a checkpoint's message is, is the Presenter's memory (its format is
// presenter_checkpoint.go's), so the rule is stated here; the feature that
// handles the checkpoint's buttons (bot/decisions) asks it once it has
// checked the click (Request.CheckCheckpoint).
func (r *Request) AdoptClickedMessage(ctx context.Context, inst *checkpoints.Instance) {
	cb := r.Callback
	if r.app == nil || cb == nil || cb.Container.MessageTs == "" || cb.Channel.ID == "" || inst == nil {
		return
	}
	mem := r.app.cfg.Memory
	known, err := lookupCheckpointMsg(ctx, mem, inst.ID)
	if err != nil || known != nil {
		return
	}
	if err := rememberCheckpointMsg(ctx, mem, inst.ID, checkpointMsg{Channel: cb.Channel.ID, TS: cb.Container.MessageTs, Attempt: inst.Attempt}); err != nil {
		r.Log.Warn("bot: remembering a clicked checkpoint message failed", "err", err)
		return
	}
	r.Log.Warn("bot: a click on a checkpoint message nothing remembered (its poster died before recording it): adopted it")
}
