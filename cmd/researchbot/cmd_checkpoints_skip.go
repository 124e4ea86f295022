package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

const checkpointsSkipUsage = "researchbot checkpoints skip RUN_ID CHECKPOINT_ID   go on without the run's current checkpoint (its id, or its definition's)"

// cmdCheckpointsSkip is an admin's "continue without it" from the command
// line: the run's current checkpoint, named by its instance or definition
// id, is skipped if optional, or passed over if it is required and could
// not be shown after its retries. The run's report says so. It refuses to
// run without REDIS_URL: an in-process Redis holds no runs.
func cmdCheckpointsSkip(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 1 && isHelpFlag(args[0]) {
		fmt.Fprintln(stdout, "Usage:\n  "+checkpointsSkipUsage)
		return helped
	}
	if len(args) != 2 {
		return checkpointsUsageError(append([]string{"skip"}, args...))
	}
	if getenv("REDIS_URL") == "" {
		return &exitError{code: 2, msg: "researchbot: checkpoints skip needs REDIS_URL: the run lives in the Redis the bot and workers share (without it there is only an empty in-process Redis)"}
	}
	runID, id := args[0], args[1]
	a, err := openStore(ctx, getenv, stderr, "")
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.Engine.Load(ctx, runID)
	if errors.Is(err, pipeline.ErrNotFound) {
		return &exitError{code: 2, msg: fmt.Sprintf("researchbot: no run %q", runID)}
	}
	if err != nil {
		return err
	}
	instID, ok := r.CurrentCheckpoint(id)
	if !ok {
		return &exitError{code: 2, msg: fmt.Sprintf("researchbot: run %s is %s and does not wait at %q", runID, r.Status, id)}
	}
	inst := r.Instance(instID)
	admin := "cli:" + orUnknown(getenv("USER"))
	if inst.Required {
		_, err = a.Engine.ContinueWithout(ctx, instID, admin)
	} else {
		_, err = a.Engine.Skip(ctx, instID, admin)
	}
	switch {
	case errors.Is(err, pipeline.ErrNotStranded):
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot: %s is required and can still be shown (state %s): decide it, or wait until its retries or its reminders are used up", inst.DefinitionID, inst.State)}
	case errors.Is(err, checkpoints.ErrAlreadyDecided), errors.Is(err, pipeline.ErrNotCurrent):
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot: %s was decided or the run moved on meanwhile; nothing was changed", inst.DefinitionID)}
	case err != nil:
		return err
	}
	fmt.Fprintf(stdout, "%s: run %s goes on without %s; its report will say so\n", admin, runID, inst.DefinitionID)
	return nil
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
