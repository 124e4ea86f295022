package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// RateLimits bounds how many runs people may start.
type RateLimits struct {
	PerUser      redis_rate.Limit // per Slack user; zero (or a zero Rate): 10 per hour
	PerWorkspace redis_rate.Limit // per workspace; zero (or a zero Rate): 100 per hour
}

// withDefaults fills zero limits.
func (l RateLimits) withDefaults() RateLimits {
	if l.PerUser.Rate <= 0 || l.PerUser.Period <= 0 {
		l.PerUser = redis_rate.PerHour(10)
	}
	if l.PerWorkspace.Rate <= 0 || l.PerWorkspace.Period <= 0 {
		l.PerWorkspace = redis_rate.PerHour(100)
	}
	return l
}

// LimitedError says a request was refused by a rate limit and when to try again.
type LimitedError struct {
	Scope      string // "user" or "workspace"
	Limit      redis_rate.Limit
	RetryAfter time.Duration
}

// Error describes the refusal (without user data).
func (e *LimitedError) Error() string {
	return fmt.Sprintf("rate limited (%s, %s); retry after %s", e.Scope, e.Limit, e.RetryAfter)
}

// limiter applies the per-user and per-workspace limits.
type limiter struct {
	rl     *redis_rate.Limiter
	limits RateLimits
}

// allow takes one request from the user's and the workspace's budgets. It
// returns a *LimitedError when either is spent.
func (l *limiter) allow(ctx context.Context, team, user string) error {
	res, err := l.rl.Allow(ctx, "rb:slack:rl:user:"+team+":"+user, l.limits.PerUser)
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if res.Allowed == 0 {
		return &LimitedError{Scope: "user", Limit: l.limits.PerUser, RetryAfter: res.RetryAfter}
	}
	res, err = l.rl.Allow(ctx, "rb:slack:rl:team:"+team, l.limits.PerWorkspace)
	if err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if res.Allowed == 0 {
		return &LimitedError{Scope: "workspace", Limit: l.limits.PerWorkspace, RetryAfter: res.RetryAfter}
	}
	return nil
}

// limitMessage explains a refusal and when to try again.
func limitMessage(e *LimitedError, now time.Time) string {
	who := "You have"
	if e.Scope == "workspace" {
		who = "This workspace has"
	}
	wait := e.RetryAfter.Round(time.Second)
	if wait < time.Second {
		wait = time.Second
	}
	return fmt.Sprintf("%s started as many research runs as allowed (%d per %s). Try again in %s (%s).",
		who, e.Limit.Rate, periodName(e.Limit.Period), duration(wait), slackDate(now.Add(wait)))
}

// periodName names a limit's period.
func periodName(d time.Duration) string {
	switch d {
	case time.Second:
		return "second"
	case time.Minute:
		return "minute"
	case time.Hour:
		return "hour"
	case 24 * time.Hour:
		return "day"
	}
	return duration(d)
}
