package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

var t0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

func newRun(id, by string, at time.Time) *pipeline.Run {
	return &pipeline.Run{ID: id, Question: "q " + id, RequestedBy: by, Status: pipeline.StatusQueued, Step: pipeline.StepPlan, CreatedAt: at, UpdatedAt: at, Origin: pipeline.Origin{Queue: "runs"}}
}

func TestSaveIsACompareAndSet(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err == nil {
		t.Fatal("a second Create of the same id must fail")
	}
	a, _ := s.Load(ctx, "r-1")
	b, _ := s.Load(ctx, "r-1")
	a.Step = pipeline.StepSearch
	if err := s.Save(ctx, a); err != nil || a.Version != 2 {
		t.Fatalf("first writer: %v (version %d)", err, a.Version)
	}
	b.Step = pipeline.StepFallback
	if err := s.Save(ctx, b); !errors.Is(err, pipeline.ErrConflict) {
		t.Fatalf("stale writer: %v, want ErrConflict", err)
	}
	got, _ := s.Load(ctx, "r-1")
	if got.Step != pipeline.StepSearch || got.Version != 2 {
		t.Fatalf("stored %s v%d: the stale write changed something", got.Step, got.Version)
	}
	if _, err := s.Load(ctx, "nope"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("Load of a missing run: %v", err)
	}

	// Concurrent writers from one version: exactly one wins.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := *got
			if s.Save(ctx, &r) == nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d concurrent writers won, want 1", wins.Load())
	}
}

