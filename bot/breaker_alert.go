package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
)

// BreakerAlerts remembers which tripped breakers were alerted about
// (*redisstore.Store).
type BreakerAlerts interface {
	// ClaimBreakerAlert reports whether the caller is the first to alert
	// about the definition's breaker since it was reset or ttl passed.
	ClaimBreakerAlert(ctx context.Context, defID string, ttl time.Duration) (bool, error)
}

// RenderBreakerAlert tells an admin that a checkpoint's breaker tripped.
func RenderBreakerAlert(d checkpoints.Definition, failures int) []slack.Block {
	return []slack.Block{
		blockkit.Section(fmt.Sprintf(":rotating_light: The checkpoint *%s* (`%s`) could not be shown %d times within %s, so its circuit breaker tripped: runs now go on without it.",
			blockkit.EscapeTruncate(d.Label, 100), blockkit.Escape(d.ID), failures, blockkit.Duration(d.BreakerWindow))),
		blockkit.ContextText(fmt.Sprintf("Reset it from my App Home (Checkpoint definitions → Reset breaker) or with `researchbot checkpoints reset %s` once the cause is fixed. Until then it closes by itself %s after the last failure.", blockkit.Escape(d.ID), blockkit.Duration(d.BreakerWindow))),
	}
}

// BreakerTripped sends each admin (SLACK_ADMINS) one direct message per
// trip (pipeline.Presenter): the claim in Alerts lasts the breaker's
// window, or until it is reset.
func (p *Presenter) BreakerTripped(ctx context.Context, d checkpoints.Definition, failures int) error {
	if p.alerts == nil || len(p.admins) == 0 {
		return nil
	}
	first, err := p.alerts.ClaimBreakerAlert(ctx, d.ID, max(d.BreakerWindow, time.Minute))
	if err != nil || !first {
		return err
	}
	blocks := RenderBreakerAlert(d, failures)
	text := fmt.Sprintf("Checkpoint %s: circuit breaker tripped", d.ID)
	var errs []error
	for _, admin := range p.admins {
		if _, err := p.send.Post(ctx, admin, "", blocks, text); err != nil {
			errs = append(errs, fmt.Errorf("alert %s: %w", admin, err))
		}
	}
	p.log.Warn("bot: a checkpoint's circuit breaker tripped; admins alerted", "definition", d.ID, "failures", failures, "admins", len(p.admins))
	return errors.Join(errs...)
}
