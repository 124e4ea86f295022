package redisstore

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// RateLimiter keeps rate budgets in Redis with the generic cell rate
// algorithm (go-redis/redis_rate), so every replica sharing the Redis shares
// them. One RateLimiter serves one area (llm, search, slack); its budgets
// live under rb:rate:<area>:<key> (see the package's key table).
//
// It implements the rate-budget ports of llm, search and bot.
//
// Calls for one budget that arrive while another is on its way to Redis
// take their events together, in one call (groupCommit).
type RateLimiter struct {
	limiter *redis_rate.Limiter
	area    string
	batches groupCommit[rateReply]
}

// NewRateLimiter returns the rate budgets of area on rdb.
func NewRateLimiter(rdb redis.UniversalClient, area string) *RateLimiter {
	return &RateLimiter{limiter: redis_rate.NewLimiter(rateKeys{UniversalClient: rdb, sent: &sentScripts{}}), area: area}
}

// Allow takes one event from key's budget of n events per period (bursts
// of up to n). It returns 0 when the event is allowed, otherwise how long
// to wait before asking again (at least a millisecond). n <= 0 or per <= 0
// means no limit, and Redis is not asked.
func (l *RateLimiter) Allow(ctx context.Context, key string, n int, per time.Duration) (time.Duration, error) {
	return l.AllowN(ctx, key, 1, n, per)
}

// AllowN takes events events at once from key's budget of n events per
// period, all or none: it returns 0 when all were taken, otherwise how
// long to wait before asking again (at least a millisecond), and none was
// taken. More events than the budget holds (events > n) can never be taken
// at once: they are refused with a wait of per, and Redis is not asked.
// n <= 0 or per <= 0 means no limit, and Redis is not asked; so does
// events <= 0.
//
// Its events join the batch of the calls for the same budget (groupCommit),
// as one call's would: when the batch does not fit, it asks again alone for
// its own events.
func (l *RateLimiter) AllowN(ctx context.Context, key string, events, n int, per time.Duration) (time.Duration, error) {
	if n <= 0 || per <= 0 || events <= 0 {
		return 0, nil
	}
	if events > n {
		return per, nil
	}
	limit := redis_rate.Limit{Rate: n, Burst: n, Period: per}
	budget := rateBudgetName(l.area, key, n, per)
	var alone redis_rate.Result // the reply to a batch of this call alone
	b, _, lead, err := l.batches.do(ctx, budget, func(r *rateReply) int { r.events += events; return 0 },
		func(callCtx context.Context, _ int, r *rateReply) {
			res, err := l.limiter.AllowN(callCtx, l.area+":"+key, limit, r.events)
			r.allowed, r.err = err == nil && res.Allowed == r.events, err
			if res != nil {
				alone = *res
			}
		})
	if err != nil {
		return 0, fmt.Errorf("rate limit %s:%s: %w", l.area, key, err)
	}
	if lead && b.calls == 1 && b.data.err == nil && alone.Allowed == 0 {
		return max(alone.RetryAfter, time.Millisecond), nil
	}
	switch {
	case b.data.err != nil:
		return 0, fmt.Errorf("rate limit %s:%s: %w", l.area, key, b.data.err)
	case b.data.allowed:
		return 0, nil
	}
	// The batch did not fit in what is left of the budget: each of its
	// callers asks alone, so none is refused for the others' sake.
	res, err := l.limiter.AllowN(ctx, l.area+":"+key, limit, events)
	if err != nil {
		return 0, fmt.Errorf("rate limit %s:%s: %w", l.area, key, err)
	}
	if res.Allowed == events {
		return 0, nil
	}
	return max(res.RetryAfter, time.Millisecond), nil
}

// rateBudgetName names one budget (its key and its limit) in the batches.
func rateBudgetName(area, key string, n int, per time.Duration) string {
	return fmt.Sprintf("%s:%s\x00%d\x00%d", area, key, n, per)
}

// rateKeys gives redis_rate the client with its keys moved under the
// project's prefix: redis_rate names every key "rate:<key>", which becomes
// "rb:rate:<key>". Like firstEval for the store's scripts, it sends a
// script's first run as EVAL: redis_rate sends EVALSHA, and on NOSCRIPT the
// script whole (go-redis's Script.Run), so on a server that has not seen it
// the first run was two commands.
type rateKeys struct {
	redis.UniversalClient
	sent *sentScripts
}

// sentScripts are the hashes of the scripts a server answered an EVAL of.
type sentScripts struct {
	mu   sync.Mutex
	shas map[string]bool
}

func (s *sentScripts) has(sha string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shas[sha]
}

func (s *sentScripts) add(sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shas == nil {
		s.shas = map[string]bool{}
	}
	s.shas[sha] = true
}

// ratePrefix is redis_rate's own key prefix.
const ratePrefix = "rate:"

func (c rateKeys) keys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		if rest, ok := strings.CutPrefix(k, ratePrefix); ok {
			k = keyRate + rest
		}
		out[i] = k
	}
	return out
}

func (c rateKeys) Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	cmd := c.UniversalClient.Eval(ctx, script, c.keys(keys), args...)
	// The server read the script when it answered at all (see firstEval).
	var rerr redis.Error
	if err := cmd.Err(); err == nil || errors.Is(err, redis.Nil) || errors.As(err, &rerr) {
		sum := sha1.Sum([]byte(script))
		c.sent.add(hex.EncodeToString(sum[:]))
	}
	return cmd
}

// EvalSha runs the script by its hash; before this client's first EVAL of
// it, it answers NOSCRIPT itself, without sending anything, and the caller
// (Script.Run) sends the script whole.
func (c rateKeys) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if !c.sent.has(sha) {
		cmd := redis.NewCmd(ctx, append([]any{"evalsha", sha}, len(keys))...)
		cmd.SetErr(redis.ErrNoScript)
		return cmd
	}
	return c.UniversalClient.EvalSha(ctx, sha, c.keys(keys), args...)
}

func (c rateKeys) EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd {
	return c.UniversalClient.EvalRO(ctx, script, c.keys(keys), args...)
}

func (c rateKeys) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd {
	return c.UniversalClient.EvalShaRO(ctx, sha1, c.keys(keys), args...)
}

func (c rateKeys) Del(ctx context.Context, keys ...string) *redis.IntCmd {
	return c.UniversalClient.Del(ctx, c.keys(keys)...)
}

// rateReply is a batch of one budget's events (how many its calls ask
// for together) and its answer: allowed (every event taken), or not (each
// caller then asks alone, so none is refused for the others' sake).
type rateReply struct {
	events  int
	allowed bool
	err     error
}
