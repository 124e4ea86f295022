package roles

import (
	"context"
	"errors"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Run runs every part of the process in one errgroup until ctx ends or a
// part returns (a part that fails, Slack refusing a token, or the
// foreground job done, ends the process); then it stops the parts stage by
// stage, each stage once the one before it has returned: the foreground
// job, then Slack and the scheduler, then the HTTP endpoints, then the
// workers (handing steps in flight back to the queue), then the
// after-workers hook (Job.AfterWorkers), then the presenters. It returns
// the first part's error, or nil (a part that returns context.Canceled
// once its stage is stopped stopped cleanly; the foreground job's error is
// returned as it is). Run once.
func (p *Process) Run(ctx context.Context) error {
	if p.ran {
		return errors.New("roles: Process.Run called twice")
	}
	p.ran = true
	// end is the process's end: ctx's, or the first part's return.
	end, endNow := context.WithCancel(ctx)
	defer endNow()
	// Each stage has its own context, cancelled in order once the process
	// ends; a part's context keeps ctx's values but not its cancellation.
	var (
		stageCtx  [stages]context.Context
		stopStage [stages]context.CancelFunc
		running   [stages]sync.WaitGroup
	)
	for s := range stages {
		stageCtx[s], stopStage[s] = context.WithCancel(context.WithoutCancel(ctx))
		defer stopStage[s]()
	}
	var g errgroup.Group
	for _, pt := range p.parts {
		running[pt.stage].Add(1)
		g.Go(func() error { // owner: this Process; ends with its stage
			defer running[pt.stage].Done()
			defer endNow()
			err := pt.run(stageCtx[pt.stage])
			if !pt.verbatim && errors.Is(err, context.Canceled) && stageCtx[pt.stage].Err() != nil {
				return nil // stopped by its stage: a clean stop
			}
			return err
		})
	}
	g.Go(func() error { // owner: this Process; the ordered stop
		<-end.Done()
		for s := range stages {
			stopStage[s]()
			running[s].Wait()
		}
		return nil
	})
	return g.Wait()
}
