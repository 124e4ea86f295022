package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
)

// RateLimits bounds how many runs people may start per hour.
type RateLimits struct {
	UserPerHour      int // per Slack user; 0 means 10
	WorkspacePerHour int // per workspace; 0 means 100
}

// limits are RateLimits as redis_rate limits.
type limits struct {
	PerUser, PerWorkspace redis_rate.Limit
}

// withDefaults fills zero limits.
func (l RateLimits) withDefaults() limits {
	if l.UserPerHour <= 0 {
		l.UserPerHour = 10
	}
	if l.WorkspacePerHour <= 0 {
		l.WorkspacePerHour = 100
	}
	return limits{PerUser: redis_rate.PerHour(l.UserPerHour), PerWorkspace: redis_rate.PerHour(l.WorkspacePerHour)}
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
	limits limits
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
