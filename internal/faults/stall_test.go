//go:build faults

package faults

import (
	"context"
	"strings"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// stallReplyOf withholds the reply of the first command named cmd sent while
// armed: just before it goes out, it adds a "timeout" toxic to the proxy's
// downstream (Redis → client), so the command reaches Redis and commits but
// its reply never comes back (until the test removes the toxic).
type stallReplyOf struct {
	cmd   string
	armed *atomic.Bool
	px    *proxy
}

func (s stallReplyOf) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s stallReplyOf) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, c redis.Cmder) error {
		if strings.EqualFold(c.Name(), s.cmd) && s.armed.CompareAndSwap(true, false) {
			s.px.add("stall", "timeout", "downstream", map[string]any{"timeout": 0})
		}
		return next(ctx, c)
	}
}

func (s stallReplyOf) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
