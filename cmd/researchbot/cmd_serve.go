package main

import (
	"context"
	"io"
)

// cmdServe runs the Slack bot; wired once the bot package is in.
func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return &exitError{code: 2, msg: "researchbot serve: not wired yet"}
}
