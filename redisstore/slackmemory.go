package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// SlackMemory is what the Slack adapter remembers for every replica
// (bot.SlackMemory): where its messages are, how far a final post got,
// which threads are runs' and the assistant's, which workspaces lack a
// feature, who was told what, and which deliveries were taken. Its keys
// are the rb:slack:… rows of the package's key table, built below.
type SlackMemory struct{ rdb redis.UniversalClient }

// NewSlackMemory returns the Slack adapter's memory on rdb.
func NewSlackMemory(rdb redis.UniversalClient) *SlackMemory { return &SlackMemory{rdb: rdb} }

// The keys of SlackMemory (the key table in doc.go).
func slackCheckpointMsgKey(instID string) string { return keySlack + "cp:" + instID }
func slackProgressMsgKey(runID string) string    { return keySlack + "progress:" + runID }
func slackFinalKey(runID string) string          { return keySlack + "final:" + runID }
func slackDraftFileKey(runID string) string      { return keySlack + "draftfile:" + runID }
func slackSeenKey(kind, id string) string        { return keySlack + "seen:" + kind + ":" + id }
func slackThreadKey(channel, thread string) string {
	return keySlack + "thread:" + channel + ":" + thread
}
func slackAssistantKey(channel, thread string) string {
	return keySlack + "assistant:" + channel + ":" + thread
}
func slackAssistantOffKey(team string) string  { return keySlack + "assistant:off:" + team }
func slackPlanStreamKey(runID string) string   { return keySlack + "planstream:" + runID }
func slackPlanStreamOffKey(team string) string { return keySlack + "planstream:off:" + team }
func slackHomeKey(user string) string          { return keySlack + "home:" + user }
func slackSharedKey(runID, channel string) string {
	return keySlack + "share:done:" + runID + ":" + channel
}
func slackSharingKey(runID, channel string) string {
	return keySlack + "share:lock:" + runID + ":" + channel
}
func slackPostIntentKey(runID, post string) string {
	return keySlack + "intent:" + runID + ":" + post
}
func slackEscalatedKey(runID, instID, user string) string {
	return keySlack + "escalated:" + runID + ":" + instID + ":" + user
}

// CheckpointMessage returns where the message of checkpoint instID is.
func (m *SlackMemory) CheckpointMessage(ctx context.Context, instID string) (string, bool, error) {
	return m.get(ctx, slackCheckpointMsgKey(instID))
}

// RememberCheckpointMessage remembers where the message of checkpoint instID is.
func (m *SlackMemory) RememberCheckpointMessage(ctx context.Context, instID, msg string, ttl time.Duration) error {
	return m.set(ctx, slackCheckpointMsgKey(instID), msg, ttl)
}

// PostIntent returns when a post of run runID (named post) was last about
// to be made, found=false when no marker is left.
func (m *SlackMemory) PostIntent(ctx context.Context, runID, post string) (time.Time, bool, error) {
	v, found, err := m.get(ctx, slackPostIntentKey(runID, post))
	if err != nil || !found {
		return time.Time{}, false, err
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("post intent %s of run %s: %w", post, runID, err)
	}
	return time.UnixMilli(ms), true, nil
}

// RememberPostIntent records, for ttl, that a post of run runID (named
// post) may be in flight since at. A marker already there is kept: it
// dates the earliest attempt, from which a later look must search.
func (m *SlackMemory) RememberPostIntent(ctx context.Context, runID, post string, at time.Time, ttl time.Duration) error {
	return m.rdb.SetNX(ctx, slackPostIntentKey(runID, post), at.UnixMilli(), ttl).Err()
}

// ProgressMessage returns the ts of run runID's progress message.
func (m *SlackMemory) ProgressMessage(ctx context.Context, runID string) (string, bool, error) {
	return m.get(ctx, slackProgressMsgKey(runID))
}

// RememberProgressMessage remembers the ts of run runID's progress message.
func (m *SlackMemory) RememberProgressMessage(ctx context.Context, runID, ts string, ttl time.Duration) error {
	return m.set(ctx, slackProgressMsgKey(runID), ts, ttl)
}

// FinalPost returns how far run runID's final post got (empty when not begun).
func (m *SlackMemory) FinalPost(ctx context.Context, runID string) (map[string]string, error) {
	return m.rdb.HGetAll(ctx, slackFinalKey(runID)).Result()
}

// RememberFinalPost records one field of run runID's final post.
func (m *SlackMemory) RememberFinalPost(ctx context.Context, runID, field, value string, ttl time.Duration) error {
	return m.setField(ctx, slackFinalKey(runID), field, value, ttl)
}

// DraftFile returns the draft file attached to run runID's review (empty when none).
func (m *SlackMemory) DraftFile(ctx context.Context, runID string) (map[string]string, error) {
	return m.rdb.HGetAll(ctx, slackDraftFileKey(runID)).Result()
}

// RememberDraftFile records one field of the draft file attached to run runID's review.
func (m *SlackMemory) RememberDraftFile(ctx context.Context, runID, field, value string, ttl time.Duration) error {
	return m.setField(ctx, slackDraftFileKey(runID), field, value, ttl)
}

// FirstDelivery records the delivery id of kind for ttl and reports
// whether it was not recorded already (taken by any replica).
func (m *SlackMemory) FirstDelivery(ctx context.Context, kind, id string, ttl time.Duration) (bool, error) {
	return m.rdb.SetNX(ctx, slackSeenKey(kind, id), 1, ttl).Result()
}

