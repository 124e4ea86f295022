package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
)

const checkpointsUsage = `Usage:
  researchbot checkpoints                      list checkpoint definitions
  researchbot checkpoints enable ID            offer this checkpoint again
  researchbot checkpoints disable ID           stop offering it (runs go on without it)
  researchbot checkpoints timeout ID DURATION  e.g. 48h; 0 for no timeout
  ` + checkpointsSkipUsage

// cmdCheckpoints lets an operator see and change checkpoint definitions,
// which are data in Redis shared by every replica.
func cmdCheckpoints(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "skip" {
		return cmdCheckpointsSkip(ctx, args[1:], getenv, stdout, stderr)
	}
	a, err := openStore(ctx, getenv, stderr, "these are the built-in definitions of an empty, in-process Redis")
	if err != nil {
		return err
	}
	defer a.Close()
	if err := a.Engine.SeedDefinitions(ctx); err != nil {
		return err
	}
	defs, err := a.Store.Definitions(ctx)
	if err != nil {
		return err
	}
	// In the order a run meets them.
	stage := map[checkpoints.Position]int{checkpoints.AfterPlanning: 0, checkpoints.AfterSearch: 1, checkpoints.AfterReview: 2, checkpoints.BeforeOutput: 3}
	sort.SliceStable(defs, func(i, j int) bool {
		a, b := defs[i], defs[j]
		if stage[a.Position] != stage[b.Position] {
			return stage[a.Position] < stage[b.Position]
		}
		if a.SortOrder != b.SortOrder {
			return a.SortOrder < b.SortOrder
		}
		return a.ID < b.ID
	})
	if len(args) == 0 {
		now := time.Now()
		fmt.Fprintf(stdout, "%-16s %-8s %-9s %-14s %-8s %-8s %s\n", "ID", "ENABLED", "REQUIRED", "MODES", "TIMEOUT", "BREAKER", "LABEL")
		for _, d := range defs {
			fails, _ := a.Store.CheckpointFailures(ctx, d.ID, now, d.BreakerWindow)
			breaker := fmt.Sprintf("%d/%d", len(fails), d.BreakerThreshold)
			if checkpoints.BreakerTripped(d, fails, now) {
				breaker = "TRIPPED"
			}
			timeout := "none"
			if d.Timeout > 0 {
				timeout = d.Timeout.String()
			}
			fmt.Fprintf(stdout, "%-16s %-8v %-9v %-14s %-8s %-8s %s\n", d.ID, d.Enabled, d.Required, strings.Join(d.Modes, ","), timeout, breaker, d.Label)
		}
		return nil
	}
	if len(args) < 2 {
		return &exitError{code: 2, msg: checkpointsUsage}
	}
	var def *checkpoints.Definition
	for i := range defs {
		if defs[i].ID == args[1] {
			def = &defs[i]
		}
	}
	if def == nil {
		var ids []string
		for _, d := range defs {
			ids = append(ids, d.ID)
		}
		return &exitError{code: 2, msg: fmt.Sprintf("researchbot: no checkpoint %q (there are: %s)", args[1], strings.Join(ids, ", "))}
	}
	switch {
	case args[0] == "enable" && len(args) == 2:
		def.Enabled = true
	case args[0] == "disable" && len(args) == 2:
		def.Enabled = false
	case args[0] == "timeout" && len(args) == 3:
		d, err := time.ParseDuration(args[2])
		if err != nil || d < 0 {
			return &exitError{code: 2, msg: fmt.Sprintf("researchbot: %q is not a duration such as 48h or 30m", args[2])}
		}
		def.Timeout = d
	default:
		return &exitError{code: 2, msg: checkpointsUsage}
	}
	def.UpdatedAt = time.Now()
	if err := a.Store.PutDefinition(ctx, *def); err != nil {
		return fmt.Errorf("researchbot: %w", err)
	}
	fmt.Fprintf(stdout, "%s: enabled %v, timeout %s (applies to checkpoints offered from now on)\n", def.ID, def.Enabled, def.Timeout)
	return nil
}
