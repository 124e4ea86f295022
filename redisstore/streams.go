package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/scheduler"
)

// Streams implements scheduler.Store on Redis.
// Its keys are in the package's key table (doc.go).
//
// Names are unique per store (one deployment serves one Slack workspace),
// compared by scheduler.NameKey; creation, update and deletion keep the name
// index consistent in Lua scripts.
type Streams struct {
	rdb    *redis.Client
	prefix string
}

var _ scheduler.Store = (*Streams)(nil)

// NewStreams returns a Streams using rdb; prefix namespaces its keys ("" = "rb:").
func NewStreams(rdb *redis.Client, prefix string) *Streams {
	prefix = cmp.Or(prefix, DefaultPrefix)
	return &Streams{rdb: rdb, prefix: prefix}
}

func (s *Streams) key(id string) string { return s.prefix + "stream:" + id }
func (s *Streams) nameKey(name string) string {
	return s.prefix + "streamname:" + scheduler.NameKey(name)
}
func (s *Streams) indexKey() string { return s.prefix + "streams" }
func (s *Streams) fireKey(id string, t time.Time) string {
	return s.prefix + "stream:" + id + ":fire:" + strconv.FormatInt(t.Unix(), 10)
}

// createStreamScript: KEYS stream, name, index; ARGV id, data, score, namekey.
var createStreamScript = newScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
redis.call('SET', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'v', 1, 'data', ARGV[2], 'name', ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
return 1
`)

// updateStreamScript: KEYS stream; ARGV version, data, namekey.
var updateStreamScript = newScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'name')
if not cur[1] then return -1 end
if tonumber(cur[1]) ~= tonumber(ARGV[1]) then return 0 end
if cur[2] ~= ARGV[3] then return -2 end
redis.call('HSET', KEYS[1], 'v', tonumber(ARGV[1]) + 1, 'data', ARGV[2])
return 1
`)

// deleteStreamScript: KEYS stream, name, index; ARGV id.
var deleteStreamScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('DEL', KEYS[1])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[3], ARGV[1])
return 1
`)

// Create stores a new stream at Version 1; scheduler.ErrNameTaken if the name is in use.
func (s *Streams) Create(ctx context.Context, st *scheduler.Stream) error {
	if st.ID == "" {
		return errors.New("redisstore: a new stream needs an id")
	}
	if scheduler.NameKey(st.Spec.Name) == "" {
		return errors.New("redisstore: a new stream needs a name")
	}
	old := st.Version
	st.Version = 1
	data, err := json.Marshal(st)
	if err != nil {
		st.Version = old
		return fmt.Errorf("encode stream: %w", err)
	}
	res, err := createStreamScript.Run(ctx, s.rdb,
		[]string{s.key(st.ID), s.nameKey(st.Spec.Name), s.indexKey()},
		st.ID, data, st.CreatedAt.UnixMilli(), scheduler.NameKey(st.Spec.Name)).Int()
	if err != nil {
		st.Version = old
		return fmt.Errorf("create stream %s: %w", st.ID, err)
	}
	switch res {
	case 1:
		return nil
	case 0:
		st.Version = old
		return fmt.Errorf("%w: %q", scheduler.ErrNameTaken, st.Spec.Name)
	default:
		st.Version = old
		return fmt.Errorf("redisstore: stream %s already exists", st.ID)
	}
}

// Get returns the stream with this id, or scheduler.ErrStreamNotFound.
func (s *Streams) Get(ctx context.Context, id string) (*scheduler.Stream, error) {
	vals, err := s.rdb.HMGet(ctx, s.key(id), "v", "data").Result()
	if err != nil {
		return nil, err
	}
	return decodeStream(id, vals)
}

func decodeStream(id string, vals []any) (*scheduler.Stream, error) {
	var st scheduler.Stream
	v, err := decodeVersioned("stream", id, vals, scheduler.ErrStreamNotFound, &st)
	if err != nil {
		return nil, err
	}
	st.Version = v
	return &st, nil
}

// GetByName returns the stream with this name (compared by scheduler.NameKey),
// or scheduler.ErrStreamNotFound.
func (s *Streams) GetByName(ctx context.Context, name string) (*scheduler.Stream, error) {
	if scheduler.NameKey(name) == "" {
		return nil, fmt.Errorf("stream %q: %w", name, scheduler.ErrStreamNotFound)
	}
	id, err := s.rdb.Get(ctx, s.nameKey(name)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("stream %q: %w", name, scheduler.ErrStreamNotFound)
	}
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

// List returns every stream, oldest first.
func (s *Streams) List(ctx context.Context) ([]*scheduler.Stream, error) {
	ids, err := s.rdb.ZRange(ctx, s.indexKey(), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = s.key(id)
	}
	vals, err := loadVersioned(ctx, s.rdb, keys)
	if err != nil {
		return nil, err
	}
	out := make([]*scheduler.Stream, 0, len(ids))
	for i, id := range ids {
		st, err := decodeStream(id, vals[i])
		if errors.Is(err, scheduler.ErrStreamNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Update writes st if the stored version still equals st.Version, then
// increments st.Version; otherwise scheduler.ErrStreamConflict. A stream's
// name cannot change.
func (s *Streams) Update(ctx context.Context, st *scheduler.Stream) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("encode stream: %w", err)
	}
	res, err := updateStreamScript.Run(ctx, s.rdb, []string{s.key(st.ID)}, st.Version, data, scheduler.NameKey(st.Spec.Name)).Int()
	if err != nil {
		return fmt.Errorf("update stream %s: %w", st.ID, err)
	}
	switch res {
	case 1:
		st.Version++
		return nil
	case 0:
		return fmt.Errorf("update stream %s at version %d: %w", st.ID, st.Version, scheduler.ErrStreamConflict)
	case -2:
		return fmt.Errorf("redisstore: stream %s cannot be renamed", st.ID)
	default:
		return fmt.Errorf("update stream %s: %w", st.ID, scheduler.ErrStreamNotFound)
	}
}

// Delete removes the stream and frees its name.
func (s *Streams) Delete(ctx context.Context, id string) error {
	name, err := s.rdb.HGet(ctx, s.key(id), "name").Result()
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("stream %s: %w", id, scheduler.ErrStreamNotFound)
	}
	if err != nil {
		return err
	}
	res, err := deleteStreamScript.Run(ctx, s.rdb, []string{s.key(id), s.prefix + "streamname:" + name, s.indexKey()}, id).Int()
	if err != nil {
		return fmt.Errorf("delete stream %s: %w", id, err)
	}
	if res == 0 {
		return fmt.Errorf("stream %s: %w", id, scheduler.ErrStreamNotFound)
	}
	return nil
}

// ClaimFire claims one fire of one stream with SET NX: exactly one caller gets
// true until ttl has passed.
func (s *Streams) ClaimFire(ctx context.Context, streamID string, fireAt time.Time, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, errors.New("redisstore: a fire claim needs a positive ttl")
	}
	ok, err := s.rdb.SetNX(ctx, s.fireKey(streamID, fireAt), "1", ttl).Result()
	if err != nil {
		return false, fmt.Errorf("claim fire of stream %s at %s: %w", streamID, fireAt.UTC().Format(time.RFC3339), err)
	}
	return ok, nil
}
