package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// Default retention of finished runs and of their page texts.
const (
	DefaultRetention     = 30 * 24 * time.Hour
	DefaultPageRetention = 7 * 24 * time.Hour
	DefaultIndexRefresh  = time.Second
)

// StoreOptions configure a Store. Zero values take the defaults.
type StoreOptions struct {
	// Prefix namespaces the keys ("" = "rb:").
	Prefix string
	// Retention is how long a finished run is kept after its outcome was
	// shown (default DefaultRetention).
	Retention time.Duration
	// PageRetention is how long the extracted page texts of a finished run
	// are kept (default DefaultPageRetention, at most Retention).
	PageRetention time.Duration
	// IndexRefresh is how old the scores of a run's entries in the active,
	// work and timer indexes may grow before a save rewrites them though
	// nothing they say of the run changed (default DefaultIndexRefresh).
	// Keep it well under half a lease: the rescuer takes a run with work
	// whose score is older than that for one nobody advances (it checks the
	// lease before re-queueing, and a duplicate task is harmless).
	IndexRefresh time.Duration
	// Logger receives the loud report of a run whose stored version went
	// backwards (Redis lost writes).
	Logger *slog.Logger
	// OnLostWrites, when set, is told of each run whose stored version was
	// found lower than one this process saw (after the loud log line), so
	// the engine can offer its checkpoint again. It must not block: it is
	// called on the read that found the loss.
	OnLostWrites func(runID string, stored, seen int64)
	// Clock drives Watch's safety-net check and stamps breaker alerts
	// (default the real clock).
	Clock quartz.Clock
}

// Store implements pipeline.Store on Redis.
type Store struct {
	rdb    *redis.Client
	prefix string
	opts   StoreOptions
	log    *slog.Logger
	clock  quartz.Clock
	// texts remembers which page texts are stored, so a save sends only new ones.
	texts *boundedMap[map[int]bool]
	// seen is the highest version this process has seen of each run.
	seen *boundedMap[int64]
	// watchers are this process's Watches, told of its saves in memory.
	watchers localWatchers
	// created holds the runs this process created and has not read or
	// saved since, as written (see LoadForStep).
	created *boundedMap[createdRun]
}

// createdRun is a run as Create wrote it: its record and the nonce of the write.
type createdRun struct {
	data  []byte
	nonce string
}

// NewStore returns a Store using rdb with the default retention; prefix
// namespaces its keys ("" = "rb:").
func NewStore(rdb *redis.Client, prefix string) *Store {
	return NewStoreWithOptions(rdb, StoreOptions{Prefix: prefix})
}

