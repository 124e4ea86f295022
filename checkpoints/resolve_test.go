package checkpoints

import (
	"reflect"
	"testing"
	"time"
)

func ids(defs []Definition) []string {
	out := make([]string, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.ID)
	}
	return out
}

func TestResolve(t *testing.T) {
	mk := func(id string, pos Position, sort int, enabled bool, modes ...string) Definition {
		return Definition{ID: id, Position: pos, SortOrder: sort, Enabled: enabled, Modes: modes}
	}
	defs := []Definition{
		mk("zeta", AfterPlanning, 10, true, ModeGuided),
		mk("alpha", AfterPlanning, 10, true, ModeGuided, ModeFull),
		mk("first", AfterPlanning, 0, true, "*"),
		mk("off", AfterPlanning, 0, false, "*"),
		mk("full_only", AfterPlanning, 5, true, ModeFull),
		mk("elsewhere", AfterSearch, 0, true, "*"),
		mk("broken", AfterPlanning, 1, true, "*"),
	}
	isBroken := func(id string) bool { return id == "broken" }
	cases := []struct {
		name    string
		pos     Position
		mode    string
		tripped func(string) bool
		want    []string
	}{
		{"guided: sorted by order then id, disabled and tripped left out", AfterPlanning, ModeGuided, isBroken, []string{"first", "alpha", "zeta"}},
		{"full", AfterPlanning, ModeFull, isBroken, []string{"first", "full_only", "alpha"}},
		{"nil tripped trips nothing", AfterPlanning, ModeFull, nil, []string{"first", "broken", "full_only", "alpha"}},
		{"other position", AfterSearch, ModeAuto, nil, []string{"elsewhere"}},
		{"nothing applies", BeforeOutput, ModeFull, nil, []string{}},
		{"unknown mode only matches *", AfterPlanning, "custom", isBroken, []string{"first"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Resolve(defs, c.pos, c.mode, c.tripped)
			if !reflect.DeepEqual(ids(got), c.want) {
				t.Fatalf("Resolve = %v, want %v", ids(got), c.want)
			}
		})
	}
	if defs[0].ID != "zeta" {
		t.Fatal("Resolve reordered its input")
	}
}

func TestResolveBuiltins(t *testing.T) {
	defs := Builtins(t0)
	cases := []struct {
		pos  Position
		mode string
		want []string
	}{
		// clarify comes first; the engine asks it only when the planner has questions.
		{AfterPlanning, ModeGuided, []string{Clarify, PlanReview}},
		{AfterPlanning, ModeFull, []string{Clarify, PlanReview}},
		{AfterPlanning, ModeAuto, []string{}},
		{AfterSearch, ModeGuided, []string{}},
		{AfterSearch, ModeFull, []string{SourceReview}},
		{AfterReview, ModeGuided, []string{CriticalIssues}},
		{BeforeOutput, ModeFull, []string{DraftReview}},
		{BeforeOutput, ModeAuto, []string{}},
	}
	for _, c := range cases {
		if got := ids(Resolve(defs, c.pos, c.mode, nil)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Resolve(builtins, %s, %s) = %v, want %v", c.pos, c.mode, got, c.want)
		}
	}
}

func TestBreakerTripped(t *testing.T) {
	now := t0
	d := Definition{BreakerThreshold: 3, BreakerWindow: time.Hour}
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	cases := []struct {
		name     string
		def      Definition
		failures []time.Time
		want     bool
	}{
		{"no failures", d, nil, false},
		{"below threshold", d, []time.Time{ago(time.Minute), ago(2 * time.Minute)}, false},
		{"at threshold", d, []time.Time{ago(time.Minute), ago(2 * time.Minute), ago(3 * time.Minute)}, true},
		{"one just inside the window", d, []time.Time{ago(time.Minute), ago(2 * time.Minute), ago(time.Hour - time.Nanosecond)}, true},
		{"one exactly a window old is out", d, []time.Time{ago(time.Minute), ago(2 * time.Minute), ago(time.Hour)}, false},
		{"old failures do not count", d, []time.Time{ago(2 * time.Hour), ago(3 * time.Hour), ago(4 * time.Hour), ago(time.Minute)}, false},
		{"failure at now counts", d, []time.Time{now, now, now}, true},
		{"future failures (clock skew) count", d, []time.Time{now.Add(time.Second), ago(time.Minute), ago(time.Minute)}, true},
		{"threshold 0 never trips", Definition{BreakerWindow: time.Hour}, []time.Time{now, now, now, now}, false},
		{"window 0 never trips", Definition{BreakerThreshold: 1}, []time.Time{now}, false},
		{"threshold 1", Definition{BreakerThreshold: 1, BreakerWindow: time.Minute}, []time.Time{ago(30 * time.Second)}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BreakerTripped(c.def, c.failures, now); got != c.want {
				t.Fatalf("BreakerTripped = %v, want %v", got, c.want)
			}
		})
	}
}
