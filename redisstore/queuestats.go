package redisstore

import (
	"context"
	"slices"
	"time"
)

// QueueStat is one work queue at a moment: its tasks by state, and how long
// the oldest pending one has waited.
type QueueStat struct {
	Pending, Active, Scheduled, Retry int
	Latency                           time.Duration
}

// Stats reports the given queues (for the metrics); a queue that has
// never held a task reports zeros.
func (q *Queue) Stats(ctx context.Context, queues []string) (map[string]QueueStat, error) {
	known, err := q.inspector.Queues()
	if err != nil {
		return nil, err
	}
	out := make(map[string]QueueStat, len(queues))
	for _, name := range queues {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if !slices.Contains(known, name) {
			out[name] = QueueStat{}
			continue
		}
		info, err := q.inspector.GetQueueInfo(name)
		if err != nil {
			return out, err
		}
		out[name] = QueueStat{Pending: info.Pending, Active: info.Active, Scheduled: info.Scheduled, Retry: info.Retry, Latency: info.Latency}
	}
	return out, nil
}
