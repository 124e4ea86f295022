package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// RemindersStopped is called once when a checkpoint's reminders are used up
// (pipeline.Presenter): its message in the thread is updated in
// place to say that reminders have stopped and how to decide or skip it,
// and whom its policy names get one direct message each.
func (p *Presenter) RemindersStopped(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	var errs []error
	if err := p.Offer(ctx, r, inst); err != nil { // same attempt: an update, not a new post
		errs = append(errs, err)
	}
	to := escalationRecipients(inst.ReminderPolicy().Escalate, p.admins, r.RequestedBy)
	blocks := RenderReminderEscalation(r, inst)
	text := blockkit.EscapeTruncate(blockkit.OneLine(blockkit.FirstNonEmpty(inst.Label, inst.DefinitionID))+": still waiting for a decision; reminders have stopped", 300)
	for _, user := range to {
		err := retry429(ctx, p.clock, func() error {
			_, _, err := p.api.PostMessageContext(ctx, user, quiet(blocks, text))
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("escalate to %s: %w", user, err))
		}
	}
	p.log.Warn("bot: a checkpoint's reminders are used up; escalated", "run_id", r.ID, "checkpoint_id", inst.ID,
		"reminders", inst.Reminded, "escalate", inst.ReminderPolicy().Escalate, "recipients", len(to))
	return errors.Join(errs...)
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
