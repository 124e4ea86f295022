package bot

import (
	"cmp"
	"context"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// lostCheckpoint answers a click on checkpoint instID, which run r (still
// waiting for people) does not have: it belonged to a future the store lost
// (Redis restored from an older append-only file, or a failover to a
// replica that was behind). The run's current checkpoint is offered again
// in the thread, saying so, and the clicker is told where to decide.
// Nothing is changed by the click itself.
func (a *App) lostCheckpoint(ctx context.Context, r *pipeline.Run, instID string) (*pipeline.Run, []slack.Block) {
	a.log.Warn("bot: a click on a checkpoint the run no longer has: the store lost writes; offering its current checkpoint again",
		"run_id", r.ID, "checkpoint_id", instID)
	fresh, err := a.engine.OfferLostAgain(ctx, r.ID, "a click on checkpoint "+instID+", which the stored run no longer has")
	if err != nil {
		a.log.Error("bot: could not offer a checkpoint again after a loss", "run_id", r.ID, "err", err)
	}
	fresh = cmp.Or(fresh, r)
	return fresh, lostCheckpointAnswer(fresh)
}

// lostCheckpointAnswer is the answer to a click on a lost checkpoint.
func lostCheckpointAnswer(r *pipeline.Run) []slack.Block {
	return blockkit.RenderLostCheckpointClick(r)
}