// RunOfThread returns the id of the run whose thread channel/thread is.
func (m *SlackMemory) RunOfThread(ctx context.Context, channel, thread string) (string, bool, error) {
	return m.get(ctx, slackThreadKey(channel, thread))
}

// RememberRunOfThread remembers that channel/thread is run runID's thread.
func (m *SlackMemory) RememberRunOfThread(ctx context.Context, channel, thread, runID string, ttl time.Duration) error {
	return m.set(ctx, slackThreadKey(channel, thread), runID, ttl)
}

// AssistantThread returns the assistant panel thread channel/thread.
func (m *SlackMemory) AssistantThread(ctx context.Context, channel, thread string) (string, bool, error) {
	return m.get(ctx, slackAssistantKey(channel, thread))
}

// RememberAssistantThread remembers the assistant panel thread channel/thread.
func (m *SlackMemory) RememberAssistantThread(ctx context.Context, channel, thread, value string, ttl time.Duration) error {
	return m.set(ctx, slackAssistantKey(channel, thread), value, ttl)
}

// AssistantOff returns the feature error team's workspace answered the
// assistant calls with, off=false when none is remembered.
func (m *SlackMemory) AssistantOff(ctx context.Context, team string) (string, bool, error) {
	return m.get(ctx, slackAssistantOffKey(team))
}

// RememberAssistantOff remembers that team's workspace lacks the assistant feature.
func (m *SlackMemory) RememberAssistantOff(ctx context.Context, team, code string, ttl time.Duration) error {
	return m.set(ctx, slackAssistantOffKey(team), code, ttl)
}

// PlanStream returns run runID's streamed plan.
func (m *SlackMemory) PlanStream(ctx context.Context, runID string) (string, bool, error) {
	return m.get(ctx, slackPlanStreamKey(runID))
}

// RememberPlanStream remembers run runID's streamed plan.
func (m *SlackMemory) RememberPlanStream(ctx context.Context, runID, value string, ttl time.Duration) error {
	return m.set(ctx, slackPlanStreamKey(runID), value, ttl)
}

// PlanStreamOff returns the feature error team's workspace answered
// chat.startStream with, off=false when none is remembered.
func (m *SlackMemory) PlanStreamOff(ctx context.Context, team string) (string, bool, error) {
	return m.get(ctx, slackPlanStreamOffKey(team))
}

// RememberPlanStreamOff remembers that team's workspace lacks streamed messages.
func (m *SlackMemory) RememberPlanStreamOff(ctx context.Context, team, code string, ttl time.Duration) error {
	return m.set(ctx, slackPlanStreamOffKey(team), code, ttl)
}

// Escalated reports whether user was told that checkpoint instID of run
// runID waits on them.
func (m *SlackMemory) Escalated(ctx context.Context, runID, instID, user string) (bool, error) {
	_, found, err := m.get(ctx, slackEscalatedKey(runID, instID, user))
	return found, err
}

// RememberEscalated remembers that user was told about checkpoint instID of run runID.
func (m *SlackMemory) RememberEscalated(ctx context.Context, runID, instID, user string, ttl time.Duration) error {
	return m.set(ctx, slackEscalatedKey(runID, instID, user), "1", ttl)
}

// HomePublished reports whether user's App Home was published.
func (m *SlackMemory) HomePublished(ctx context.Context, user string) (bool, error) {
	_, found, err := m.get(ctx, slackHomeKey(user))
	return found, err
}

// RememberHomePublished remembers that user's App Home was published.
func (m *SlackMemory) RememberHomePublished(ctx context.Context, user string, ttl time.Duration) error {
	return m.set(ctx, slackHomeKey(user), "1", ttl)
}

// SharedSummary returns the ts of run runID's report shared to channel.
func (m *SlackMemory) SharedSummary(ctx context.Context, runID, channel string) (string, bool, error) {
	return m.get(ctx, slackSharedKey(runID, channel))
}

// RememberSharedSummary remembers the ts of run runID's report shared to channel.
func (m *SlackMemory) RememberSharedSummary(ctx context.Context, runID, channel, ts string, ttl time.Duration) error {
	return m.set(ctx, slackSharedKey(runID, channel), ts, ttl)
}

// StartShare records, for ttl, that run runID's report is being shared to
// channel, and reports whether it was not being shared already.
func (m *SlackMemory) StartShare(ctx context.Context, runID, channel string, ttl time.Duration) (bool, error) {
	return m.rdb.SetNX(ctx, slackSharingKey(runID, channel), 1, ttl).Result()
}

// Ping reports whether Redis answers (for readiness checks).
func (m *SlackMemory) Ping(ctx context.Context) error { return m.rdb.Ping(ctx).Err() }

// get returns the string at key, found=false when there is none.
func (m *SlackMemory) get(ctx context.Context, key string) (string, bool, error) {
	v, err := m.rdb.Get(ctx, key).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, true, nil
}

// set stores value at key for ttl.
func (m *SlackMemory) set(ctx context.Context, key, value string, ttl time.Duration) error {
	return m.rdb.Set(ctx, key, value, ttl).Err()
}

// setField sets one field of the hash at key and renews its ttl, at once.
func (m *SlackMemory) setField(ctx context.Context, key, field, value string, ttl time.Duration) error {
	pipe := m.rdb.TxPipeline()
	pipe.HSet(ctx, key, field, value)
	pipe.Expire(ctx, key, ttl)
	_, err := pipe.Exec(ctx)
	return err
}
