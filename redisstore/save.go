package redisstore

// Writing runs: Create stores a new run, Save writes one with a version
// and fence check, each in one script that keeps the indexes in step;
// then what the process remembers of the run (remember) and which errors
// leave the outcome unknown (classify).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

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
// Given a lease key (KEYS[7]), it also takes the run's lease with the
// token ARGV[8] for ARGV[9] ms, as the Locker's take would (SET NX PX),
// and writes the fence 1 — the first holding's — in the same step: the run
// is created leased (CreateLeased). When that lease key is somehow held
// already, it stores nothing.
// KEYS: run, runs, active, work, user (or ""), queues, lease (or "").
// ARGV: id, data, status, created ms, updated ms, nonce, queue, lease
// token, lease ms. Returns 1 created (2 created leased; for the same
// create retried: 2 when its lease is still its own), 0 when the id is
// taken, 3 when the lease could not be taken (nothing stored).
var createScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if redis.call('HGET', KEYS[1], 'nonce') == ARGV[6] then
    if KEYS[7] ~= '' and redis.call('GET', KEYS[7]) == ARGV[8] then return 2 end
    return 1
  end
  return 0
end
local fence = 0
if KEYS[7] ~= '' then
  if not redis.call('SET', KEYS[7], ARGV[8], 'NX', 'PX', ARGV[9]) then return 3 end
  fence = 1
end
redis.call('HSET', KEYS[1], 'v', 1, 'data', ARGV[2], 'status', ARGV[3], 'fence', fence, 'nonce', ARGV[6], 'ix', '01:0', 'ixat', ARGV[5])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[5], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[1])
if KEYS[5] ~= '' then redis.call('ZADD', KEYS[5], ARGV[4], ARGV[1]) end
redis.call('SADD', KEYS[6], ARGV[7])
return 1 + fence
`)

// Create stores a new run at Version 1, with its indexes, atomically.
func (s *Store) Create(ctx context.Context, r *pipeline.Run) error {
	_, err := s.create(ctx, r, 0)
	return err
}

// CreateLeased is Create for a run this process's worker will advance at
// once (the engine asks for it when Queue.RunsHereAtOnce): the create
// script also takes the run's lease, and the Locker of the same DB adopts
// it from memory at the worker's first Lock (Locker.adopt) instead of
// taking it with a script of its own — the fence is the create's, checked
// by every save as any holder's. A lease the worker does not adopt in time is given back then
// and taken anew; one whose process died expires with its TTL, and claim
// passes recover the run as any dead worker's. A Watch of the run started
// here is handed the run as created first, in memory (the first thing a
// follower shows). It reports false, having stored nothing, without a
// Locker of the same DB (the lease's length is unknown) or when the lease
// key is held already.
func (s *Store) CreateLeased(ctx context.Context, r *pipeline.Run) (bool, error) {
	if s.createdLeases == nil {
		return false, nil
	}
	ttl := time.Duration(s.createdLeases.ttl.Load())
	if ttl <= 0 {
		return false, nil
	}
	return s.create(ctx, r, ttl)
}

// create is Create, taking the run's lease for this process with the
// create when ttl is set (and reporting whether it did).
func (s *Store) create(ctx context.Context, r *pipeline.Run, ttl time.Duration) (bool, error) {
	r.Version = 1
	data, texts, err := s.encode(r, nil)
	if err != nil {
		return false, err
	}
	if len(texts) > 0 {
		return false, fmt.Errorf("run %s: a new run has no pages", r.ID)
	}
	userKey := ""
	if r.RequestedBy != "" {
		userKey = s.userKey(r.RequestedBy)
	}
	nonce := newNonce()
	storedNothing := s.private.creating(r.Origin.Queue, r.ID)
	lockKey, token, takenAt := "", "", time.Time{}
	if ttl > 0 {
		lockKey, token, takenAt = leaseKey(s.prefix, r.ID), newLeaseToken(), s.createdLeases.now()
	}
	res, err := createScript.Run(ctx, s.rdb,
		[]string{s.runKey(r.ID), s.prefix + "runs", s.prefix + "runs:active", s.workKey(r.Origin.Queue), userKey, s.prefix + "queues", lockKey},
		r.ID, data, string(r.Status), r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli(), nonce, r.Origin.Queue, token, ttl.Milliseconds()).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("create run %s: %w", r.ID, err)
	case res == 0:
		storedNothing()
		return false, fmt.Errorf("run %s already exists", r.ID)
	case res == 3:
		storedNothing()
		return false, nil
	}
	s.seen.put(r.ID, 1)
	s.created.put(r.ID, createdRun{data: data, nonce: nonce})
	if res == 2 {
		s.createdLeases.leases.put(r.ID, createdLease{token: token, fence: 1, ttl: ttl, takenAt: takenAt,
			probe: pipeline.StepProbe{Version: 1, SaveNonce: nonce}})
		s.createdForWatch.put(r.ID, data)
	}
	return res == 2, nil
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
// The last save of a finished run made under a lease (done, fence) also
// gives the lease back: it deletes the lease key (KEYS[6]). The fence it
// checked in the same step says nobody took the lease since the writer
// did (every take moves the fence), so the key is the writer's, or gone.
// Nothing of the run is left to do under the lease, and Release, told by
// the store (givenBack), sends nothing.
//
// The last save of a finished run given a queue to forget (ARGV 17: the
// run's own queue, or "") removes that queue from {p}queues (KEYS[7]): the
// saver's process made the queue for itself alone and this was the last
// of its runs there not finished and shown (privateQueues), so with this
// save's removals its work and deadline indexes are empty, and Redis has
// deleted them; only the name is left. A run created there later
// registers the queue again (createScript). A save refused forgets
// nothing.
//
// A writer that saved its copy itself (Run.SaveNonce) writes only over
// that save: the stored nonce must still be its own. After a write Redis
// lost (a failover to a replica that was behind) another writer may have
// saved the run at the same version number, with other contents; the
// version alone would not tell.
//
// A write answers with who asked to cancel the run ("cancel", read with the
// version it checks): what ProbeForStep would read right after it, so the
// worker that goes straight on to its next step needs no probe (see
// Run.SaveProbe).
//
// KEYS: run, pages, active, work, timers, lease, queues.
// ARGV: 1 version, 2 fence (0: no lease), 3 nonce, 4 data, 5 status,
// 6 updated ms, 7 done ("1": finished and shown), 8 id, 9 work ("1"/"0"),
// 10 deadline ms ("0": none), 11 retention ms, 12 page retention ms,
// 13 index refresh ms, 14 channel, 15 the saver's own watchers,
// 16 the nonce of the save that produced the writer's copy ("" for a copy
// that was read), 17 the queue to forget when done ("" for none),
// 18… pairs of page source id and text.
// Returns {1, cancel request or ""} saved, 1 saved before (the same write
// retried: the cancel request is not read), 0 version conflict, -1 no such
// run, -2 fence moved.
var saveScript = newScript(`
local cur = redis.call('HMGET', KEYS[1], 'v', 'fence', 'nonce', 'ix', 'ixat', 'watchers', 'cancel')
local v = cur[1]
if not v then return -1 end
if tonumber(v) ~= tonumber(ARGV[1]) then
  if tonumber(v) == tonumber(ARGV[1]) + 1 and cur[3] == ARGV[3] then return 1 end
  return 0
