package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// timerHint starts a wake hint that is a deadline ("t:<unix ms>"), not a
// run id.
const timerHint = "t:"

// wakeChannel is the pub/sub channel of queue's wake hints (not a key:
// nothing is stored).
func wakeChannel(prefix, queue string) string { return prefix + "wake:" + queue }

// subscribe subscribes to the wake channels of w's queues, on one
// connection, and waits for Redis to confirm.
func (w *Worker) subscribe(ctx context.Context) (*redis.PubSub, error) {
	channels := make([]string, len(w.queues))
	for i, q := range w.queues {
		channels[i] = wakeChannel(w.opts.Prefix, q)
	}
	sub := w.rdb.Subscribe(ctx, channels...)
	rctx, cancel := context.WithTimeout(ctx, w.opts.Lease)
	defer cancel()
	for range channels {
		if _, err := sub.Receive(rctx); err != nil {
			_ = sub.Close()
			return nil, fmt.Errorf("subscribe to the queues' wake channels: %w", err)
		}
	}
	return sub, nil
}

// listen takes the hints of sub (subscribing first when it is nil) until
// ctx ends, and closes it: a run id is advanced at
// once if a slot is free (the lease tells whether someone else has it), a
// deadline arms the timer. Hints are only for speed: one missed while the
// connection is made again is found by the next pass, which the new
// subscription asks for at once.
func (w *Worker) listen(ctx context.Context, sub *redis.PubSub) {
	if sub == nil { // subscribed to here, in the background (NewQueues)
		var err error
		if sub, err = w.subscribe(ctx); err != nil {
			if ctx.Err() == nil {
				w.log.Info("could not subscribe to the wake channels; the claim passes take the runs", "err", err)
			}
			return
		}
	}
	defer sub.Close()
	ch := sub.ChannelWithSubscriptions()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			switch m := m.(type) {
			case *redis.Subscription:
				if m.Kind == "subscribe" {
					w.wakeLoop() // subscribed again after a reconnection
				}
			case *redis.Message:
				w.hint(m.Channel, m.Payload)
			}
		}
	}
}

// hint acts on one wake hint of the queue whose channel is channel.
func (w *Worker) hint(channel, payload string) {
	queue := strings.TrimPrefix(channel, w.opts.Prefix+"wake:")
	if !w.serves(queue) {
		return
	}
	if ms, ok := strings.CutPrefix(payload, timerHint); ok {
		if at, err := strconv.ParseInt(ms, 10, 64); err == nil {
			w.timers.armAt(at)
		}
		return
	}
	if payload != "" {
		w.take(pending{queue: queue, run: payload})
	}
}

// handBack publishes a wake hint for every run a shutdown handed back, so
// that another replica serving its queue takes it at once (the work index
// has it anyway, for a pass within a lease).
func (w *Worker) handBack() {
	w.mu.Lock()
	runs := w.handedBack
	w.handedBack = map[string]string{}
	w.mu.Unlock()
	if len(runs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.Lease/3)
	defer cancel()
	if _, err := w.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for run, queue := range runs {
			p.Publish(ctx, wakeChannel(w.opts.Prefix, queue), run)
		}
		return nil
	}); err != nil {
		w.log.Info("could not announce the runs handed back; a pass of another replica takes them", "runs", len(runs), "err", err)
		return
	}
	w.log.Info("handed runs back to the other workers", "runs", len(runs))
}
