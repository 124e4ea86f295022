package scheduler_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestEditWhileTwoSchedulersRun edits a daily stream's time and keywords
// while two schedulers (each with its own connection) tick: the edit is
// saved whole, the new time applies from the next tick (today's 09:00 is
// not repeated, the new 15:00 fires once per day), every scheduled time
// still makes exactly one digest, and the digests before the edit are kept.
func TestEditWhileTwoSchedulersRun(t *testing.T) {
	srv, rdb := redistest.Start(t)
	runner := newFakeRunner()
	runner.finishAtOnce = true
	clock := researchtest.NewClock(at(0, "08:00"))
	services := replicas(t, srv.Addr, runner, clock)
	ctx := context.Background()
	st, err := services[0].Create(ctx, dailySpec("Heat"), "UOWNER")
	if err != nil {
		t.Fatal(err)
	}
	tick := func(clk string, day int, during func()) {
		t.Helper()
		clock.Set(at(day, clk))
		var wg sync.WaitGroup
		for _, svc := range services {
			for range 3 {
				wg.Go(func() {
					if err := svc.Tick(ctx); err != nil {
						t.Error(err)
					}
				})
			}
		}
		if during != nil {
			wg.Go(during)
		}
		wg.Wait()
	}
	tick("09:00", 0, nil)
	spec := dailySpec("heat") // the same name, in other letters
	spec.TimeOfDay, spec.Keywords = "15:00", []string{"heat pump", "ground source"}
	var edited *scheduler.Stream
	tick("09:00", 0, func() {
		var err error
		if edited, err = services[1].Edit(ctx, st.ID, "UOWNER", false, spec); err != nil {
			t.Error(err)
		}
	})
	if edited == nil || edited.Spec.TimeOfDay != "15:00" || !slices.Contains(edited.Spec.Keywords, "ground source") || edited.Spec.Name != "Heat" {
		t.Fatalf("edited %+v", edited)
	}
	if !edited.NextFire.Equal(at(0, "15:00")) {
		t.Errorf("next fire %s, want today at 15:00", edited.NextFire)
	}
	for day := range 3 {
		for _, clk := range []string{"09:00", "09:01", "15:00", "15:00", "15:01"} {
			if day == 0 && clk[:2] == "09" {
				continue
			}
			tick(clk, day, nil)
		}
	}
	got, err := redisstore.NewStreams(rdb, "").Get(ctx, st.ID)
	if err != nil {
		t.Fatal(err)
	}
	var fires []time.Time
	for _, d := range got.Digests {
		fires = append(fires, d.FireAt)
	}
	want := []time.Time{at(0, "09:00"), at(0, "15:00"), at(1, "15:00"), at(2, "15:00")}
	if !slices.EqualFunc(fires, want, time.Time.Equal) || len(runner.starts()) != len(want) {
		t.Fatalf("digests at %v (%d runs), want %v", fires, len(runner.starts()), want)
	}
	if after := runner.starts()[1]; !strings.Contains(after.Context+" "+after.Question, "ground source") {
		t.Errorf("the digest after the edit does not use the new keywords: %q %q", after.Question, after.Context)
	}
}

// TestEditRefusals: a stranger may not edit; a rename and an invalid spec
// are refused, and nothing changes.
func TestEditRefusals(t *testing.T) {
	f := newFixture(t, nil)
	st := f.create("Mine")
	ctx := context.Background()
	spec := dailySpec("Mine")
	spec.TimeOfDay = "11:00"
	if _, err := f.svc.Edit(ctx, st.ID, "UOTHER", false, spec); !errors.Is(err, scheduler.ErrNotAllowed) {
		t.Errorf("a stranger's edit: %v", err)
	}
	if _, err := f.svc.Edit(ctx, st.ID, "UOTHER", true, spec); err != nil {
		t.Errorf("an admin's edit: %v", err)
	}
	renamed := dailySpec("Yours")
	if _, err := f.svc.Edit(ctx, st.ID, "UOWNER", false, renamed); !errors.Is(err, scheduler.ErrNameFixed) {
		t.Errorf("rename: %v", err)
	}
	bad := dailySpec("Mine")
	bad.Purpose = ""
	if _, err := f.svc.Edit(ctx, st.ID, "UOWNER", false, bad); err == nil {
		t.Error("an incomplete spec was saved")
	}
	if got := f.stream("Mine"); got.Spec.TimeOfDay != "11:00" || got.Spec.Purpose == "" {
		t.Errorf("stream after refusals: %+v", got.Spec)
	}
}
