package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/researchbot/researchbot/internal/app"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/terminal"
)

// terminalRun is `researchbot run`'s own job in its process (roles.Job):
// find the run to resume, start or resume it, follow it on the terminal
// and ask its checkpoints; once the workers have handed its step back,
// mark it interrupted if the person stopped.
type terminalRun struct {
	req             pipeline.Request
	resume, outFile string
	stdin           io.Reader
	stdout, stderr  io.Writer
	getenv          func(string) string
	style           terminal.Style // the prompts' (stderr)
	reportStyle     terminal.Style // the report's (stdout)
	log             *slog.Logger

	// resumed is the run --resume names (prepare).
	resumed *pipeline.Run
	// interrupt is the run to mark interrupted once the workers stopped
	// (run: the person stopped, or the run could not be followed).
	interrupt string
}

// prepare finds the run --resume names and returns its queue; a new run's
// queue is the one the command made.
func (t *terminalRun) prepare(ctx context.Context, a *app.App) (string, error) {
	if t.resume == "" {
		return "", nil
	}
	r, err := a.Engine.Load(ctx, t.resume)
	if errors.Is(err, pipeline.ErrNotFound) {
		return "", &exitError{code: 1, msg: fmt.Sprintf("researchbot: there is no run %q here (is REDIS_URL the same as when it started?)", t.resume)}
	}
	if err != nil {
		return "", err
	}
	if r.Origin.Kind != "terminal" {
		return "", &exitError{code: 2, msg: fmt.Sprintf("researchbot: run %s was started from %s, not from a terminal: answer its checkpoints there (it is %s at %s)", r.ID, originName(r.Origin.Kind), r.Status, r.Step)}
	}
	t.resumed = r
	return r.Origin.Queue, nil
}

// run starts (or resumes) the run once the workers take its queue and
// follows it until it ends or the person stops.
func (t *terminalRun) run(ctx context.Context, a *app.App) error {
	stderr := t.stderr
	r := t.resumed
	if r == nil {
		var err error
		r, err = a.Engine.Start(ctx, t.req)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "run %s started (mode %s, depth %s)\n", r.ID, r.Mode, r.Depth)
		if len(t.req.Files) > 0 {
			fmt.Fprintln(stderr, terminal.Clean(filesLine(t.req.Files)))
		}
	} else {
		if r.Status.Final() {
			fmt.Fprintf(stderr, "run %s has already finished (%s)\n", r.ID, r.Status)
			return writeOutcome(r, t.outFile, t.reportStyle, t.stdout, stderr)
		}
		fmt.Fprintf(stderr, "resuming run %s (%s at %s)\n", r.ID, r.Status, r.Step)
		if _, err := a.Engine.Resume(ctx, r.ID); err != nil {
			return err
		}
	}
	prompter := terminal.NewPrompter(t.stdin, stderr)
	prompter.Editor = terminal.EditorFrom(t.getenv)
	prompter.Style = t.style
	prompter.NeverDomain = a.Engine.NeverDomain
	prompter.Clock = a.Clock()
	follower := terminal.NewFollower(stderr, a.Clock())
	follower.Style = t.style
	// A person at a terminal may steer the run while it works; piped input
	// is only ever the answers to checkpoints.
	var steer terminal.Steerer
	if terminal.IsTerminal(t.stdin) {
		steer = a.Engine
		fmt.Fprintln(stderr, terminal.SteeringHint)
	}
	watchCtx, stopWatching := context.WithCancel(ctx)
	// A new run is on the queue this process just made for it: its own
	// worker advances it, and the store hands the follower that worker's
	// saves in memory; the follower subscribes to the run's channel only
	// once the run waits for a person or is interrupted, or its 5 s check
	// finds a save of another process (a worker started on that queue all
	// the same). A resumed run's queue may be served elsewhere: followed
	// from the start.
	watch := a.Store.Watch
	if t.resume == "" {
		watch = a.Store.WatchAdvancedHere
	}
	runs := watch(watchCtx, r.ID, 0)
	err := follow(ctx, a.Engine, runs, follower, prompter, steer, r.ID, !a.Conn.Embedded, t.outFile, t.reportStyle, t.stdout, stderr)
	stopWatching()
	for range runs { // until the watch has stopped: it ends with a Redis call, before the store closes
	}
	if ctx.Err() != nil || err != nil {
		t.interrupt = r.ID
	}
	return err
}

// afterWorkers marks the run interrupted when the person stopped (or the
// run could not be followed), once the workers have handed the step in
// flight back: it is listed as such, and nobody takes it until --resume.
func (t *terminalRun) afterWorkers(ctx context.Context, a *app.App) {
	if t.interrupt == "" {
		return
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if ierr := a.Engine.Interrupt(ictx, t.interrupt); ierr != nil {
		t.log.Info("could not mark the run interrupted", "run", t.interrupt, "err", ierr)
	}
}
