package redisstore

// Reading runs: Load, LoadForStep and ProbeForStep (what a worker reads
// before each step), the full read with page texts, the read without them
// (loadMeta), and decodeRun, which notes the version read.

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

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
// (version, the nonce of the save that wrote it, the cancel request) — or
// none, when the lease the caller holds was taken by this process's Locker
// of the same DB, whose script read the same fields in the step that took
// it (what is read moves from just after the take to the take) — and
// when the stored run is still the one Create wrote (version 1, Create's
// nonce), the record Create wrote is decoded instead of read again; a new
// run has no page texts. Anything else — a run saved since by anyone, or
// gone — is read in full. (A cancel request made by a process of an
// earlier version, key only, is seen at the next full read, as with
// ProbeForStep.)
func (s *Store) LoadForStep(ctx context.Context, id string) (*pipeline.Run, string, error) {
	if c, ok := s.takeCreated(id); ok {
		floor := s.watermark(id)
		var vals []any
		if p, ok := s.takenProbe(id); ok {
			vals = []any{strconv.FormatInt(p.Version, 10), p.SaveNonce, p.CancelBy}
		} else {
			var err error
			if vals, err = s.rdb.HMGet(ctx, s.runKey(id), "v", "nonce", "cancel").Result(); err != nil {
				return nil, "", err
			}
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

// takenProbe returns (and forgets) what the run's hash said when this
// process last took its lease (Locker of the same DB): the caller holds
// that lease, taken just before.
func (s *Store) takenProbe(id string) (pipeline.StepProbe, bool) {
	if s.takenProbes == nil {
		return pipeline.StepProbe{}, false
	}
	return s.takenProbes.pop(id)
}

// takeCreated returns (and forgets) the run as this process created it, if
// it has not been read or saved since.
func (s *Store) takeCreated(id string) (createdRun, bool) {
	return s.created.pop(id)
}

// ProbeForStep returns the stored version of the run, the nonce of the
// save that wrote it, and who asked to cancel it, in one round trip,
// without reading the run: what a worker that saved the run itself reads
// before its next step, to know whether its copy is still the stored one,
// when its save's reply did not say (Run.SaveProbe), and after it released
// the lease. A missing run is pipeline.ErrNotFound.
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