// NewStoreWithOptions returns a Store using rdb.
func NewStoreWithOptions(rdb *redis.Client, opts StoreOptions) *Store {
	if opts.Prefix == "" {
		opts.Prefix = DefaultPrefix
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.PageRetention <= 0 {
		opts.PageRetention = DefaultPageRetention
	}
	opts.PageRetention = min(opts.PageRetention, opts.Retention)
	if opts.IndexRefresh <= 0 {
		opts.IndexRefresh = DefaultIndexRefresh
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	clock := opts.Clock
	if clock == nil {
		clock = quartz.NewReal()
	}
	return &Store{rdb: rdb, prefix: opts.Prefix, opts: opts, log: log, clock: clock,
		texts: newBoundedMap[map[int]bool](4096), seen: newBoundedMap[int64](65536),
		created: newBoundedMap[createdRun](256)}
}

func (s *Store) runKey(id string) string       { return s.prefix + "run:" + id }
func (s *Store) pagesKey(id string) string     { return s.prefix + "run:" + id + ":pages" }
func (s *Store) cancelKey(id string) string    { return s.prefix + "cancel:" + id }
func (s *Store) workKey(queue string) string   { return s.prefix + "work:" + queue }
func (s *Store) timersKey(queue string) string { return s.prefix + "timers:" + queue }
func (s *Store) userKey(user string) string    { return s.prefix + "runs:by:" + user }

// savedChannel is the pub/sub channel on which a save announces the run's
// new version (not a key: it stores nothing).
func (s *Store) savedChannel(id string) string { return s.prefix + "saved:" + id }

// newNonce names one write, so a write retried after a lost reply can
// recognise that it already happened.
func newNonce() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// createScript stores a new run and its indexes in one step, and notes
// what the indexes say of it ("ix", "ixat": active, with work, no deadline;
// see saveScript), so its first save rewrites none that stay the same.
// KEYS: run, runs, active, work, user (or ""), queues.
// ARGV: id, data, status, created ms, updated ms, nonce, queue.
var createScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'nonce') == ARGV[6] then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'v', 1, 'data', ARGV[2], 'status', ARGV[3], 'fence', 0, 'nonce', ARGV[6], 'ix', '01:0', 'ixat', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
if KEYS[5] ~= '' then redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1]) end
redis.call('SADD', KEYS[6], ARGV[7])
return 1
`)

// Create stores a new run at Version 1, with its indexes, atomically.
func (s *Store) Create(ctx context.Context, r *pipeline.Run) error {
	r.Version = 1
	data, texts, err := s.encode(r, nil)
	if err != nil {
		return err
	}
	if len(texts) > 0 {
		return fmt.Errorf("run %s: a new run has no pages", r.ID)
	}
	userKey := ""
	if r.RequestedBy != "" {
		userKey = s.userKey(r.RequestedBy)
	}
	nonce := newNonce()
	res, err := createScript.Run(ctx, s.rdb,
		[]string{s.runKey(r.ID), s.prefix + "runs", s.prefix + "runs:active", s.workKey(r.Origin.Queue), userKey, s.prefix + "queues"},
		r.ID, data, string(r.Status), r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli(), nonce, r.Origin.Queue).Int()
	if err != nil {
		return fmt.Errorf("create run %s: %w", r.ID, err)
	}
	if res == 0 {
		return fmt.Errorf("run %s already exists", r.ID)
	}
	s.seen.put(r.ID, 1)
	s.created.put(r.ID, createdRun{data: data, nonce: nonce})
	return nil
}

// Load returns the run, or pipeline.ErrNotFound.
func (s *Store) Load(ctx context.Context, id string) (*pipeline.Run, error) {
	r, _, err := s.load(ctx, id, false)
	return r, err
}

// LoadForStep returns the run and who asked to cancel it ("" for no one),
// in one round trip: what a worker reads before each step.
//
// The first read of a run this process created (a worker taking the run it
// was just handed) is one command, not three: the probe of ProbeForStep
// (version, the nonce of the save that wrote it, the cancel request), and
// when the stored run is still the one Create wrote (version 1, Create's
// nonce), the record Create wrote is decoded instead of read again; a new
// run has no page texts. Anything else — a run saved since by anyone, or
// gone — is read in full. (A cancel request made by a process of an
// earlier version, key only, is seen at the next full read, as with
// ProbeForStep.)
func (s *Store) LoadForStep(ctx context.Context, id string) (*pipeline.Run, string, error) {
	if c, ok := s.takeCreated(id); ok {
		floor := s.watermark(id)
		vals, err := s.rdb.HMGet(ctx, s.runKey(id), "v", "nonce", "cancel").Result()
		if err != nil {
			return nil, "", err
		}
		if len(vals) == 3 && vals[0] == "1" && vals[1] == c.nonce {
			r, err := s.decodeRun(id, []any{"1", string(c.data)}, floor)
			if err != nil {
				return nil, "", err
			}
			if s.texts.get(id) != nil {
				s.texts.put(id, map[int]bool{})
			}
			by, _ := vals[2].(string)
			return r, by, nil
		}
	}
	return s.load(ctx, id, true)
}

// takeCreated returns (and forgets) the run as this process created it, if
// it has not been read or saved since.
func (s *Store) takeCreated(id string) (createdRun, bool) {
	s.created.mu.Lock()
	defer s.created.mu.Unlock()
	c, ok := s.created.items[id]
	delete(s.created.items, id)
	return c, ok
}

// ProbeForStep returns the stored version of the run, the nonce of the
// save that wrote it, and who asked to cancel it, in one round trip,
// without reading the run: what a worker that saved the run itself reads
// before its next step, to know whether its copy is still the stored one.
// A missing run is pipeline.ErrNotFound.
//
// It is one command: the cancel request is read from the run's hash, where
// RequestCancel writes it beside its own key. (A request made by a process
// of an earlier version writes only the key: the worker sees it at its next
// full read of the run, LoadForStep, at the latest when it releases the
// lease.)
func (s *Store) ProbeForStep(ctx context.Context, id string) (pipeline.StepProbe, error) {
	floor := s.watermark(id)
	vals, err := s.rdb.HMGet(ctx, s.runKey(id), "v", "nonce", "cancel").Result()
	if err != nil {
		return pipeline.StepProbe{}, err
	}
	if len(vals) != 3 || vals[0] == nil {
		return pipeline.StepProbe{}, fmt.Errorf("run %s: %w", id, pipeline.ErrNotFound)
	}
	v, _ := vals[0].(string)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return pipeline.StepProbe{}, fmt.Errorf("run %s has a bad version %q", id, v)
	}
	nonce, _ := vals[1].(string)
	by, _ := vals[2].(string)
	s.observeVersion(id, n, floor)
	return pipeline.StepProbe{Version: n, SaveNonce: nonce, CancelBy: by}, nil
}

// load reads the run with its page texts and, when asked, its cancel
// request, in one pipeline.
func (s *Store) load(ctx context.Context, id string, withCancel bool) (*pipeline.Run, string, error) {
	var meta *redis.SliceCmd
	var pages *redis.MapStringStringCmd
	var cancel *redis.StringCmd
	floor := s.watermark(id)
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		meta = p.HMGet(ctx, s.runKey(id), "v", "data")
		pages = p.HGetAll(ctx, s.pagesKey(id))
		if withCancel {
			cancel = p.Get(ctx, s.cancelKey(id))
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, "", err
	}
	r, err := s.decodeRun(id, meta.Val(), floor)
	if err != nil {
		return nil, "", err
	}
	by := ""
	if cancel != nil {
		by = cancel.Val()
	}
	stored := make(map[int]bool, len(pages.Val()))
	for k, text := range pages.Val() {
		n, err := strconv.Atoi(k)
		if err != nil {
			continue
		}
		stored[n] = true
		for i := range r.Pages {
			if r.Pages[i].SourceID == n {
				r.Pages[i].Text = text
			}
		}
	}
	if s.texts.get(id) != nil {
		// This process is advancing the run and remembers which texts it
		// stored; what was just read is the truth (texts of a write Redis
		// lost are gone, and must be sent again).
		s.texts.put(id, stored)
	}
	return r, by, nil
}

// loadMeta returns the run without its page texts (for indexes and lists).
func (s *Store) loadMeta(ctx context.Context, id string) (*pipeline.Run, error) {
	floor := s.watermark(id)
	vals, err := s.rdb.HMGet(ctx, s.runKey(id), "v", "data").Result()
	if err != nil {
		return nil, err
	}
	return s.decodeRun(id, vals, floor)
}

// decodeRun decodes a run read from Redis; floor is the run's watermark
// taken before the read was sent (see observeVersion).
func (s *Store) decodeRun(id string, vals []any, floor int64) (*pipeline.Run, error) {
	var r pipeline.Run
	v, err := decodeVersioned("run", id, vals, pipeline.ErrNotFound, &r)
	if err != nil {
		return nil, err
	}
	r.Version = v
	s.observeVersion(id, v, floor)
	return &r, nil
}

// saveScript writes the run only if its stored version equals the one the
// writer read and, for a lease holder, its fence is still the run's; it
// stores new page texts and keeps every index and the retention in step (a
// finished run never changes again, so only its last save sets an expiry).
// A write retried after a lost reply finds its own nonce and succeeds.
//
// The indexes (active, work, timers) are written when what they say of the
// run changes ("ix": done, work, deadline) or their scores are older than
// the refresh interval ("ixat"), not on every save: a worker carrying a run
// through its steps saves several times a second, and each index write was
// a command. Even then only the entries that need it are written: the
// active entry and a work entry (scored by save time) are refreshed, an
// entry that is absent and stays absent is not removed again, and the
// timer entry (scored by its deadline) only changes with the deadline.
// Both fields live in the run's hash, written by this script alone, so
// they always describe the indexes as they are.
//
// Last, when the run has watchers ("watchers", counted by Watch) other than
// the saving process's own (ARGV 15: those it tells in memory), it
// announces the run on its channel ({p}saved:{id}): the new version, a
// space, and the data written, in the same round trip, so whoever follows
// the run has it when it changes, without polling or reading it back. A
// run nobody else follows is not announced: a PUBLISH per save was a
// command per save. The announcement is a courtesy: if Redis refuses it (a
// user without PUBLISH in its ACL), the save still holds and Watch's
// safety net reads it.
//
// KEYS: run, pages, active, work, timers.
// ARGV: 1 version, 2 fence (0: no lease), 3 nonce, 4 data, 5 status,
// 6 updated ms, 7 done ("1": finished and shown), 8 id, 9 work ("1"/"0"),
// 10 deadline ms ("0": none), 11 retention ms, 12 page retention ms,
// 13 index refresh ms, 14 channel, 15 the saver's own watchers,
// 16… pairs of page source id and text.
// Returns 1 saved, 0 version conflict, -1 no such run, -2 fence moved.
var saveScript = newScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'fence', 'nonce', 'ix', 'ixat', 'watchers')
local v = cur[1]
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then
  if tonumber(v) == tonumber(ARGV[1]) + 1 and cur[3] == ARGV[3] then return 1 end
  return 0
end
local fence = tonumber(ARGV[2])
if fence > 0 and tonumber(cur[2] or '0') ~= fence then return -2 end
local ix = ARGV[7] .. ARGV[9] .. ':' .. ARGV[10]
local at = tonumber(ARGV[6])
local age = at - tonumber(cur[5] or '0')
if cur[4] == ix and ARGV[7] ~= '1' and age >= 0 and age < tonumber(ARGV[13]) then
  redis.call('HSET', KEYS[1], 'v', tonumber(v) + 1, 'data', ARGV[4], 'status', ARGV[5], 'nonce', ARGV[3])
else
  redis.call('HSET', KEYS[1], 'v', tonumber(v) + 1, 'data', ARGV[4], 'status', ARGV[5], 'nonce', ARGV[3], 'ix', ix, 'ixat', ARGV[6])
  if ARGV[7] == '1' then
    redis.call('ZREM', KEYS[3], ARGV[8])
    redis.call('PEXPIRE', KEYS[1], ARGV[11])
  else
    redis.call('ZADD', KEYS[3], ARGV[6], ARGV[8])
  end
  local was = cur[4] or ''
  if ARGV[9] == '1' then
    redis.call('ZADD', KEYS[4], ARGV[6], ARGV[8])
  elseif string.sub(was, 2, 2) ~= '0' then
    redis.call('ZREM', KEYS[4], ARGV[8])
  end
  if string.sub(was, 4) ~= ARGV[10] then
    if ARGV[10] ~= '0' then
      redis.call('ZADD', KEYS[5], ARGV[10], ARGV[8])
    else
      redis.call('ZREM', KEYS[5], ARGV[8])
    end
  end
end
if #ARGV >= 16 then
  local hs = {}
  for i = 16, #ARGV do hs[#hs + 1] = ARGV[i] end
  redis.call('HSET', KEYS[2], unpack(hs))
end
if ARGV[7] == '1' then redis.call('PEXPIRE', KEYS[2], ARGV[12]) end
if tonumber(cur[6] or '0') > tonumber(ARGV[15]) then
  redis.pcall('PUBLISH', ARGV[14], (tonumber(v) + 1) .. ' ' .. ARGV[4])
end
return 1
`)

