//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// digests is a Runner that finishes every digest at once and counts them.
type digests struct {
	mu   sync.Mutex
	runs map[string]*pipeline.Run
}

func (d *digests) Start(_ context.Context, req pipeline.Request) (*pipeline.Run, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r := &pipeline.Run{ID: fmt.Sprintf("r-%d", len(d.runs)+1), Question: req.Question, Origin: req.Origin,
		Status: pipeline.StatusCompleted, Report: &pipeline.Report{NothingNew: true}, Presented: true}
	d.runs[r.ID] = r
	c := *r
	return &c, nil
}

func (d *digests) Load(_ context.Context, id string) (*pipeline.Run, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.runs[id]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	c := *r
	return &c, nil
}

// Cancel cancels nothing: every digest here completes at once.
func (d *digests) Cancel(context.Context, string, string) error { return nil }

func (d *digests) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.runs)
}

// diesAfterClaim is a replica's stream store whose process dies right after
// it claimed a fire: nothing after the claim is written.
type diesAfterClaim struct {
	*redisstore.Streams
	dead bool
}

var errDied = errors.New("the replica died")

func (s *diesAfterClaim) ClaimFire(ctx context.Context, id string, fire time.Time, ttl time.Duration) (bool, error) {
	ok, err := s.Streams.ClaimFire(ctx, id, fire, ttl)
	if ok && err == nil && !s.dead {
		s.dead = true
		return false, errDied
	}
	return ok, err
}

// TestCronTickDuringAReplicasDeath: replica A claims a stream's 09:00 fire
// and dies before starting the digest; replica B, ticking beside it, fires
// it once the claim lapses (ClaimTTL), and the fire makes exactly one digest.
func TestCronTickDuringAReplicasDeath(t *testing.T) {
	const claimTTL = 2 * time.Second
	srv, _ := redistest.Start(t)
	_, ca := redistest.Connect(t, srv.URL)
	_, cb := redistest.Connect(t, srv.URL)
	runner := &digests{runs: map[string]*pipeline.Run{}}
	clock := researchtest.NewClock(time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC))
	storeA := &diesAfterClaim{Streams: redisstore.NewStreams(ca, "")}
	svc := func(store scheduler.Store) *scheduler.Service {
		s, err := scheduler.NewService(scheduler.ServiceConfig{Store: store, Runner: runner, Clock: clock, ClaimTTL: claimTTL})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := svc(storeA), svc(redisstore.NewStreams(cb, ""))
	ctx := context.Background()
	if _, err := b.Create(ctx, scheduler.Spec{
		Channel: "C0DIGEST", Purpose: "Track the Nordic heat pump market", Name: "Nordics", Type: scheduler.TypeMarket,
		BusinessGoals: []string{"Spot pricing moves"}, ExpectedOutcomes: "Better pricing decisions", FocusAreas: []string{"Nordics"},
		Keywords: []string{"heat pump"}, Competitors: []string{"NIBE"}, Frequency: scheduler.Daily, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}, "UOWNER"); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 11, 23, 9, 0, 5, 0, time.UTC))
	if err := a.Tick(ctx); !errors.Is(err, errDied) {
		t.Fatalf("replica A's tick: %v, want it to die after its claim", err)
	}
	died := time.Now()
	var took time.Duration
	eventually(t, 10*claimTTL, "replica B firing the digest", func() bool {
		if err := b.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if runner.count() > 0 {
			took = time.Since(died)
			return true
		}
		return false
	})
	for range 5 { // more ticks from both, A restarted: still one digest
		if err := b.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		if err := a.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := defaults
	s.claimTTL = claimTTL
	within(t, "a replica died after claiming the 09:00 fire: the other fired it after", took, bound[time.Duration]{
		"ClaimTTL + 1 s of ticks", func(x settings) time.Duration { return x.claimTTL + time.Second },
	}, s)
	within(t, "digests for one fire", runner.count(), nothingTwice, s)
}
