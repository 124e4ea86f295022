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
// time its stored version changes. A save made by this process (this
// Store) hands Watch the version and data it wrote at once, in memory; a
// save made by another process announces them on the run's channel
// (saveScript), and Watch, subscribed to it, sends what it is told without
// reading Redis. A save announces the run only while some process other
// than the saver's follows it: Watch counts itself in the run's hash
// ("watchers") for as long as it runs, so a run nobody follows costs no
// PUBLISH. Watch reads the run each time its subscription is
// (re)established — a Redis restart or a dropped connection loses what was
// announced meanwhile — and checks the version every interval (default
// DefaultWatchCheck) in case an announcement was lost otherwise.
// Read errors (Redis restarting) are skipped quietly; the channel closes
// when ctx ends.
func (s *Store) Watch(ctx context.Context, runID string, every time.Duration) <-chan *pipeline.Run {
	return s.watch(ctx, runID, every, false)
}

// WatchAdvancedHere is Watch for the process that advances the run itself
// (a terminal run on its private queue, which only that process serves):
// while this Store's own saves say a worker here carries the run (it is
// queued or running, or finished and not yet shown), everything that
// changes it goes through those saves, which Watch is handed in memory, so
// it neither subscribes to the run's channel nor counts itself among its
// watchers: a run that never stops for a person costs Watch no command but
// the safety-net check. Watch subscribes (as Watch does from the start)
// once a save says the run waits for a person or was interrupted — a
// decision or a resume may then come from another process — or once the
// safety-net check finds a version it was not told of (another process
// saved the run: its worker here lost the lease, say). It then stays
// subscribed. Nothing is read at the start: the first run sent is the run
// as this Store created it when it created it leased (CreateLeased: its
// worker saves nothing before its first step ends), else the first save
// of the worker here, or what the first safety-net check reads.
func (s *Store) WatchAdvancedHere(ctx context.Context, runID string, every time.Duration) <-chan *pipeline.Run {
	return s.watch(ctx, runID, every, true)
}

// watch is Watch; advancedHere is WatchAdvancedHere's promise.
func (s *Store) watch(ctx context.Context, runID string, every time.Duration, advancedHere bool) <-chan *pipeline.Run {
	if every <= 0 {
		every = DefaultWatchCheck
	}
	out := make(chan *pipeline.Run)
	go func() { // owner: the caller's ctx
		defer close(out)
		// Saves of this process are handed over in memory from now on.
		here := s.watchers.add(runID)
		defer s.watchers.remove(runID, here)
		if data, ok := s.takeCreatedForWatch(runID); advancedHere && ok {
			// Created here leased, with the attempt at its first step
			// counted: the worker here makes no save before that step
			// ends, so the run as created is the first thing to show.
			here.put(1, "1 "+string(data))
		}
		var sub *redis.PubSub
		var told <-chan any // nil (never ready) until subscribed
		subscribe := func() {
			sub = s.rdb.Subscribe(ctx, s.savedChannel(runID))
			told = sub.ChannelWithSubscriptions()
			if s.opts.OnWatchSubscribe != nil {
				s.opts.OnWatchSubscribe(runID)
			}
		}
		defer func() {
			if sub == nil {
				return
			}
			_ = sub.Close()
			for range told { // until go-redis's reader has stopped
			}
		}()
		if !advancedHere {
			subscribe()
		}
		t := s.clock.NewTicker(every, "watch")
		defer t.Stop()
		w := watch{s: s, id: runID, last: -1}
		defer w.uncount()
		for {
			var r *pipeline.Run
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r = w.check(ctx)
				if r != nil {
					// A version no save of this process handed over:
					// another process writes the run.
					advancedHere = false
				}
			case <-here.ready:
				r = w.told(ctx, here.take())
				if r != nil && !carriedHere(r) {
					advancedHere = false
				}
			case m := <-told:
				switch m := m.(type) {
				case *redis.Subscription: // (re)subscribed: what was announced before is unknown
					if m.Kind == "subscribe" {
						w.count(ctx)
					}
					r = w.check(ctx)
				case *redis.Message:
					r = w.told(ctx, m.Payload)
				}
			}
			if sub == nil && !advancedHere {
				subscribe()
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

// takeCreatedForWatch returns (and forgets) the run as CreateLeased wrote
// it, if no Watch of this Store took it yet.
func (s *Store) takeCreatedForWatch(id string) ([]byte, bool) {
	return s.createdForWatch.pop(id)
}

// carriedHere reports whether a run saved by this process is still carried
// by its worker (queued or running, or finished and not yet shown), or has
// finished (it never changes again). A run that waits for a person, or was
// interrupted, is not: a decision or a resume may come from anywhere.
func carriedHere(r *pipeline.Run) bool {
	return r.Status.Final() || r.NeedsWorker() && r.Status != pipeline.StatusWaiting && r.Current() == nil
}

// watch is what one Watch knows of its run: the last version it sent, and
// how often it counted itself among the run's watchers.
type watch struct {
	s       *Store
	id      string
	last    int64
	counted int64
}

// watchersScript adds ARGV[1] to the run's count of watchers, if the run
// exists (a watch of a missing run must not create its hash). KEYS: run.
var watchersScript = newScript(`
if redis.call('HEXISTS', KEYS[1], 'v') == 1 then
  return redis.call('HINCRBY', KEYS[1], 'watchers', ARGV[1])
end
return 0
`)

// count adds this Watch to the run's watchers, so saves by other processes
// announce the run. It is called on each (re)subscription: a count lost
// with the Redis data is made again, and uncount takes back every one.
// Before the subscription is first confirmed, and if Redis does not
// answer, the count may be short: the read that follows, and the
// safety-net check, catch what was not announced.
func (w *watch) count(ctx context.Context) {
	if err := watchersScript.Run(ctx, w.s.rdb, []string{w.s.runKey(w.id)}, 1).Err(); err == nil {
		w.counted++
	}
}

// uncount takes this Watch out of the run's watchers (its context has
// ended, so on a short context of its own). A count left behind by a
// process that died only makes saves announce the run needlessly.
func (w *watch) uncount() {
	if w.counted == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = watchersScript.Run(ctx, w.s.rdb, []string{w.s.runKey(w.id)}, -w.counted).Err()
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
