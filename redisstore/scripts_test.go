package redisstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
)

// scriptCalls is how many EVAL and EVALSHA calls the server ran, and how
// many of those failed (NOSCRIPT among them), by INFO commandstats.
func scriptCalls(t *testing.T, rdb *redis.Client) (eval, evalsha, failed int) {
	t.Helper()
	info, err := rdb.Info(t.Context(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	field := func(rest, name string) int {
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, name+"="); ok {
				n, _ := strconv.Atoi(v)
				return n
			}
		}
		return 0
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		switch {
		case !ok:
		case name == "cmdstat_eval":
			eval = field(rest, "calls")
			failed += field(rest, "failed_calls") + field(rest, "rejected_calls")
		case name == "cmdstat_evalsha":
			evalsha = field(rest, "calls")
			failed += field(rest, "failed_calls") + field(rest, "rejected_calls")
		}
	}
	return eval, evalsha, failed
}

// TestAScriptsFirstRunOnAClientIsOneEval: on a client made by Connect the
// first run of a store script on a fresh server is one EVAL (no failed
// EVALSHA before it), later runs are EVALSHA, and a server that lost its
// scripts since (SCRIPT FLUSH, as after a restart) is still served: the
// save stays a compare-and-set throughout.
func TestAScriptsFirstRunOnAClientIsOneEval(t *testing.T) {
	srv, admin := redistest.Start(t)
	ctx := t.Context()
	conn, err := Connect(ctx, srv.URL, ConnOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := NewStore(conn.Client, "rb:")
	if err := s.Create(ctx, newRun("r-1", "U1", t0)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	stale := *r
	for i := range 3 {
		r.Step = pipeline.StepSearch
		if err := s.Save(ctx, r); err != nil {
			t.Fatalf("save %d: %v", i, err)
		}
	}
	eval, evalsha, failed := scriptCalls(t, admin)
	// create and the first save: EVAL; the two saves after: EVALSHA.
	if eval != 2 || evalsha != 2 || failed != 0 {
		t.Errorf("eval %d, evalsha %d, failed %d; want 2, 2 and 0", eval, evalsha, failed)
	}
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(ctx, r); err != nil {
		t.Fatalf("save after the server lost its scripts: %v", err)
	}
	if err := s.Save(ctx, &stale); err == nil {
		t.Error("a stale save succeeded: the compare-and-set is gone")
	}
	if got, err := s.Load(ctx, "r-1"); err != nil || got.Version != r.Version {
		t.Errorf("stored version %v (%v), want %d", got, err, r.Version)
	}
}

// TestCodeAndStringsReadsAScriptsReply: a code alone, or the code and the
// strings asked for (a field Redis did not have is ""); any other shape is
// an error, never a panic.
func TestCodeAndStringsReadsAScriptsReply(t *testing.T) {
	reply := func(v any) *redis.Cmd {
		cmd := redis.NewCmd(context.Background())
		cmd.SetVal(v)
		return cmd
	}
	code, rest, err := codeAndStrings(reply(int64(-2)), 3)
	if code != -2 || rest != nil || err != nil {
		t.Errorf("a code alone: %d %q %v", code, rest, err)
	}
	code, rest, err = codeAndStrings(reply([]any{int64(7), "12", nil, "U1"}), 3)
	if code != 7 || !slices.Equal(rest, []string{"12", "", "U1"}) || err != nil {
		t.Errorf("a code and three fields: %d %q %v", code, rest, err)
	}
	for _, bad := range []any{[]any{}, []any{int64(1), "a"}, []any{"1", "a", "b", "c"}, []any{int64(1), int64(2), "b", "c"}, "OK"} {
		if _, _, err := codeAndStrings(reply(bad), 3); err == nil {
			t.Errorf("reply %v was taken", bad)
		}
	}
}
