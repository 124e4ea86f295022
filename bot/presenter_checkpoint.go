package bot

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// checkpointMsg is where a checkpoint's message is.
type checkpointMsg struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
	Attempt int    `json:"attempt"`
	// Closed is set once the message no longer shows buttons (decided, or
	// closed when the run ended).
	Closed bool `json:"closed,omitempty"`
	// Lost marks a message posted to ask again for a decision the store
	// lost (pipeline.Run.LostAt): while it is open, showing the same
	// checkpoint again updates it rather than posting another.
	Lost bool `json:"lost,omitempty"`
	// Decision is the decision the message shows once collapsed, so that a
	// message asking again after the store lost it can say who decided
	// what, when (if this memory outlived the loss).
	Decision *msgDecision `json:"decision,omitempty"`
	// LostDecision, on a message marked Lost, is the decision whose loss
	// it asks again for, when it was known.
	LostDecision *msgDecision `json:"lost_decision,omitempty"`
}

// msgDecision is the decision a collapsed checkpoint message shows.
type msgDecision struct {
	By     string             `json:"by"`
	Action checkpoints.Action `json:"action"`
	At     time.Time          `json:"at"`
}

// Offer posts the checkpoint message in the run's thread. A reminder
// (Attempt > 1) is posted as a new message and the earlier offer is reduced
// to a pointer to it. Offering the same attempt twice updates the message.
//
// A checkpoint offered again because a later decision was lost with the
// store's writes (pipeline.Run.LostAt) is posted as a new message at the
// bottom of the thread, saying so, and its earlier message (which shows
// the lost decision) is edited to say that decision was lost and to point
// to the new one. It is posted once: showing it again while that new
// message is open (a worker's retry, a second report of the same loss)
// updates it.
func (p *Presenter) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	log := p.log.With("run_id", r.ID, "checkpoint_id", inst.ID, "definition", inst.DefinitionID, "attempt", inst.Attempt)
	p.panel.runStatus(ctx, r) // the run waits: no status in its assistant thread
	p.endStream(ctx, r, blockkit.StreamCheckpointNote(r), false)
	p.attachDraft(ctx, r, inst)
	blocks := blockkit.RenderCheckpointAt(inst, r.RequestedBy, p.now())
	text := fmt.Sprintf("%s: your decision is needed", blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID)))
	if inst.Attempt > 1 {
		text = "Reminder — " + text
	}
	// Look before posting: a checkpoint shown again after a takeover (or a
	// retry) updates the message of its attempt instead of posting another.
	prev, err := p.lookup(ctx, inst.ID)
	if err != nil {
		return fmt.Errorf("looking up the message of checkpoint %s: %w", inst.ID, err)
	}
	lost := r.LostAt(inst)
	var facts blockkit.LostDecision
	if lost {
		facts = lostFacts(r, prev)
		blocks = blockkit.RenderLostCheckpoint(inst, r.RequestedBy, p.now(), facts)
		text = "An earlier decision was lost — " + text
	}
	text = blockkit.EscapeTruncate(text, 300)
	// asking is an open message that already asks again after the loss.
	asking := prev != nil && prev.Lost && !prev.Closed
	if prev != nil && prev.Attempt == inst.Attempt && (!lost || asking) {
		err := p.send.Update(ctx, prev.Channel, prev.TS, blocks, text)
		if err == nil {
			if prev.Closed {
				prev.Closed, prev.Decision = false, nil
				if err := p.remember(ctx, inst.ID, *prev); err != nil {
					log.Warn("bot: remembering a checkpoint message failed", "err", err)
				}
			}
			return nil
		}
		log.Warn("bot: updating an offered checkpoint failed; posting it again", "err", err)
	}
	place, thread := checkpointPlace(r)
	// Posted once: a process that died while Slack took this post leaves
	// the message, which is found and updated rather than posted again.
	channel, ts, err := p.once.post(ctx, checkpointPost(r, inst, lost), place, thread, blocks, text)
	if err != nil {
		log.Error("bot: posting a checkpoint failed", "err", err)
		return fmt.Errorf("posting checkpoint %s: %w", inst.ID, err)
	}
	// Remember the channel Slack answered with: posting to a user id lands
	// in a DM whose channel id differs, and chat.update needs the real one.
	if err := p.remember(ctx, inst.ID, checkpointMsg{Channel: channel, TS: ts, Attempt: inst.Attempt, Lost: lost, LostDecision: lostDecisionOf(lost, prev)}); err != nil {
		log.Warn("bot: remembering a checkpoint message failed", "err", err)
	}
	switch {
	case lost && prev != nil && !asking:
		p.retireLostDecision(ctx, log, inst, prev, facts, channel, ts)
	case prev != nil && prev.Attempt != inst.Attempt:
		if err := p.send.Update(ctx, prev.Channel, prev.TS, blockkit.RenderSuperseded(inst), text); err != nil {
			log.Warn("bot: reducing an earlier offer failed", "err", err)
		}
	}
	log.Info("bot: checkpoint offered", "ts", ts, "lost_decision", lost)
	return nil
}

