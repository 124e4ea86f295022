package redisstore

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// TestPageTextsAreStoredApartAndRunsExpireAfterTheyEnd: the page texts live
// in their own key (saves send only new ones) and come back with Load; a
// finished, shown run expires after the retention and its texts sooner; a
// waiting run never expires.
func TestPageTextsAreStoredApartAndRunsExpireAfterTheyEnd(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStoreWithOptions(rdb, StoreOptions{Retention: 48 * time.Hour, PageRetention: time.Hour})
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Load(ctx, "r-1")
	text := strings.Repeat("Heat pumps keep working at -20 °C. ", 200)
	r.Pages = []pipeline.Page{{SourceID: 3, URL: "https://a.example/", Text: text}}
	if err := s.Save(ctx, r); err != nil {
		t.Fatal(err)
	}
	data, _ := rdb.HGet(ctx, "rb:run:r-1", "data").Result()
	if strings.Contains(data, "Heat pumps") || len(data) > 2000 {
		t.Fatalf("the page text is in the run record (%d bytes)", len(data))
	}
	got, _ := s.Load(ctx, "r-1")
	if len(got.Pages) != 1 || got.Pages[0].Text != text {
		t.Fatal("the page text did not come back with the run")
	}
	if ttl := rdb.PTTL(ctx, "rb:run:r-1").Val(); ttl >= 0 {
		t.Fatalf("an unfinished run expires (%v)", ttl)
	}
	got.Status, got.Presented, got.FinishedAt = pipeline.StatusCompleted, true, t0
	if err := s.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "rb:run:r-1").Val(); ttl < 47*time.Hour || ttl > 48*time.Hour {
		t.Errorf("a finished run expires in %v, want the retention (48h)", ttl)
	}
	if ttl := rdb.PTTL(ctx, "rb:run:r-1:pages").Val(); ttl < 59*time.Minute || ttl > time.Hour {
		t.Errorf("its page texts expire in %v, want 1h", ttl)
	}
}

