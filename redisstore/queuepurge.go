package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Purge deletes what the store keeps for queue — its work index, its
// deadline index — and forgets the queue's name ({p}queues). It is for a
// private queue (a terminal run's) that nobody serves any more; a run of
// it that is saved again is indexed again. The wake channel is no key.
func (q *Queue) Purge(ctx context.Context, queue string) error {
	return purge(ctx, q.rdb, q.prefix, queue)
}

// purge is Purge on rdb under prefix, in one round trip.
func purge(ctx context.Context, rdb *redis.Client, prefix, queue string) error {
	_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, workIndexKey(prefix, queue), timersIndexKey(prefix, queue))
		p.SRem(ctx, prefix+"queues", queue)
		return nil
	})
	return err
}
