package bot

import (
	"context"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// DeliveryMemory remembers which Slack deliveries researchbot has taken, for
// every replica sharing it, so that a delivery Slack sends again is acted on
// once.
type DeliveryMemory interface {
	// FirstDelivery records the delivery id of kind for ttl and reports
	// whether it was not recorded already.
	FirstDelivery(ctx context.Context, kind, id string, ttl time.Duration) (bool, error)
}

// deliveryTTL is how long a delivery is remembered. Slack retries an event
// three times within minutes (at once, after 1 and after 5 minutes) and
// redelivers an unacknowledged envelope when the connection comes back.
const deliveryTTL = time.Hour

// deliveryCheckTimeout bounds the check, which comes before the work a
// person waits for (a form's answer must be in its ack within 3 s).
const deliveryCheckTimeout = 500 * time.Millisecond

// delivery identifies what a person did, whichever envelope carried it.
// Slack names every event with an event_id and every command and
// interaction with a fresh trigger_id; the same values come back when Slack
// sends it again (with a new envelope id and, for events, retry_attempt > 0).
type delivery struct {
	kind    string // slash_command, interactive, events_api
	id      string // event_id or trigger_id; the envelope id when there is none
	attempt int    // retry_attempt (events only)
	reason  string // retry_reason (events only)
}

// deliveryOf identifies the delivery of evt.
func deliveryOf(evt socketmode.Event) delivery {
	d := delivery{kind: string(evt.Type)}
	if evt.Request != nil {
		d.id, d.attempt, d.reason = evt.Request.EnvelopeID, evt.Request.RetryAttempt, evt.Request.RetryReason
	}
	var id string
	switch data := evt.Data.(type) {
	case slack.SlashCommand:
		d.kind, id = "slash_command", data.TriggerID
	case slack.InteractionCallback:
		d.kind, id = "interactive", data.TriggerID
	case slackevents.EventsAPIEvent:
		d.kind = "events_api"
		if cb, ok := data.Data.(*slackevents.EventsAPICallbackEvent); ok {
			id = cb.EventID
		}
	}
	if id != "" {
		d.id = id
	}
	return d
}

// firstDelivery reports whether d is taken here for the first time, by any
// replica. A delivery seen before is logged and counted; the caller drops
// it. When the memory cannot be reached within deliveryCheckTimeout the
// delivery is taken (and that is logged): a person's action is not lost to
// an outage, and the decisions it may lead to are compare-and-set anyway.
func (a *App) firstDelivery(ctx context.Context, d delivery) bool {
	if d.id == "" {
		return true
	}
	cctx, cancel := context.WithTimeout(ctx, deliveryCheckTimeout)
	defer cancel()
	first, err := a.deliveries.FirstDelivery(cctx, d.kind, d.id, deliveryTTL)
	switch {
	case err != nil:
		a.log.Warn("bot: could not check for a repeated delivery; handling it", "kind", d.kind, "delivery", d.id, "err", err)
		return true
	case !first:
		a.guardMetrics.duplicate(d.kind)
		a.log.Info("bot: ignored a repeated delivery", "kind", d.kind, "delivery", d.id, "retry_attempt", d.attempt, "retry_reason", d.reason)
	}
	return first
}