end
if ARGV[16] ~= '' and cur[3] ~= ARGV[16] then return 0 end
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
if #ARGV >= 18 then
  local hs = {}
  for i = 18, #ARGV do hs[#hs + 1] = ARGV[i] end
  redis.call('HSET', KEYS[2], unpack(hs))
end
if ARGV[7] == '1' then redis.call('PEXPIRE', KEYS[2], ARGV[12]) end
if ARGV[7] == '1' and fence > 0 and KEYS[6] then redis.call('DEL', KEYS[6]) end
if ARGV[7] == '1' and ARGV[17] ~= '' then redis.call('SREM', KEYS[7], ARGV[17]) end
if tonumber(cur[6] or '0') > tonumber(ARGV[15]) then
  redis.pcall('PUBLISH', ARGV[14], (tonumber(v) + 1) .. ' ' .. ARGV[4])
end
return {1, cur[7] or ''}
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
		// Rounded up: a worker takes the run when the index says the
		// deadline came, which must never be before it.
		deadline = strconv.FormatInt(ceilMilli(d), 10)
	}
	// The last run of this process's private queue to finish forgets the
	// queue with its last save (see saveScript).
	forget, forgotten := false, func(bool) {}
	if done == "1" {
		forget, forgotten = s.private.finishing(r.Origin.Queue, r.ID)
	}
	forgetQueue := ""
	if forget {
		forgetQueue = r.Origin.Queue
	}
	nonce := newNonce()
	args := []any{r.Version, r.Fence, nonce, data, string(r.Status), r.UpdatedAt.UnixMilli(), done, r.ID, work, deadline,
		s.opts.Retention.Milliseconds(), s.opts.PageRetention.Milliseconds(), s.opts.IndexRefresh.Milliseconds(), s.savedChannel(r.ID),
		s.watchers.count(r.ID), r.SaveNonce, forgetQueue}
	for id, text := range texts {
		args = append(args, id, text)
	}
	keys := []string{s.runKey(r.ID), s.pagesKey(r.ID), s.prefix + "runs:active", s.workKey(r.Origin.Queue), s.timersKey(r.Origin.Queue),
		leaseKey(s.prefix, r.ID), s.prefix + "queues"}
	res, cancelBy, err := saveReply(saveScript.Run(ctx, s.rdb, keys, args...))
	forgotten(err == nil && res == 1)
	if err != nil {
		return fmt.Errorf("save run %s: %w", r.ID, classify(err))
	}
	switch res {
	case 1:
		s.created.del(r.ID)
		r.Version++
		r.SaveNonce = nonce
		r.SaveProbe = nil
		if cancelBy != nil {
			r.SaveProbe = &pipeline.StepProbe{Version: r.Version, SaveNonce: nonce, CancelBy: *cancelBy}
		}
		if done == "1" && r.Fence > 0 && s.givenBack != nil {
			s.givenBack.put(r.ID, r.Fence)
		}
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

// saveReply splits saveScript's reply into its code and, for a write made
// now, who had asked to cancel the run ("" for no one; nil when the reply
// does not say).
func saveReply(cmd *redis.Cmd) (int64, *string, error) {
	code, rest, err := codeAndStrings(cmd, 1)
	if err != nil || rest == nil {
		return code, nil, err
	}
	return code, &rest[0], nil
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