// Save writes r if the stored version still equals r.Version and, when
// r.Fence is set, the stored fence equals r.Fence; then it increments
// r.Version. Otherwise it returns pipeline.ErrConflict or
// pipeline.ErrLeaseLost. A reply lost on the way (a timeout, a dropped
// connection) is reported as pipeline.ErrUnknownOutcome.
func (s *Store) Save(ctx context.Context, r *pipeline.Run) error {
	stored := s.texts.get(r.ID)
	data, texts, err := s.encode(r, stored)
	if err != nil {
		return err
	}
	// A finished run stays in the active index until its outcome was shown.
	done := "0"
	if r.Status.Final() && r.Presented {
		done = "1"
	}
	work := "0"
	if r.NeedsWorker() {
		work = "1"
	}
	deadline := "0"
	if d := r.Deadline(); !d.IsZero() {
		deadline = strconv.FormatInt(d.UnixMilli(), 10)
	}
	nonce := newNonce()
	args := []any{r.Version, r.Fence, nonce, data, string(r.Status), r.UpdatedAt.UnixMilli(), done, r.ID, work, deadline,
		s.opts.Retention.Milliseconds(), s.opts.PageRetention.Milliseconds(), s.opts.IndexRefresh.Milliseconds(), s.savedChannel(r.ID),
		s.watchers.count(r.ID)}
	for id, text := range texts {
		args = append(args, id, text)
	}
	keys := []string{s.runKey(r.ID), s.pagesKey(r.ID), s.prefix + "runs:active", s.workKey(r.Origin.Queue), s.timersKey(r.Origin.Queue)}
	res, err := saveScript.Run(ctx, s.rdb, keys, args...).Int()
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.ID, classify(err))
	}
	switch res {
	case 1:
		s.created.del(r.ID)
		r.Version++
		r.SaveNonce = nonce
		s.remember(r, stored, len(texts) > 0)
		s.watchers.tell(r.ID, r.Version, data)
		return nil
	case 0:
		return fmt.Errorf("save run %s at version %d: %w", r.ID, r.Version, pipeline.ErrConflict)
	case -2:
		return fmt.Errorf("save run %s with fence %d: %w", r.ID, r.Fence, pipeline.ErrLeaseLost)
	default:
		return fmt.Errorf("save run %s: %w", r.ID, pipeline.ErrNotFound)
	}
}

