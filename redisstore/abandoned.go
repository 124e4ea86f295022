package redisstore

import (
	"context"
	"strconv"
	"time"
)

// interruptAbandoned marks runs of abandoned queues (Worker.Abandoned:
// terminal runs' private queues, which nobody else serves) interrupted once
// nobody advanced them for 4 leases, and forgets queues that have no work
// left (forgetIfDone). A terminal process whose runs all finished forgot
// its queue itself (privatequeue.go): what is left here are the queues of
// processes that died or stopped first.
func (w *Worker) interruptAbandoned(ctx context.Context, now time.Time) error {
	queues, err := w.rdb.SMembers(ctx, w.opts.Prefix+"queues").Result()
	if err != nil {
		return err
	}
	ttl := w.opts.Lease
	for _, q := range queues {
		if w.serves(q) || !w.opts.Abandoned(q) {
			continue
		}
		ids, err := w.rdb.ZRangeArgs(ctx, zrangeBefore(workIndexKey(w.opts.Prefix, q), now.Add(-4*ttl), 100)).Result()
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			if err := w.forgetIfDone(ctx, q, now); err != nil {
				w.log.Info("could not delete an abandoned queue", "queue", q, "err", err)
			}
			continue
		}
		for _, id := range ids {
			if err := w.opts.Interrupter.Interrupt(ctx, id); err != nil {
				w.log.Info("could not mark an abandoned run interrupted", "run", id, "err", err)
			}
		}
	}
	return nil
}

// forgetIfDone deletes an abandoned queue once none of its runs has work
// and none waits for a deadline that is recent (its process would still
// handle it if it were alive): its indexes and its name (Queue.Purge). A
// process still alive and waiting for a person loses nothing: a run
// resumed later is indexed again when it is saved.
func (w *Worker) forgetIfDone(ctx context.Context, q string, now time.Time) error {
	work, err := w.rdb.ZCard(ctx, workIndexKey(w.opts.Prefix, q)).Result()
	if err != nil || work > 0 {
		return err
	}
	since := strconv.FormatInt(now.Add(-4*w.opts.Lease).UnixMilli(), 10)
	waiting, err := w.rdb.ZCount(ctx, timersIndexKey(w.opts.Prefix, q), since, "+inf").Result()
	if err != nil || waiting > 0 {
		return err
	}
	return purge(ctx, w.rdb, w.opts.Prefix, q)
}