// checkpointPost names the message of checkpoint inst's attempt (postOnce);
// the message asking again after a lost decision is another post.
func checkpointPost(r *pipeline.Run, inst *checkpoints.Instance, lost bool) postKey {
	post := fmt.Sprintf("checkpoint:%s:%d", inst.ID, inst.Attempt)
	if lost {
		post += ":lost"
		if r.LostDecision != nil {
			post += ":" + strconv.FormatInt(r.LostDecision.At.UnixMilli(), 10)
		}
	}
	return postKey{Run: r.ID, Post: post}
}

// lostFacts is what is known of the decision on inst that the store lost:
// when the loss was found, and the decision its earlier message showed if
// the message memory still has it.
func lostFacts(r *pipeline.Run, prev *checkpointMsg) blockkit.LostDecision {
	var facts blockkit.LostDecision
	if r.LostDecision != nil {
		facts.FoundAt = r.LostDecision.At
	}
	if d := lostOf(prev); d != nil {
		facts.By, facts.Action, facts.At = d.By, d.Action, d.At
	}
	return facts
}

// lostOf is the decision that was lost when the checkpoint whose message
// is prev is asked again: the one an open message asking again already
// names, or the one prev shows; nil when unknown.
func lostOf(prev *checkpointMsg) *msgDecision {
	switch {
	case prev == nil:
		return nil
	case prev.Lost && !prev.Closed:
		return prev.LostDecision
	}
	return prev.Decision
}

// lostDecisionOf is what a new message of a checkpoint remembers of the
// lost decision it asks again for (nil unless lost).
func lostDecisionOf(lost bool, prev *checkpointMsg) *msgDecision {
	if !lost {
		return nil
	}
	return lostOf(prev)
}

// retireLostDecision edits the earlier message of checkpoint inst (prev),
// which shows a decision the store lost, to say so and to point to the new
// message (channel, ts) that asks again (best effort: the new message is
// posted).
func (p *Presenter) retireLostDecision(ctx context.Context, log *slog.Logger, inst *checkpoints.Instance, prev *checkpointMsg, facts blockkit.LostDecision, channel, ts string) {
	link, err := p.send.Permalink(ctx, channel, ts)
	if err != nil {
		log.Warn("bot: no permalink for a checkpoint asked again; its earlier message points to the thread's newest", "err", err)
	}
	text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": the decision made here was lost; asked again below", 300)
	if err := p.send.Update(ctx, prev.Channel, prev.TS, blockkit.RenderLostDecisionRetired(inst, facts, link), text); err != nil {
		log.Warn("bot: marking the lost decision's message failed", "ts", prev.TS, "err", err)
	}
}

