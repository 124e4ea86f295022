package bot

import (
	"context"
	"time"
)

// SlackMemory is what the Slack adapter remembers for every replica, each
// thing by its name: where its messages are (a checkpoint's, a run's
// progress, a shared report), how far a final post and a draft's file got,
// which threads belong to a run or to the assistant panel, which
// workspaces lack a feature, who was reminded, and which deliveries were
// taken (whose App Home was published is bot/home's: its own port). The values are the bot's
// (a message's ts, JSON of its own types); where they live is the store's
// business: redisstore.SlackMemory keeps them under the keys of its key
// table.
type SlackMemory interface {
	DeliveryMemory
	// CheckpointMessage returns where the message of the checkpoint
	// instance instID is (checkpointMsg JSON), found=false when unknown.
	CheckpointMessage(ctx context.Context, instID string) (msg string, found bool, err error)
	RememberCheckpointMessage(ctx context.Context, instID, msg string, ttl time.Duration) error
	// ProgressMessage returns the ts of a run's progress message.
	ProgressMessage(ctx context.Context, runID string) (ts string, found bool, err error)
	RememberProgressMessage(ctx context.Context, runID, ts string, ttl time.Duration) error
	// PostIntent returns when the post named post of run runID was about
	// to be made (postonce.go), found=false when no marker is left;
	// RememberPostIntent records that moment for ttl unless a marker is
	// there already (the earliest attempt is kept).
	PostIntent(ctx context.Context, runID, post string) (at time.Time, found bool, err error)
	RememberPostIntent(ctx context.Context, runID, post string, at time.Time, ttl time.Duration) error
	// HoldRun records that run runID was stored held (pipeline.Request.Held)
	// at at, while its root message is posted, and claims it for claimTTL;
	// HeldRuns lists up to n held since before, oldest first; ClaimHeldRun
	// claims one whose claim expired (its starter died); ForgetHeldRun
	// drops one that was released (heldruns.go).
	HoldRun(ctx context.Context, runID string, at time.Time, claimTTL time.Duration) error
	HeldRuns(ctx context.Context, before time.Time, n int) ([]string, error)
	ClaimHeldRun(ctx context.Context, runID string, ttl time.Duration) (bool, error)
	ForgetHeldRun(ctx context.Context, runID string) error
	// FinalPost returns the fields of what a run's final post has shown
	// (empty when nothing); RememberFinalPost sets one and renews the ttl.
	FinalPost(ctx context.Context, runID string) (map[string]string, error)
	RememberFinalPost(ctx context.Context, runID, field, value string, ttl time.Duration) error
	// DraftFile returns the fields of the draft file attached to a run's
	// draft review (the version and the file id; empty when none).
	DraftFile(ctx context.Context, runID string) (map[string]string, error)
	RememberDraftFile(ctx context.Context, runID, field, value string, ttl time.Duration) error
	// RunOfThread returns the id of the run whose thread channel/thread is.
	RunOfThread(ctx context.Context, channel, thread string) (runID string, found bool, err error)
	RememberRunOfThread(ctx context.Context, channel, thread, runID string, ttl time.Duration) error
	// AssistantThread returns the assistant panel thread channel/thread
	// (assistantThread JSON).
	AssistantThread(ctx context.Context, channel, thread string) (value string, found bool, err error)
	RememberAssistantThread(ctx context.Context, channel, thread, value string, ttl time.Duration) error
	// AssistantOff returns the feature error a team's workspace answered
	// the assistant calls with.
	AssistantOff(ctx context.Context, team string) (code string, off bool, err error)
	RememberAssistantOff(ctx context.Context, team, code string, ttl time.Duration) error
	// PlanStream returns a run's streamed plan (planStream JSON).
	PlanStream(ctx context.Context, runID string) (stream string, found bool, err error)
	RememberPlanStream(ctx context.Context, runID, stream string, ttl time.Duration) error
	// PlanStreamOff returns the feature error a team's workspace answered
	// chat.startStream with.
	PlanStreamOff(ctx context.Context, team string) (code string, off bool, err error)
	RememberPlanStreamOff(ctx context.Context, team, code string, ttl time.Duration) error
	// Escalated reports whether user was told that a run's checkpoint
	// instance instID waits on them.
	Escalated(ctx context.Context, runID, instID, user string) (bool, error)
	RememberEscalated(ctx context.Context, runID, instID, user string, ttl time.Duration) error
	// Ping reports whether the memory answers (/readyz).
	Ping(ctx context.Context) error
}

// RateBudget is a rate budget shared by every replica
// (redisstore.RateLimiter): Allow takes one event from key's budget of n
// per period and returns 0, or how long to wait when it is spent.
type RateBudget interface {
	Allow(ctx context.Context, key string, n int, per time.Duration) (wait time.Duration, err error)
}
