package bot

import (
	"context"
	"log/slog"

	"github.com/researchbot/researchbot/checkpoints"
)

// adoptClickedMessage remembers the message a person clicked as the message
// of checkpoint inst when nothing is remembered for it. Posting a checkpoint
// and remembering where it went are two steps: a process killed between
// them (a SIGKILL, a crash) leaves a message with live buttons that nothing
// knows of. A click on it names it, so the decision that follows collapses
// it instead of leaving its buttons and posting a separate record, and a
// later offer of the checkpoint supersedes it instead of leaving two
// messages that both ask. A message already remembered is left as it is.
func (a *App) adoptClickedMessage(ctx context.Context, req *Request, inst *checkpoints.Instance, log *slog.Logger) {
	cb := req.Callback
	if cb == nil || cb.Container.MessageTs == "" || cb.Channel.ID == "" || inst == nil {
		return
	}
	known, err := lookupCheckpointMsg(ctx, a.cfg.Memory, inst.ID)
	if err != nil || known != nil {
		return
	}
	if err := rememberCheckpointMsg(ctx, a.cfg.Memory, inst.ID, checkpointMsg{Channel: cb.Channel.ID, TS: cb.Container.MessageTs, Attempt: inst.Attempt}); err != nil {
		log.Warn("bot: remembering a clicked checkpoint message failed", "err", err)
		return
	}
	log.Warn("bot: a click on a checkpoint message nothing remembered (its poster died before recording it): adopted it")
}
