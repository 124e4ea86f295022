package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
)

// TestWorkerRefusesSlackQueueWithoutToken: a worker without SLACK_BOT_TOKEN
// does not take the shared Slack queue (its digests and reports would finish
// unposted); it says why and how to fix it.
func TestWorkerRefusesSlackQueueWithoutToken(t *testing.T) {
	for _, args := range [][]string{{"worker"}, {"worker", "--queues", "terminal, runs"}} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), args, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
		var exit *exitError
		if !errors.As(err, &exit) || exit.code != 2 || !strings.Contains(exit.msg, "SLACK_BOT_TOKEN") || !strings.Contains(exit.msg, "--queues") {
			t.Errorf("%v without a token: %v", args, err)
		}
	}
	// Another queue needs no token: the worker gets past the check (and
	// stops at the missing configuration instead).
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"worker", "--queues", "terminal"}, func(string) string { return "" }, strings.NewReader(""), &stdout, &stderr)
	if err != nil && strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
		t.Errorf("a terminal-queue worker was refused for the missing token: %v", err)
	}
}
