package redisstore

import (
	"context"
	"strings"
)

// asynqQueues is asynq's set of every queue name (base.AllQueues).
const asynqQueues = "asynq:queues"

// Purge deletes every key asynq keeps for queue — its lists of pending,
// active, scheduled, retry, archived and completed tasks, their task
// hashes, its lease and pause keys and its counters — and forgets the
// queue's name. It is for a private queue (a terminal run's) that nobody
// serves any more: asynq's own DeleteQueue refuses a queue with an active
// task, which is what a worker killed mid-step leaves, and keeps the
// completed list and the counters. A wake-up queued meanwhile is lost with
// the rest; the run's work index still names the run, for a rescue.
func (q *Queue) Purge(ctx context.Context, queue string) error {
	pattern := "asynq:{" + globEscape(queue) + "}:*"
	iter := q.rdb.Scan(ctx, 0, pattern, 500).Iterator()
	var batch []string
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := q.rdb.Del(ctx, batch...).Err()
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 500 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	return q.rdb.SRem(ctx, asynqQueues, queue).Err()
}

// globEscape escapes the characters SCAN's MATCH reads as a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