func TestPruneForgetsExpiredRunsAndExpiresOldOnes(t *testing.T) {
	_, rdb := redistest.Start(t)
	s := NewStoreWithOptions(rdb, StoreOptions{Retention: 24 * time.Hour})
	ctx := context.Background()
	for _, id := range []string{"r-gone", "r-old", "r-recent", "r-waiting"} {
		if err := s.Create(ctx, newRun(id, "U1", t0)); err != nil {
			t.Fatal(err)
		}
	}
	// r-gone expired; r-old and r-recent finished before retention existed.
	rdb.Del(ctx, "rb:run:r-gone")
	for id, ended := range map[string]time.Time{"r-old": t0, "r-recent": t0.Add(40 * time.Hour)} {
		r, _ := s.Load(ctx, id)
		r.Status, r.Presented, r.FinishedAt = pipeline.StatusCompleted, true, ended
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
		rdb.Persist(ctx, "rb:run:"+id)
	}
	rep, err := s.Prune(ctx, t0.Add(48*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("prune: %+v", rep)
	if rep.Forgotten != 2 || rep.Deleted != 1 || rep.Expiring != 1 || rep.Kept != 2 {
		t.Fatalf("prune report %+v, want 2 forgotten (r-gone, r-old), 1 deleted (r-old), 1 expiring (r-recent), 2 kept", rep)
	}
	for _, key := range []string{"rb:runs", "rb:runs:by:U1", "rb:work:runs"} {
		if n, _ := rdb.ZScore(ctx, key, "r-gone").Result(); n != 0 {
			t.Errorf("%s still lists r-gone", key)
		}
	}
	if ttl := rdb.PTTL(ctx, "rb:run:r-recent").Val(); ttl < 15*time.Hour || ttl > 16*time.Hour {
		t.Errorf("r-recent expires in %v, want the 16 h left of its retention", ttl)
	}
	if ttl := rdb.PTTL(ctx, "rb:run:r-waiting").Val(); ttl != -1*time.Nanosecond {
		t.Errorf("a waiting run was given an expiry: %v", ttl)
	}
	list, _ := s.List(ctx, pipeline.RunFilter{})
	if len(list) != 2 {
		t.Errorf("List after prune: %v", ids(list))
	}
}

// TestAStoredVersionThatWentBackwardsIsReportedLoudly: an append-only file
// rolled back (or a stale replica promoted) loses saves; a process that saw
// the later version says so at ERROR.
func TestAStoredVersionThatWentBackwardsIsReportedLoudly(t *testing.T) {
	_, rdb := redistest.Start(t)
	var logs bytes.Buffer
	s := NewStoreWithOptions(rdb, StoreOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	snapshot, _ := rdb.HGetAll(ctx, "rb:run:r-1").Result()
	for range 4 {
		r, _ := s.Load(ctx, "r-1")
		if err := s.Save(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(logs.String(), "ERROR") {
		t.Fatalf("logged an error before anything was lost:\n%s", logs.String())
	}
	rdb.HSet(ctx, "rb:run:r-1", snapshot) // the rollback: version 5 → 1
	if _, err := s.Load(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "stored_version=1") || !strings.Contains(logs.String(), "version_seen_before=5") {
		t.Fatalf("the lost saves were not reported loudly:\n%s", logs.String())
	}
	t.Logf("reported: %s", strings.TrimSpace(logs.String()))
}

// loseReplies is a go-redis hook that lets scripts run on the server and
// then loses their replies, as a dropped connection or a read timeout after
// the server committed does: the client sees a network timeout.
type loseReplies struct{ on bool }

func (loseReplies) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *loseReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.on && cmd.Name() == "evalsha" {
			return &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}
		}
		return err
	}
}
func (loseReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestASaveWhoseReplyIsLostIsUnknownAndARetryIsNotDoubled: a save that
// committed but whose reply was lost is reported as of unknown outcome (not
// as a failure), and the same write sent again (go-redis retries it) is
// recognised by its nonce rather than refused as a conflict.
func TestASaveWhoseReplyIsLostIsUnknownAndARetryIsNotDoubled(t *testing.T) {
	srv, rdb := redistest.Start(t)
	s := NewStore(rdb, "")
	ctx := context.Background()
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	lossy := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
	defer lossy.Close()
	hook := &loseReplies{}
	lossy.AddHook(hook)
	w := NewStore(lossy, "")
	r, _ := w.Load(ctx, "r-1")
	if err := saveScript.Load(ctx, rdb).Err(); err != nil {
		t.Fatal(err)
	}
	hook.on = true
	if err := w.Save(ctx, r); !errors.Is(err, pipeline.ErrUnknownOutcome) {
		t.Fatalf("save whose reply was lost = %v, want ErrUnknownOutcome", err)
	}
	if v, _ := rdb.HGet(ctx, "rb:run:r-1", "v").Int(); v != 2 {
		t.Fatalf("version %d: the save should have committed", v)
	}

	// The same write sent twice (the second one a retry) saves once.
	inst := checkpoints.NewInstance(checkpoints.Builtins(t0)[0], "r-1.x", "r-1", nil, nil, nil, t0)
	r, _ = s.Load(ctx, "r-1")
	r.Checkpoints = []checkpoints.Instance{inst}
	data, _, _ := s.encode(r, nil)
	keys := []string{"rb:run:r-1", "rb:run:r-1:pages", "rb:runs:active", "rb:work:runs", "rb:timers:runs"}
	args := []any{r.Version, 0, "nonce-1", data, "queued", 1, "0", "r-1", "1", "0", 1, 1, 1, "rb:saved:r-1", 0, "", ""}
	for i := range 2 {
		if n, _, err := saveReply(saveScript.Run(ctx, rdb, keys, args...)); err != nil || n != 1 {
			t.Fatalf("send %d of one write: %d, %v", i+1, n, err)
		}
	}
	if v, _ := rdb.HGet(ctx, "rb:run:r-1", "v").Int(); v != 3 {
		t.Fatalf("version %d after one write sent twice, want 3", v)
	}
}
