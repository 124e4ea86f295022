package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// cmdPrune is `researchbot runs prune`: the operator's clean-up of runs
// past their retention (RUN_RETENTION). Runs expire by themselves; this
// removes them from the lists, and gives runs saved before retention
// existed their expiry. Waiting and running runs are never touched.
func cmdPrune(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if err := noArgs("runs prune", args, stdout, stderr); err != nil {
		return err
	}
	a, err := openStore(ctx, getenv, stderr, "the embedded Redis starts empty, so there is nothing to prune")
	if err != nil {
		return err
	}
	defer a.Close()
	rep, err := a.Store.Prune(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("prune runs: %w", err)
	}
	fmt.Fprintf(stdout, "forgot %d expired runs; deleted %d finished runs past the retention of %s; gave %d older finished runs their expiry; %d runs kept\n",
		rep.Forgotten, rep.Deleted, a.Config.Retention, rep.Expiring, rep.Kept)
	return nil
}
