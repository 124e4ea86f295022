package redisstore

import (
	"context"
	"strconv"
	"time"

	"github.com/researchbot/researchbot/pipeline"
)

// Watch follows a run in the store, whichever process advances it: it
// sends the run (without page texts) when it is first read and again each
// time its stored version changes, checking every interval (default
// 250 ms). Read errors (Redis restarting) are skipped quietly; the channel
// closes when ctx ends.
func (s *Store) Watch(ctx context.Context, runID string, every time.Duration) <-chan *pipeline.Run {
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	out := make(chan *pipeline.Run)
	go func() { // owner: the caller's ctx
		defer close(out)
		t := time.NewTicker(every)
		defer t.Stop()
		last := int64(-1)
		for {
			if v, err := s.rdb.HGet(ctx, s.runKey(runID), "v").Result(); err == nil {
				if n, _ := strconv.ParseInt(v, 10, 64); n != last {
					if r, err := s.loadMeta(ctx, runID); err == nil {
						last = r.Version
						select {
						case out <- r:
						case <-ctx.Done():
							return
						}
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return out
}
