package roles

import (
	"context"
	"errors"

	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/internal/obs"
)

// watch adds the gauges read from the shared store at each scrape: runs by
// state, the oldest run no worker holds, and the work queues this process
// serves.
func watch(m *obs.Metrics, a *app.App, queues []string) {
	m.WatchRunStates(a.Store.CountActive)
	m.WatchOldestUnleased(a.OldestUnleased)
	m.WatchQueues(func(ctx context.Context) (map[string]obs.QueueStat, error) {
		stats, err := a.Queue.Stats(ctx, queues)
		out := make(map[string]obs.QueueStat, len(stats))
		for q, s := range stats {
			out[q] = obs.QueueStat{Pending: s.Pending, Active: s.Active, Scheduled: s.Scheduled, Retry: s.Retry, Latency: s.Latency}
		}
		return out, err
	})
}

// redisReady is the readiness check of a process that needs Redis.
func redisReady(a *app.App) obs.Check {
	return obs.Check{Name: "redis", Ready: func(ctx context.Context) error {
		if a.DB.Ping(ctx) != nil {
			return errors.New("unreachable")
		}
		return nil
	}}
}
