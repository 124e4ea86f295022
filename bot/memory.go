package bot

import (
	"context"
	"time"
)

// Memory is what the Slack adapter remembers for every replica
// (redisstore.SlackMemory): where a checkpoint's and a run's progress
// message are, how far a run's final post got, and which deliveries were
// taken, which threads are assistant panel threads (assistant.go). The keys
// are named here (keyCheckpointMsg, keyProgressMsg, keyFinal, keySeen) and
// beside their features (keyThread, keyAssistant, keyAssistantOff,
// keyPlanStream, keyPlanStreamOff, keyEscalated); the
// store says where they live.
type Memory interface {
	DeliveryMemory
	// Recall returns the value remembered under key, found=false when none.
	Recall(ctx context.Context, key string) (value string, found bool, err error)
	// Remember stores value under key for ttl.
	Remember(ctx context.Context, key, value string, ttl time.Duration) error
	// RecallFields returns the fields remembered under key (empty when none).
	RecallFields(ctx context.Context, key string) (map[string]string, error)
	// RememberField sets one field under key and renews its ttl, at once.
	RememberField(ctx context.Context, key, field, value string, ttl time.Duration) error
	// Ping reports whether the memory answers (/readyz).
	Ping(ctx context.Context) error
}

// RateBudget is a rate budget shared by every replica
// (redisstore.RateLimiter): Allow takes one event from key's budget of n
// per period and returns 0, or how long to wait when it is spent.
type RateBudget interface {
	Allow(ctx context.Context, key string, n int, per time.Duration) (wait time.Duration, err error)
}
