package bot

import (
	"context"
	"fmt"
	"time"

	"github.com/researchbot/researchbot/bot/blockkit"
)

// Limit is a rate: at most Rate runs per Period (bursts up to Rate).
type Limit struct {
	Rate   int
	Period time.Duration
}

// PerHour is a limit of n per hour.
func PerHour(n int) Limit { return Limit{Rate: n, Period: time.Hour} }

// Take takes one event from key's budget b under l. It returns 0 when the
// event is allowed, otherwise how long to wait before asking again, in
// whole seconds and at least one, as every message refusing a request says
// it. The transport's run limits and the features' own (follow-up
// questions, steering notes) all take their events here.
func (l Limit) Take(ctx context.Context, b RateBudget, key string) (time.Duration, error) {
	wait, err := b.Allow(ctx, key, l.Rate, l.Period)
	if err != nil || wait <= 0 {
		return 0, err
	}
	return max(wait.Round(time.Second), time.Second), nil
}

// Or is l, or def when l is unset (a zero Rate or Period): how every
// configurable limit takes its default.
func (l Limit) Or(def Limit) Limit {
	if l.Rate <= 0 || l.Period <= 0 {
		return def
	}
	return l
}

// String describes the limit, e.g. "10 per 1h0m0s".
func (l Limit) String() string { return fmt.Sprintf("%d per %s", l.Rate, l.Period) }

// RateLimits bounds how many runs people may start.
type RateLimits struct {
	PerUser      Limit // per Slack user; zero (or a zero Rate): 10 per hour
	PerWorkspace Limit // per workspace; zero (or a zero Rate): 100 per hour
}

// withDefaults fills zero limits.
func (l RateLimits) withDefaults() RateLimits {
	l.PerUser, l.PerWorkspace = l.PerUser.Or(PerHour(10)), l.PerWorkspace.Or(PerHour(100))
	return l
}

// LimitedError says a request was refused by a rate limit and when to try again.
type LimitedError struct {
	Scope      string // "user" or "workspace"
	Limit      Limit
	RetryAfter time.Duration
}

// Error describes the refusal (without user data).
func (e *LimitedError) Error() string {
	return fmt.Sprintf("rate limited (%s, %s); retry after %s", e.Scope, e.Limit, e.RetryAfter)
}

// limiter applies the per-user and per-workspace limits.
type limiter struct {
	budget RateBudget
	limits RateLimits
}

// allow takes one request from the user's and the workspace's budgets
// (keys user:<team>:<user> and team:<team>). It returns a *LimitedError
// when either is spent.
func (l *limiter) allow(ctx context.Context, team, user string) error {
	for _, b := range []struct {
		scope, key string
		limit      Limit
	}{
		{"user", "user:" + team + ":" + user, l.limits.PerUser},
		{"workspace", "team:" + team, l.limits.PerWorkspace},
	} {
		wait, err := b.limit.Take(ctx, l.budget, b.key)
		if err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		if wait > 0 {
			return &LimitedError{Scope: b.scope, Limit: b.limit, RetryAfter: wait}
		}
	}
	return nil
}

// limitMessage explains a refusal and when to try again.
func limitMessage(e *LimitedError, now time.Time) string {
	who := "You have"
	if e.Scope == "workspace" {
		who = "This workspace has"
	}
	wait := e.RetryAfter
	return fmt.Sprintf("%s started as many research runs as allowed (%d per %s). Try again in %s (%s).",
		who, e.Limit.Rate, PeriodName(e.Limit.Period), blockkit.Duration(wait), blockkit.SlackDate(now.Add(wait)))
}

// PeriodName names a limit's period ("hour", "minute", or a duration), as
// the messages refusing a request over a limit say it ("20 per hour").
func PeriodName(d time.Duration) string {
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
	return blockkit.Duration(d)
}
