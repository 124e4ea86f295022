package redisstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// Locker gives one worker at a time the lease on a run (pipeline.Locker). The
// lease expires after TTL unless it is refreshed, so a worker that died frees
// its runs; the run's compare-and-set save protects against a worker that
// lost its lease without knowing.
type Locker struct {
	rdb    *redis.Client
	locks  *redislock.Client
	prefix string
	ttl    time.Duration
	wait   time.Duration
}

// NewLocker returns a Locker. ttl is the lease (default 15 s), refreshed every
// ttl/3 while held; wait bounds how long Lock waits for a busy lease (default
// 2×ttl).
func NewLocker(rdb *redis.Client, prefix string, ttl, wait time.Duration) *Locker {
	if prefix == "" {
		prefix = "rb:"
	}
	if ttl <= 0 {
		ttl = 15 * time.Second
	}
	if wait <= 0 {
		wait = 2 * ttl
	}
	return &Locker{rdb: rdb, locks: redislock.New(rdb), prefix: prefix, ttl: ttl, wait: wait}
}

// ErrBusy is returned when another worker kept the run's lease for too long.
var ErrBusy = errors.New("another worker is advancing this run")

// Held reports whether some worker holds the run's lease now.
func (l *Locker) Held(ctx context.Context, runID string) (bool, error) {
	n, err := l.rdb.Exists(ctx, l.prefix+"lock:run:"+runID).Result()
	return n > 0, err
}

// TTL is the lease duration.
func (l *Locker) TTL() time.Duration { return l.ttl }

// Lock waits for the run's lease and keeps it fresh until release is called.
func (l *Locker) Lock(ctx context.Context, runID string) (func(), error) {
	wctx, cancel := context.WithTimeout(ctx, l.wait)
	defer cancel()
	lock, err := l.locks.Obtain(wctx, l.prefix+"lock:run:"+runID, l.ttl, &redislock.Options{
		RetryStrategy: redislock.LimitRetry(redislock.ExponentialBackoff(20*time.Millisecond, 500*time.Millisecond), 1<<20),
	})
	if err != nil {
		if errors.Is(err, redislock.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("run %s: %w", runID, ErrBusy)
		}
		return nil, err
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // owner: this Lock call; stopped by release
		defer wg.Done()
		t := time.NewTicker(l.ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = lock.Refresh(context.Background(), l.ttl, nil)
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			wg.Wait()
			_ = lock.Release(context.Background())
		})
	}, nil
}
