package roles

import (
	"context"
	"time"

	"github.com/researchbot/researchbot/internal/app"
)

// ForegroundShutdownTimeout is how long a foreground process's workers
// wait for the steps in flight before handing them back when it stops: a
// person who presses Ctrl-C wants the prompt back (the step is redone on
// --resume), where a replica waits 20 s.
const ForegroundShutdownTimeout = time.Second

// Job is the command's own job in a foreground process (the Foreground
// role): `researchbot run` starting or resuming its run, following it and
// asking its checkpoints on the terminal; `researchbot eval` running its
// questions one by one. The process's workers take the job's private queue
// (Config.Queues, or the one Prepare names).
type Job struct {
	// Prepare, when set, runs in New once the App is open, before any part
	// is built: the job's checks that need the store (run --resume finds
	// its run and refuses one started from Slack). It returns the queue the
	// workers serve for the job ("" keeps Config.Queues: a resumed run's
	// queue is the one it was started on). Its error is New's.
	Prepare func(ctx context.Context, a *app.App) (queue string, err error)
	// Run does the job. It starts once the workers take runs from the
	// job's queue, and its return ends the process: its error, as it is
	// (context.Canceled included), is what Process.Run returns. Its context
	// ends when the process is told to stop (Ctrl-C), first of all the
	// parts'.
	Run func(ctx context.Context, a *app.App) error
	// AfterWorkers, when set, runs once Run has returned and the workers
	// have handed the steps in flight back, before the presenters close:
	// `researchbot run` marks its run interrupted there on Ctrl-C, only
	// once no worker advances it any more. It is not called when Run never
	// started (the workers could not start). Its context keeps the
	// process's values but is not cancelled.
	AfterWorkers func(ctx context.Context, a *app.App)
}

// addForeground adds the job's parts: the job itself, which starts once
// workersUp says the workers started (ok) or could not (!ok), and the
// after-workers hook.
func (p *Process) addForeground(job Job, workersUp <-chan bool) {
	a := p.App
	// ran is written by the job's part before the job starts and read by
	// the after-workers part once its own, later, stage is stopped: Run's
	// ordered stop orders the two.
	var ran bool
	p.parts = append(p.parts, part{name: "foreground", stage: stageForeground, verbatim: true, run: func(ctx context.Context) error {
		// As the command did before the assembly: the workers have started
		// (or failed to) before the job begins, even when the process is
		// told to stop meanwhile; the job sees its context ended.
		if ok := <-workersUp; !ok {
			return nil // the workers' error is the process's
		}
		ran = true
		return job.Run(ctx, a)
	}})
	if job.AfterWorkers == nil {
		return
	}
	p.add("after workers", stageAfterWorkers, func(ctx context.Context) error {
		<-ctx.Done()
		if ran {
			job.AfterWorkers(context.WithoutCancel(ctx), a)
		}
		return nil
	})
}