func TestListFailureWindowsCancelAndActiveRuns(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	for i, id := range []string{"r-a", "r-b", "r-c"} {
		by := "U1"
		if id == "r-b" {
			by = "U2"
		}
		if err := s.Create(ctx, newRun(id, by, t0.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := s.List(ctx, pipeline.RunFilter{})
	if len(all) != 3 || all[0].ID != "r-c" || all[2].ID != "r-a" {
		t.Fatalf("List order: %v", ids(all))
	}
	mine, _ := s.List(ctx, pipeline.RunFilter{RequestedBy: "U1", Limit: 1})
	if len(mine) != 1 || mine[0].ID != "r-c" {
		t.Fatalf("List for U1 limit 1: %v", ids(mine))
	}

	// Failure windows: old failures drop out.
	for _, at := range []time.Time{t0, t0.Add(50 * time.Minute), t0.Add(70 * time.Minute)} {
		if _, err := s.RecordCheckpointFailure(ctx, "plan_review", at, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	fails, _ := s.CheckpointFailures(ctx, "plan_review", t0.Add(75*time.Minute), time.Hour)
	if len(fails) != 2 {
		t.Fatalf("%d failures in the window, want 2", len(fails))
	}

	if _, by, _ := s.LoadForStep(ctx, "r-a"); by != "" {
		t.Fatalf("cancel requested by %q before anyone asked", by)
	}
	_ = s.RequestCancel(ctx, "r-a", "U9")
	if _, by, _ := s.LoadForStep(ctx, "r-a"); by != "U9" {
		t.Fatalf("cancel requested by %q, want U9", by)
	}

	// A finished run stays active (and a rescue candidate) until its outcome
	// was shown; then it leaves both indexes.
	r, _ := s.Load(ctx, "r-a")
	r.Status = pipeline.StatusCompleted
	r.UpdatedAt = t0
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if stale, _ := s.WorkRuns(ctx, "runs", t0.Add(time.Second), 10); len(stale) != 1 || stale[0] != "r-a" {
		t.Fatalf("a finished run whose report was not shown must be rescued; WorkRuns = %v", stale)
	}
	r.Presented = true
	r.UpdatedAt = t0.Add(time.Hour)
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	// A run waiting for a person is no work for a worker.
	c, _ := s.Load(ctx, "r-c")
	inst := checkpoints.NewInstance(checkpoints.Builtins(t0)[0], "r-c.x", "r-c", nil, nil, nil, t0)
	_ = inst.Offer(t0, "engine")
	c.Checkpoints, c.Waiting, c.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if stale, _ := s.WorkRuns(ctx, "runs", t0.Add(48*time.Hour), 10); len(stale) != 1 || stale[0] != "r-b" {
		t.Fatalf("WorkRuns = %v, want only r-b (r-a presented, r-c waits for a person)", stale)
	}
	counts, _ := s.CountActive(ctx)
	if counts["queued"] != 1 || counts["waiting"] != 1 || counts["completed"] != 0 {
		t.Fatalf("CountActive = %v", counts)
	}
	stale, _ := s.WorkRuns(ctx, "runs", t0.Add(90*time.Second), 10)
	if len(stale) != 1 || stale[0] != "r-b" {
		t.Fatalf("WorkRuns = %v, want [r-b] (saved before 09:01:30 and unfinished; r-a finished, r-c later)", stale)
	}
}

func ids(runs []*pipeline.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func TestDefinitionsAreValidatedAndStored(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	for _, d := range checkpoints.Builtins(t0) {
		if err := s.PutDefinition(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	bad := checkpoints.Builtins(t0)[0]
	bad.ID = "Not A Slug!"
	if err := s.PutDefinition(ctx, bad); err == nil {
		t.Fatal("an invalid definition was stored")
	}
	defs, _ := s.Definitions(ctx)
	if len(defs) != len(checkpoints.Builtins(t0)) {
		t.Fatalf("%d definitions", len(defs))
	}
}

// TestSaveRewritesIndexesOnlyWhenTheyWouldChange: saves of a run whose
// index entries would say the same leave them alone until their scores are
// older than the refresh interval; a change of what they say (no more work,
// finished) is written at once.
func TestSaveRewritesIndexesOnlyWhenTheyWouldChange(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStoreWithOptions(rdb, StoreOptions{IndexRefresh: time.Second})
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	score := func(key string) float64 {
		t.Helper()
		v, err := rdb.ZScore(ctx, key, "r-1").Result()
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return v
	}
	save := func(at time.Time) {
		t.Helper()
		r.UpdatedAt = at
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	r.Status = pipeline.StatusRunning
	save(t0.Add(100 * time.Millisecond)) // Create wrote the same entries at t0: left alone
	want := float64(t0.UnixMilli())
	save(t0.Add(600 * time.Millisecond)) // same entries, fresh scores: left alone
	for _, key := range []string{"rb:work:runs", "rb:runs:active"} {
		if got := score(key); got != want {
			t.Errorf("%s score after a save within the refresh interval = %v, want %v", key, got, want)
		}
	}
	save(t0.Add(1200 * time.Millisecond)) // scores older than the interval: refreshed
	want = float64(t0.Add(1200 * time.Millisecond).UnixMilli())
	for _, key := range []string{"rb:work:runs", "rb:runs:active"} {
		if got := score(key); got != want {
			t.Errorf("%s score after the refresh interval = %v, want %v", key, got, want)
		}
	}
	r.Status, r.Presented = pipeline.StatusCompleted, true
	save(t0.Add(1300 * time.Millisecond)) // finished and shown: out of every index at once
	for _, key := range []string{"rb:work:runs", "rb:runs:active"} {
		if n, err := rdb.ZCard(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("%s has %d entries (%v) after the run finished, want none", key, n, err)
		}
	}
	if ttl := rdb.PTTL(ctx, "rb:run:r-1").Val(); ttl <= 0 {
		t.Errorf("finished run has no expiry (PTTL %v)", ttl)
	}
}

// TestProbeForStepSaysTheVersionAndTheCancelRequest: the probe a worker
// sends between steps reports the stored version and who asked to cancel,
// and a run that does not exist as not found.
func TestProbeForStepSaysTheVersionAndTheCancelRequest(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	if _, err := s.ProbeForStep(ctx, "r-none"); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("probe of a missing run: %v, want ErrNotFound", err)
	}
	r := newRun("r-1", "U1", t0)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	want := pipeline.StepProbe{Version: r.Version, SaveNonce: r.SaveNonce}
	if p, err := s.ProbeForStep(ctx, "r-1"); err != nil || p != want || p.SaveNonce == "" {
		t.Fatalf("probe = %+v %v, want %+v nil, with the save's nonce", p, err, want)
	}
	if err := s.RequestCancel(ctx, "r-1", "U2"); err != nil {
		t.Fatal(err)
	}
	want.CancelBy = "U2"
	if p, err := s.ProbeForStep(ctx, "r-1"); err != nil || p != want {
		t.Fatalf("probe after a cancel request = %+v %v, want %+v nil", p, err, want)
	}
	// Another copy saved at the same version number is told apart by its nonce.
	other, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, other); err != nil {
		t.Fatal(err)
	}
	if p, err := s.ProbeForStep(ctx, "r-1"); err != nil || p.SaveNonce != other.SaveNonce || p.SaveNonce == r.SaveNonce {
		t.Fatalf("probe after another save = %+v %v, want the other save's nonce %q", p, err, other.SaveNonce)
	}
}

// TestPageTextsLostWithAWriteAreSentAgain: a worker's save that stored new
// page texts is lost (a failover to a replica that was behind puts the run
// and its texts back as they were). The worker reads the run again and does
// the step again, fetching the same pages: their texts must be sent again,
// although this process remembers having stored them.
func TestPageTextsLostWithAWriteAreSentAgain(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	r.Status, r.Step = pipeline.StatusRunning, pipeline.StepFetch
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, r); err != nil { // a step before the fetch
		t.Fatal(err)
	}
	runBefore, err := rdb.Dump(ctx, "rb:run:r-1").Result()
	if err != nil {
		t.Fatal(err)
	}
	fetched := []pipeline.Page{{SourceID: 1, URL: "https://a.example/", Text: "the page's text"}}
	r.Pages, r.Step = fetched, pipeline.StepAnalyze
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	// The fetch step's save is lost: the run as it was, its texts gone.
	if err := rdb.RestoreReplace(ctx, "rb:run:r-1", 0, runBefore).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(ctx, "rb:run:r-1:pages").Err(); err != nil {
		t.Fatal(err)
	}
	again, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if again.Step != pipeline.StepFetch || len(again.Pages) != 0 {
		t.Fatalf("after the loss the run is at %s with %d pages, want the fetch step again", again.Step, len(again.Pages))
	}
	again.Pages, again.Step = fetched, pipeline.StepAnalyze // the fetch step done again
	if err := s.Save(ctx, again); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) != 1 || got.Pages[0].Text != "the page's text" {
		t.Fatalf("stored pages %+v, want the page with its text: the text was not sent again", got.Pages)
	}
}

// TestSaveWritesOnlyTheIndexEntriesThatChange: the first save of a run
// whose entries are those Create wrote writes none; a refresh of a running
// run's scores rewrites its active and work entries but leaves its (absent)
// timer entry alone; a waiting run's deadline is indexed once, and later
// saves at the same deadline do not touch the timer or the (absent) work
// entry; a new deadline replaces the old one, and the end removes it.
func TestSaveWritesOnlyTheIndexEntriesThatChange(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStoreWithOptions(rdb, StoreOptions{IndexRefresh: time.Second})
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	writes := func(at time.Time) int {
		t.Helper()
		stats := func() int {
			n := 0
			info := rdb.Info(ctx, "commandstats").Val()
			for _, line := range strings.Split(info, "\n") {
				for _, name := range []string{"cmdstat_zadd:calls=", "cmdstat_zrem:calls="} {
					if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name); ok {
						calls, _, _ := strings.Cut(rest, ",")
						c, _ := strconv.Atoi(calls)
						n += c
					}
				}
			}
			return n
		}
		before := stats()
		r.UpdatedAt = at
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
		return stats() - before
	}
	r.Status = pipeline.StatusRunning
	if n := writes(t0.Add(100 * time.Millisecond)); n != 0 {
		t.Errorf("the first save wrote %d index entries, want none (Create wrote the same and noted them)", n)
	}
	if n := writes(t0.Add(1200 * time.Millisecond)); n != 2 {
		t.Errorf("a refresh of a running run wrote %d index entries, want 2 (active, work)", n)
	}
	inst := checkpoints.NewInstance(checkpoints.Builtins(t0)[0], "r-1.x", "r-1", nil, nil, nil, t0)
	if err := inst.Offer(t0, "engine"); err != nil {
		t.Fatal(err)
	}
	deadline := inst.DeadlineAt
	if deadline.IsZero() {
		t.Fatal("the checkpoint has no deadline: the test proves nothing")
	}
	r.Checkpoints, r.Waiting, r.Status = []checkpoints.Instance{inst}, inst.ID, pipeline.StatusWaiting
	if n := writes(t0.Add(1300 * time.Millisecond)); n != 3 {
		t.Errorf("waiting at a checkpoint wrote %d index entries, want 3 (active, out of work, the timer)", n)
	}
	if got := rdb.ZScore(ctx, "rb:timers:runs", "r-1").Val(); got != float64(deadline.UnixMilli()) {
		t.Errorf("timer score %v, want the deadline %v", got, deadline.UnixMilli())
	}
	if n := writes(t0.Add(2500 * time.Millisecond)); n != 1 {
		t.Errorf("a refresh of a waiting run wrote %d index entries, want 1 (active)", n)
	}
	r.Status, r.Presented, r.Waiting = pipeline.StatusCompleted, true, ""
	if n := writes(t0.Add(2600 * time.Millisecond)); n != 2 {
		t.Errorf("the end wrote %d index entries, want 2 (out of active, out of timers)", n)
	}
	for _, key := range []string{"rb:work:runs", "rb:runs:active", "rb:timers:runs"} {
		if n, err := rdb.ZCard(ctx, key).Result(); err != nil || n != 0 {
			t.Errorf("%s has %d entries (%v) after the run finished, want none", key, n, err)
		}
	}
}

// countCommands counts the commands a client sends.
type countCommands struct{ n atomic.Int64 }

func (c *countCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *countCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestAProbeIsOneCommandAndSeesEveryCancelRequest: the probe between steps
// is one command, and it sees a cancel request made through the store; a
// request made by an earlier version (its key alone) is seen by the next
// full read. A cancel request for a run that does not exist creates no run.
func TestAProbeIsOneCommandAndSeesEveryCancelRequest(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	if err := s.RequestCancel(ctx, "r-1", "U2"); err != nil {
		t.Fatal(err)
	}
	c := &countCommands{}
	rdb.AddHook(c)
	if p, err := s.ProbeForStep(ctx, "r-1"); err != nil || p.CancelBy != "U2" {
		t.Fatalf("probe after a cancel request = %+v %v, want cancelled by U2", p, err)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("the probe sent %d commands, want 1", n)
	}
	if err := s.Create(ctx, newRun("r-2", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, "rb:cancel:r-2", "U3", time.Hour).Err(); err != nil { // an earlier version's request
		t.Fatal(err)
	}
	// (Another process's store: the one that created r-2 reads it first with a probe.)
	if _, by, err := NewStore(rdb, "").LoadForStep(ctx, "r-2"); err != nil || by != "U3" {
		t.Fatalf("full read after an earlier version's cancel request: %q %v, want U3", by, err)
	}
	if err := s.RequestCancel(ctx, "r-none", "U2"); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.Exists(ctx, "rb:run:r-none").Result(); err != nil || n != 0 {
		t.Errorf("a cancel request created the run's hash (%d, %v)", n, err)
	}
}

// TestTheFirstStepReadOfARunThisProcessCreatedIsOneCommand: a worker's
// first read of a run its own process created is one command and gives
// what a full read gives, with the cancel request; a run saved by anyone
// since it was created is read in full, at the version they saved.
func TestTheFirstStepReadOfARunThisProcessCreatedIsOneCommand(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	for _, id := range []string{"r-1", "r-2", "r-3"} {
		if err := s.Create(ctx, newRun(id, "U1", t0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RequestCancel(ctx, "r-2", "U2"); err != nil {
		t.Fatal(err)
	}
	other := NewStore(rdb, "") // another process
	stale, err := other.Load(ctx, "r-3")
	if err != nil {
		t.Fatal(err)
	}
	stale.Step = pipeline.StepSearch
	if err := other.Save(ctx, stale); err != nil {
		t.Fatal(err)
	}

	c := &countCommands{}
	rdb.AddHook(c)
	got, by, err := s.LoadForStep(ctx, "r-1")
	if err != nil || by != "" {
		t.Fatalf("first read: %v, cancel %q", err, by)
	}
	if n := c.n.Load(); n != 1 {
		t.Errorf("the first read of a run this process created sent %d commands, want 1", n)
	}
	want, _, err := other.LoadForStep(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if g, w := fmt.Sprintf("%+v", *got), fmt.Sprintf("%+v", *want); g != w || got.Version != 1 {
		t.Errorf("first read differs from a full read:\n%s\n%s", g, w)
	}
	if _, by, err := s.LoadForStep(ctx, "r-2"); err != nil || by != "U2" {
		t.Errorf("first read after a cancel request: %q %v, want U2", by, err)
	}
	r3, _, err := s.LoadForStep(ctx, "r-3")
	if err != nil || r3.Version != 2 || r3.Step != pipeline.StepSearch {
		t.Errorf("a run saved by another process since its creation read as %+v (%v), want its version 2", r3, err)
	}
}

// hsetCalls is how many HSETs the server ran (scripts' included).
func hsetCalls(t *testing.T, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_hset:calls="); ok {
			n, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
			return n
		}
	}
	return 0
}

// TestTheSaveThatRecordsARunWasShownSendsNoPageTextAgain: the worker that
// finished a run still knows which page texts are stored when it saves
// that the outcome was shown, so that save writes the run alone; the texts
// stay stored.
func TestTheSaveThatRecordsARunWasShownSendsNoPageTextAgain(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	r := newRun("r-1", "U1", t0)
	r.Status, r.Step = pipeline.StatusRunning, pipeline.StepAnalyze
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Pages = []pipeline.Page{{SourceID: 1, URL: "https://a.example/", Text: "the page's text"}}
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Status = pipeline.StatusCompleted
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	before := hsetCalls(t, rdb)
	r.Presented = true
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if n := hsetCalls(t, rdb) - before; n != 1 {
		t.Errorf("the save that records the run was shown ran %d HSETs, want 1 (the run's; no page text again)", n)
	}
	got, err := NewStore(rdb, "").Load(ctx, "r-1")
	if err != nil || len(got.Pages) != 1 || got.Pages[0].Text != "the page's text" || !got.Presented {
		t.Fatalf("stored run %+v (%v), want it shown with its page's text", got, err)
	}
}

// TestASaveSaysHowTheRunStoodAndWritesOnlyOverItsOwnSave: a save's reply
// carries what a probe right after it would read (its own version and
// nonce, and the cancel request, none or made before it), so a worker
// going straight on needs no probe; and a copy this store saved is written
// again only while the stored run is that save's: after a write Redis lost,
// another writer's save at the same version number makes it conflict.
func TestASaveSaysHowTheRunStoodAndWritesOnlyOverItsOwnSave(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if p := r.SaveProbe; p == nil || *p != (pipeline.StepProbe{Version: 2, SaveNonce: r.SaveNonce}) {
		t.Fatalf("the save's reply = %+v, want version 2, its nonce %q, no cancel request", p, r.SaveNonce)
	}
	if err := s.RequestCancel(ctx, "r-1", "U2"); err != nil {
		t.Fatal(err)
	}
	before, err := rdb.Dump(ctx, "rb:run:r-1").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	if p := r.SaveProbe; p == nil || p.CancelBy != "U2" || p.Version != 3 {
		t.Fatalf("the save's reply after a cancel request = %+v, want version 3, cancelled by U2", p)
	}
	// Redis loses that save; another writer saves the run it finds, at the
	// version number the worker holds.
	if err := rdb.RestoreReplace(ctx, "rb:run:r-1", 0, before).Err(); err != nil {
		t.Fatal(err)
	}
	other := NewStore(rdb, "")
	o, err := other.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	o.Context = "the other writer's"
	if err := other.Save(ctx, o); err != nil || o.Version != r.Version {
		t.Fatalf("the other writer's save: %v at version %d, want version %d", err, o.Version, r.Version)
	}
	if err := s.Save(ctx, r); !errors.Is(err, pipeline.ErrConflict) {
		t.Fatalf("a save over another writer's save at the same version = %v, want ErrConflict", err)
	}
	if got, _ := s.Load(ctx, "r-1"); got.Context != "the other writer's" {
		t.Errorf("the stored context is %q: the other writer's save was overwritten", got.Context)
	}
}