// remember notes what this process knows of a run it saved: its version
// (to notice lost writes) and, while a worker is advancing it, which page
// texts are stored (so the next save sends only new ones). A run that waits
// for a person, was interrupted, or has finished and been shown is not
// being advanced: nothing about it is kept but its version, and not even
// that once it is finished and shown.
func (s *Store) remember(r *pipeline.Run, stored map[int]bool, sentTexts bool) {
	if r.Status.Final() && r.Presented {
		s.seen.del(r.ID)
	} else {
		s.seen.put(r.ID, r.Version)
	}
	// A finished run whose outcome was not shown yet is still the worker's:
	// it shows it and saves that it did, and that save sends no page text
	// again (one HSET a run).
	shown := r.Status.Final() && r.Presented
	if shown || r.Status == pipeline.StatusWaiting || r.Status == pipeline.StatusInterrupted {
		s.texts.del(r.ID)
		return
	}
	if stored == nil || sentTexts {
		all := make(map[int]bool, len(r.Pages))
		for _, p := range r.Pages {
			all[p.SourceID] = true
		}
		s.texts.put(r.ID, all)
	}
}

// encode returns the run's JSON without page texts, and the texts of the
// pages not in stored (every page when stored is nil), by source id.
func (s *Store) encode(r *pipeline.Run, stored map[int]bool) ([]byte, map[int]string, error) {
	texts := map[int]string{}
	cp := *r
	cp.Pages = make([]pipeline.Page, len(r.Pages))
	for i, p := range r.Pages {
		if p.Text != "" && !stored[p.SourceID] {
			texts[p.SourceID] = p.Text
		}
		p.Text = ""
		cp.Pages[i] = p
	}
	data, err := json.Marshal(&cp)
	if err != nil {
		return nil, nil, fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	return data, texts, nil
}

// classify marks errors after which a write may or may not have happened:
// the command was sent, but no reply came back. An error reply from Redis,
// or a connection that could not be made, means nothing was written.
func classify(err error) error {
	var rerr redis.Error
	switch {
	case errors.As(err, &rerr):
		return err
	case isDialError(err):
		return err
	}
	return fmt.Errorf("%w: %w", pipeline.ErrUnknownOutcome, err)
}

// List returns runs, newest first, without their page texts.
func (s *Store) List(ctx context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	key := s.prefix + "runs"
	if f.RequestedBy != "" {
		key = s.userKey(f.RequestedBy)
	}
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: 0, Stop: limit - 1, Rev: true}).Result()
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(ids))
	floors := make([]int64, len(ids))
	for i, id := range ids {
		keys[i] = s.runKey(id)
		floors[i] = s.watermark(id)
	}
	vals, err := loadVersioned(ctx, s.rdb, keys)
	if err != nil {
		return nil, err
	}
	runs := make([]*pipeline.Run, 0, len(ids))
	for i, id := range ids {
		r, err := s.decodeRun(id, vals[i], floors[i])
		if errors.Is(err, pipeline.ErrNotFound) {
			continue // expired; Prune removes it from the index
		}
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// cancelScript records a cancel request: in its own key ({p}cancel:{id}),
// which every version reads, and in the run's hash ("cancel"), which a
// worker's probe between steps reads with the version in one command. A
// run that does not exist gets no hash. KEYS: cancel, run. ARGV: by, ttl ms.
var cancelScript = newScript(`
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'cancel', ARGV[1]) end
return 1
`)

// RequestCancel marks a run to stop at its next step boundary.
func (s *Store) RequestCancel(ctx context.Context, runID, by string) error {
	if by == "" {
		by = "someone"
	}
	return cancelScript.Run(ctx, s.rdb, []string{s.cancelKey(runID), s.runKey(runID)}, by, (30 * 24 * time.Hour).Milliseconds()).Err()
}

// CancelRequested reports who asked to cancel the run, or "".
func (s *Store) CancelRequested(ctx context.Context, runID string) (string, error) {
	by, err := s.rdb.Get(ctx, s.cancelKey(runID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return by, err
}

// WorkRuns returns runs of the queue a worker has something to do for (not
// those waiting for a person) that were last saved before the given time,
// oldest first.
func (s *Store) WorkRuns(ctx context.Context, queue string, before time.Time, limit int) ([]string, error) {
	return s.rangeBefore(ctx, s.workKey(queue), before, limit)
}

// rangeBefore lists the members of a zset scored in ms before t, lowest first.
func (s *Store) rangeBefore(ctx context.Context, key string, t time.Time, limit int) ([]string, error) {
	return s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{
		Key: key, ByScore: true, Start: "-inf", Stop: "(" + strconv.FormatInt(t.UnixMilli(), 10), Count: int64(limit),
	}).Result()
}

// DueTimers returns runs of the queue whose checkpoint deadline is before
// the given time, earliest first.
func (s *Store) DueTimers(ctx context.Context, queue string, before time.Time, limit int) ([]string, error) {
	return s.rangeBefore(ctx, s.timersKey(queue), before, limit)
}

// OldestWork returns the runs of the queue with work, oldest first, with
// the time of their last save.
func (s *Store) OldestWork(ctx context.Context, queue string, limit int) ([]redis.Z, error) {
	return s.rdb.ZRangeWithScores(ctx, s.workKey(queue), 0, int64(limit-1)).Result()
}

// ClaimRescue reports whether this caller may rescue the run now: at most
// one rescue per window, whichever replica asks first.
func (s *Store) ClaimRescue(ctx context.Context, runID string, window time.Duration) (bool, error) {
	return s.rdb.SetNX(ctx, s.prefix+"rescued:"+runID, "1", window).Result()
}

// CountActive counts unfinished runs by status (at most the 10 000 most
// recently saved), for the runs-by-state gauge.
func (s *Store) CountActive(ctx context.Context) (map[string]int, error) {
	ids, err := s.rdb.ZRangeArgs(ctx, redis.ZRangeArgs{Key: s.prefix + "runs:active", Start: 0, Stop: 9999, Rev: true}).Result()
	if err != nil {
		return nil, err
	}
	cmds := make([]*redis.StringCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGet(ctx, s.runKey(id), "status")
		}
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	counts := map[string]int{}
	for _, c := range cmds {
		if st, err := c.Result(); err == nil {
			counts[st]++
		}
	}
	return counts, nil
}

// Ping checks that Redis answers.
func (s *Store) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }
