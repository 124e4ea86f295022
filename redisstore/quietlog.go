package redisstore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// quietEvery is how often one kind of message from the Redis library is
// logged while it repeats: an outage of Redis makes go-redis say the same
// thing several times a second.
const quietEvery = 30 * time.Second

// quiet passes a message on the first time, then at most once per
// quietEvery per kind, saying how many were held back.
type quiet struct {
	log  *slog.Logger
	now  func() time.Time
	mu   sync.Mutex
	seen map[string]*quietKind
}

type quietKind struct {
	last       time.Time
	suppressed int
}

func newQuiet(log *slog.Logger) *quiet {
	return &quiet{log: log, now: time.Now, seen: map[string]*quietKind{}}
}

// kind groups messages that differ only in their details (ids, addresses).
func kind(msg string) string {
	if len(msg) > 40 {
		return msg[:40]
	}
	return msg
}

func (q *quiet) emit(level slog.Level, msg string) {
	q.mu.Lock()
	k := q.seen[kind(msg)]
	now := q.now()
	if k == nil {
		if len(q.seen) > 256 {
			clear(q.seen)
		}
		k = &quietKind{}
		q.seen[kind(msg)] = k
	} else if now.Sub(k.last) < quietEvery {
		k.suppressed++
		q.mu.Unlock()
		return
	}
	held := k.suppressed
	k.last, k.suppressed = now, 0
	q.mu.Unlock()
	if held > 0 {
		q.log.Log(context.Background(), level, msg, "repeated", held)
		return
	}
	q.log.Log(context.Background(), level, msg)
}

// RouteRedisLogs sends go-redis's own log lines (reconnects, pool notes) to
// log at WARN, quietly: one line per kind per 30 s while they repeat.
func RouteRedisLogs(log *slog.Logger) {
	redis.SetLogger(redisLogger{newQuiet(log)})
}

type redisLogger struct{ q *quiet }

func (l redisLogger) Printf(_ context.Context, format string, v ...any) {
	l.q.emit(slog.LevelWarn, "redis: "+fmt.Sprintf(format, v...))
}
