package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
)

// TestATerminalRunForgetsItsQueueWhenItEnds: a terminal run's process
// forgets its private queue with the run's final save, so after it ends
// nothing of the queue is left in Redis (its name in rb:queues, its
// indexes) for the next process's claim pass to clean up; a second run
// leaves nothing either.
func TestATerminalRunForgetsItsQueueWhenItEnds(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	getenv := w.env(nil)
	for i := range 2 {
		var out, errb bytes.Buffer
		if err := run(context.Background(), []string{"run", "--mode", "auto", "How well do heat pumps work in cold climates?"}, getenv, strings.NewReader(""), &out, &errb); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, errb.String())
		}
		if left := terminalQueuesLeft(t, w.redisURL); len(left) != 0 {
			t.Fatalf("after terminal run %d ended, its queue's keys are left: %v", i+1, left)
		}
	}
}

// terminalQueuesLeft lists what Redis keeps of terminal queues: their
// names in rb:queues and their work and deadline indexes.
func terminalQueuesLeft(t *testing.T, redisURL string) []string {
	t.Helper()
	ctx := context.Background()
	_, rdb := redistest.Connect(t, redisURL)
	var left []string
	names, err := rdb.SMembers(ctx, "rb:queues").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasPrefix(n, "terminal-") {
			left = append(left, "rb:queues ∋ "+n)
		}
	}
	for _, pattern := range []string{"rb:work:terminal-*", "rb:timers:terminal-*"} {
		keys, err := rdb.Keys(ctx, pattern).Result()
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, keys...)
	}
	return left
}
