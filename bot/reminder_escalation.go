package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Escalation DMs are made reliable without being posted twice: each is
// retried in place while Slack's failure is transient (a rate limit, a 5xx,
// a network failure, internal_error, fatal_error, service_unavailable,
// request_timeout), backing off on the Presenter's clock, and each one sent
// is remembered (SlackMemory.Escalated, per checkpoint and recipient), so a second
// call — another replica, a retry — sends only the ones still missing.
const (
	// escalationAttempts bounds the posts of one escalation DM; the waits
	// between them double from escalationBackoff (1+2+4+8 s in all).
	escalationAttempts = 5
	escalationBackoff  = time.Second
)

// RemindersStopped is called once when a checkpoint's reminders are used up
// (pipeline.Presenter): its message in the thread is updated in
// place to say that reminders have stopped and how to decide or skip it,
// and whom its policy names get one direct message each, retried while
// Slack's failure is transient and never posted twice to one person.
func (p *Presenter) RemindersStopped(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	var errs []error
	if err := p.Offer(ctx, r, inst); err != nil { // same attempt: an update, not a new post
		errs = append(errs, err)
	}
	to := escalationRecipients(inst.ReminderPolicy().Escalate, p.admins, r.RequestedBy)
	blocks := RenderReminderEscalation(r, inst)
	text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": still waiting for a decision; reminders have stopped", 300)
	for _, user := range to {
		if err := p.escalateTo(ctx, r, inst, user, blocks, text); err != nil {
			errs = append(errs, fmt.Errorf("escalate to %s: %w", user, err))
		}
	}
	p.log.Warn("bot: a checkpoint's reminders are used up; escalated", "run_id", r.ID, "checkpoint_id", inst.ID,
		"reminders", inst.Reminded, "escalate", inst.ReminderPolicy().Escalate, "recipients", len(to))
	return errors.Join(errs...)
}

// escalateTo posts the escalation DM to user unless it was posted already,
// retrying a transient failure escalationAttempts times in all.
func (p *Presenter) escalateTo(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance, user string, blocks []slack.Block, text string) error {
	if sent, err := p.mem.Escalated(ctx, r.ID, inst.ID, user); err != nil {
		// Better a DM twice than none: post it.
		p.log.Warn("bot: reading which escalation DMs were sent failed; posting", "run_id", r.ID, "checkpoint_id", inst.ID, "err", err)
	} else if sent {
		return nil
	}
	wait := escalationBackoff
	for attempt := 1; ; attempt++ {
		_, err := p.send.Post(ctx, user, "", blocks, text)
		if err == nil {
			break
		}
		if !transient(err) || attempt >= escalationAttempts || ctx.Err() != nil {
			return err
		}
		p.log.Info("bot: an escalation DM failed; trying again", "run_id", r.ID, "checkpoint_id", inst.ID,
			"attempt", attempt, "in", wait, "error", SlackErrorCode(err))
		t := p.clock.NewTimer(wait, "bot", "escalation")
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
		wait *= 2
	}
	if err := p.mem.RememberEscalated(ctx, r.ID, inst.ID, user, MessageKeyTTL); err != nil {
		p.log.Warn("bot: remembering a sent escalation DM failed", "run_id", r.ID, "checkpoint_id", inst.ID, "err", err)
	}
	return nil
}

// escalationRecipients are the Slack users an escalation goes to: the
// admins (the requester when there are none), the requester, or nobody.
func escalationRecipients(e checkpoints.Escalation, admins []string, requester string) []string {
	var to []string
	switch e {
	case checkpoints.EscalateAdmins:
		to = slices.Clone(admins)
		if len(to) == 0 && blockkit.IsUserID(requester) {
			to = []string{requester}
		}
	case checkpoints.EscalateRequester:
		if blockkit.IsUserID(requester) {
			to = []string{requester}
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(to)))
}

// RenderReminderEscalation is the direct message of an escalation: which
// checkpoint of which run has waited through its reminders, where, and how
// to decide or skip it.
func RenderReminderEscalation(r *pipeline.Run, inst *checkpoints.Instance) []slack.Block {
	where := "in run " + blockkit.RunRef(r.ID)
	if r.Origin.Channel != "" {
		where += " in " + blockkit.ChannelRef(r.Origin.Channel)
	}
	who := "its requester"
	if blockkit.IsUserID(r.RequestedBy) {
		who = fmt.Sprintf("<@%s>", r.RequestedBy)
	}
	return []slack.Block{
		blockkit.Section(fmt.Sprintf(":bell: The checkpoint *%s* %s has waited for a decision since %s, through %d reminders — _%s_",
			blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID)), 100), where,
			blockkit.SlackDate(inst.CreatedAt), inst.Reminded, blockkit.EscapeTruncate(blockkit.OneLine(r.Question), 150))),
		blockkit.ContextText(fmt.Sprintf("I won't remind anyone again; the run keeps waiting. %s or an approver can decide in the thread or my App Home; an admin can skip it from the App Home or with `researchbot checkpoints skip %s %s`.",
			who, blockkit.Escape(r.ID), blockkit.Escape(inst.ID))),
	}
}
