package redisstore

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// DefaultWatchCheck is how often Watch reads a run's version although
// nobody told it of a change: the safety net for an announcement it missed.
const DefaultWatchCheck = 5 * time.Second

// Watch follows a run in the store, whichever process advances it: it
// sends the run (without page texts) when it is first read and again each
// time its stored version changes. Every save announces the new version
// on the run's channel with the data written (saveScript), and Watch,
// subscribed to it, sends what it is told without reading Redis. It reads
// the run each time its subscription is (re)established — a Redis restart
// or a dropped connection loses what was announced meanwhile — and checks
// the version every interval (default DefaultWatchCheck) in case an
// announcement was lost otherwise.
// Read errors (Redis restarting) are skipped quietly; the channel closes
// when ctx ends.
func (s *Store) Watch(ctx context.Context, runID string, every time.Duration) <-chan *pipeline.Run {
	if every <= 0 {
		every = DefaultWatchCheck
	}
	out := make(chan *pipeline.Run)
	go func() { // owner: the caller's ctx
		defer close(out)
		sub := s.rdb.Subscribe(ctx, s.savedChannel(runID))
		told := sub.ChannelWithSubscriptions()
		defer func() {
			_ = sub.Close()
			for range told { // until go-redis's reader has stopped
			}
		}()
		t := s.clock.NewTicker(every, "watch")
		defer t.Stop()
		w := watch{s: s, id: runID, last: -1}
		for {
			var r *pipeline.Run
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r = w.check(ctx)
			case m := <-told:
				switch m := m.(type) {
				case *redis.Subscription: // (re)subscribed: what was announced before is unknown
					r = w.check(ctx)
				case *redis.Message:
					r = w.told(ctx, m.Payload)
				}
			}
			if r == nil {
				continue
			}
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// watch is what one Watch knows of its run: the last version it sent.
type watch struct {
	s    *Store
	id   string
	last int64
}

// check reads the run if its stored version is not the last one sent.
func (w *watch) check(ctx context.Context) *pipeline.Run {
	if w.last >= 0 {
		v, err := w.s.rdb.HGet(ctx, w.s.runKey(w.id), "v").Result()
		if err != nil {
			return nil
		}
		if n, _ := strconv.ParseInt(v, 10, 64); n == w.last {
			return nil
		}
	}
	return w.read(ctx)
}

// read reads the run, or nil when it cannot be read or is not newer than
// the last version sent.
func (w *watch) read(ctx context.Context) *pipeline.Run {
	r, err := w.s.loadMeta(ctx, w.id)
	if err != nil || r.Version == w.last {
		return nil
	}
	w.last = r.Version
	return r
}

// told returns the run a save announced ("{version} {data}"), or nil when
// it is not newer than the last one sent; an announcement it cannot decode
// makes it read the run instead.
func (w *watch) told(ctx context.Context, msg string) *pipeline.Run {
	vs, data, ok := strings.Cut(msg, " ")
	n, err := strconv.ParseInt(vs, 10, 64)
	if !ok || err != nil {
		return w.read(ctx)
	}
	if n <= w.last {
		return nil
	}
	var r pipeline.Run
	if _, err := decodeVersioned("run", w.id, []any{vs, data}, pipeline.ErrNotFound, &r); err != nil {
		return w.read(ctx)
	}
	r.Version = n
	// No watermark check: this process may have saved a later version
	// before reading this announcement.
	w.s.observeVersion(w.id, n, 0)
	w.last = n
	return &r
}
