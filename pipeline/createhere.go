package pipeline

// Creating a run that this process's worker will advance at once: the
// create takes the run's lease for that worker, so the worker's first take
// is made in memory (a terminal run on its private queue).

import "context"

// hereQueue is a Queue that knows when a run of a queue woken now would be
// advanced at once by this process's worker and by no other (a queue made
// for this process alone, with a free slot).
type hereQueue interface {
	RunsHereAtOnce(queue string) bool
}

// leasedCreator is a Store that can create a run with its lease already
// taken for this process's worker: the Locker of this process hands that
// lease, with the fence the create wrote, to the worker's first Lock while
// it is certainly still held, and takes the lease anew otherwise. A
// process that dies before its worker started leaves a lease that expires
// as any dead worker's does.
type leasedCreator interface {
	CreateLeased(ctx context.Context, r *Run) error
}

// createRun stores the new run r: created leased when this process's
// worker will advance it at once and only here (Wake follows at once), and
// as usual otherwise — a held run (nobody advances it until it is
// released), or a run of a shared queue, which any replica's worker may
// take: a lease held by its creator would only make those wait.
func (e *Engine) createRun(ctx context.Context, r *Run) error {
	lc, ok := e.cfg.Store.(leasedCreator)
	hq, here := e.cfg.Queue.(hereQueue)
	if ok && here && !r.Held && hq.RunsHereAtOnce(r.Origin.Queue) {
		return lc.CreateLeased(ctx, r)
	}
	return e.cfg.Store.Create(ctx, r)
}