// Decided collapses the checkpoint message to a one-line record without
// buttons (posting the record when the message is unknown).
func (p *Presenter) Decided(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	blocks := blockkit.RenderDecided(inst)
	text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": decided", 300)
	msg, err := p.lookup(ctx, inst.ID)
	if err == nil && msg != nil {
		err = p.send.Update(ctx, msg.Channel, msg.TS, blocks, text)
		if err == nil {
			msg.Closed = true
			if d := inst.Decision; d != nil {
				msg.Decision = &msgDecision{By: d.By, Action: d.Action, At: d.At}
			}
			if err := p.remember(ctx, inst.ID, *msg); err != nil {
				p.log.Warn("bot: remembering a collapsed checkpoint message failed", "checkpoint_id", inst.ID, "err", err)
			}
			return nil
		}
	}
	p.log.Warn("bot: collapsing a checkpoint message failed; posting the record", "run_id", r.ID, "checkpoint_id", inst.ID, "err", err)
	place, thread := checkpointPlace(r)
	_, _, err = p.send.PostMessage(ctx, place, quiet(blocks, text), slack.MsgOptionTS(thread))
	return err
}

// checkpointPlace is where r's checkpoint messages are posted: the run's
// thread, or, when its checkpoints are private (Origin.Direct), the
// requester's direct messages with the app (chat.postMessage takes a user
// id for that conversation).
func checkpointPlace(r *pipeline.Run) (channel, thread string) {
	if r.Origin.Direct && r.RequestedBy != "" {
		return r.RequestedBy, ""
	}
	return r.Origin.Channel, r.Origin.ThreadTS
}

// closeOpenCheckpoints collapses the messages of the run's checkpoints that
// still show buttons (a run cancelled or failed while it waited), so nobody
// clicks a decision that can no longer apply. It is best-effort.
func (p *Presenter) closeOpenCheckpoints(ctx context.Context, r *pipeline.Run) {
	for i := range r.Checkpoints {
		inst := &r.Checkpoints[i]
		msg, err := p.lookup(ctx, inst.ID)
		if err != nil || msg == nil || msg.Closed {
			continue
		}
		text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": closed", 300)
		if err := p.send.Update(ctx, msg.Channel, msg.TS, blockkit.RenderEnded(inst, r.Status), text); err != nil {
			p.log.Warn("bot: closing a checkpoint message failed", "run_id", r.ID, "checkpoint_id", inst.ID, "err", err)
			continue
		}
		msg.Closed = true
		if err := p.remember(ctx, inst.ID, *msg); err != nil {
			p.log.Warn("bot: remembering a closed checkpoint message failed", "checkpoint_id", inst.ID, "err", err)
		}
	}
}

// remember stores where a checkpoint's message is.
func (p *Presenter) remember(ctx context.Context, instID string, m checkpointMsg) error {
	return rememberCheckpointMsg(ctx, p.mem, instID, m)
}

// rememberCheckpointMsg stores where a checkpoint's message is (any replica
// may look it up with lookupCheckpointMsg).
func rememberCheckpointMsg(ctx context.Context, mem SlackMemory, instID string, m checkpointMsg) error {
	b, _ := json.Marshal(m)
	return mem.RememberCheckpointMessage(ctx, instID, string(b), MessageKeyTTL)
}

// lookup finds where a checkpoint's message is; nil when unknown.
func (p *Presenter) lookup(ctx context.Context, instID string) (*checkpointMsg, error) {
	return lookupCheckpointMsg(ctx, p.mem, instID)
}

// lookupCheckpointMsg finds where a checkpoint's message was posted (any
// replica may ask); nil when unknown.
func lookupCheckpointMsg(ctx context.Context, mem SlackMemory, instID string) (*checkpointMsg, error) {
	b, found, err := mem.CheckpointMessage(ctx, instID)
	if err != nil || !found {
		return nil, err
	}
	var m checkpointMsg
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// Stranded posts RenderStranded where the checkpoint would have been shown
// (checkpointPlace) (pipeline.Presenter).
func (p *Presenter) Stranded(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	channel, thread := checkpointPlace(r)
	if channel == "" {
		return nil
	}
	blocks := blockkit.RenderStranded(inst)
	text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": could not be shown", 300)
	_, _, err := p.send.PostMessage(ctx, channel, slack.MsgOptionBlocks(blocks...), slack.MsgOptionText(text, false), slack.MsgOptionTS(thread))
	return err
}
