package redisstore

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// Advancer is what a worker needs from the engine.
type Advancer interface {
	Advance(ctx context.Context, runID string) error
	Fail(ctx context.Context, runID string, cause error) error
}

// Interrupter marks an abandoned run interrupted (*pipeline.Engine).
type Interrupter interface {
	Interrupt(ctx context.Context, runID string) error
}

// WorkerOptions configure a Worker. Zero values take the defaults.
type WorkerOptions struct {
	// Queues to take work from; every one is looked at on every pass.
	Queues []string
	// Concurrency is how many runs this process advances at once (default 8).
	Concurrency int
	// ShutdownTimeout is how long Stop waits for steps in flight before
	// handing them back (default 20 s).
	ShutdownTimeout time.Duration
	// Lease is the run lease (RUN_LEASE, default 15 s): a claim pass runs
	// every half lease and takes runs whose last save is older than half a
	// lease; a claim holds a run for one lease.
	Lease time.Duration
	// Prefix is the prefix of the store's keys (DefaultPrefix when empty).
	Prefix string
	// Clock times the passes, the deadline timer and the retries; nil
	// means the real clock.
	Clock quartz.Clock
	// NewQueues says Queues were made for this process just now (a
	// terminal run's private queue): the first pass does not look in them,
	// since nothing there can be half a lease old yet (its look at
	// abandoned queues is made as usual). Nor does the worker subscribe to
	// their wake channels until Listen is called: only this process knows
	// the queues, its own wake-ups are kicks in memory, and a hint from
	// another process matters only once one of its runs may be changed
	// there (it waits for a person, is interrupted, or another process
	// saved it: the moments its Watch subscribes). Until then, and for a
	// hint that comes before the subscription, the claim passes find the
	// run in the work index. The process knows every run in such a queue
	// (none is created there before the worker is made, DB.Worker): the
	// final save of the last of them forgets the queue's name, as the
	// claim passes of the next process would (privatequeue.go).
	NewQueues bool
	// Abandoned, when set, names queues of other processes whose runs no
	// one else would take (a terminal's private queue): a run of such a
	// queue that nobody advanced for 4 leases is marked interrupted by
	// Interrupter, and the queue's indexes are deleted once it has no work.
	Abandoned   func(queue string) bool
	Interrupter Interrupter
	// MaxRetry bounds how often in a row a run's advance may fail outside
	// its steps (Redis unreachable, a presenter failing) before the run is
	// ended (Fail); the steps have their own bound,
	// pipeline.MaxStepAttempts. Default 25.
	MaxRetry int
	// RetryDelay overrides the wait before a run is tried again (tests).
	// By default a failed step waits what the engine says (2 s, then 4 s),
	// and other failures back off from 1 s to 30 s.
	RetryDelay func(n int, err error) time.Duration
	Logger     *slog.Logger
}

// Worker advances the runs of its queues with the engine. It finds them
// itself, in the store's indexes (claim passes every half lease and at
// each checkpoint deadline, see claim.go), and is told of new work at once
// by Queue.Wake in this process (kick) or by hints on the queues' wake
// channels (wake.go). Runs whose advance failed are tried again by this
// process at their time (retry.go).
type Worker struct {
	rdb    *redis.Client
	adv    Advancer
	log    *slog.Logger
	opts   WorkerOptions
	clock  quartz.Clock
	queues []string
	delay  func(n int, err error) time.Duration
	timers *deadlineTimer
	// poke asks the loop for a pass now (a deadline came, the
	// subscription was made again).
	poke chan struct{}

	// slots bounds the runs advanced at once (Concurrency); ctx is the
	// advances' context, cancelled to hand them back at shutdown.
	slots  chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup

	mu      sync.Mutex
	stopped bool
	// inflight are the runs advanced here now, each with whether it was
	// woken again meanwhile (then it is advanced once more: the advance may
	// have read the run before what woke it was saved).
	inflight map[string]bool
	// retrying are the runs this process will try again at their time.
	retrying map[string]*retry
	// backlog are runs woken while every slot was busy, taken as slots free.
	backlog []pending
	// handedBack are the runs a shutdown interrupted, by queue.
	handedBack map[string]string

	loopCancel context.CancelFunc
	loopDone   chan struct{}
	// listenNow is closed by Listen: a NewQueues worker subscribes then.
	listenNow  chan struct{}
	listenOnce sync.Once
}

// pending is a run to advance when a slot frees: its queue, how often in
// a row its advance failed in this process, and whether a pass of this
// worker claimed it (the claim is given back when the advance ends).
type pending struct {
	queue, run string
	failures   int
	claimed    bool
}

// maxBacklog bounds the runs remembered while every slot is busy; past it,
// wake-ups are left to the claim passes.
const maxBacklog = 1024

// NewWorker returns a Worker; call Start, then Stop.
func NewWorker(rdb *redis.Client, adv Advancer, opts WorkerOptions) *Worker {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 20 * time.Second
	}
	if opts.Lease <= 0 {
		opts.Lease = 15 * time.Second
	}
	opts.Prefix = cmp.Or(opts.Prefix, DefaultPrefix)
	if opts.Clock == nil {
		opts.Clock = quartz.NewReal()
	}
	if opts.MaxRetry <= 0 {
		opts.MaxRetry = 25
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	delay := retryDelay
	if opts.RetryDelay != nil {
		delay = opts.RetryDelay
	}
	w := &Worker{
		rdb: rdb, adv: adv, log: opts.Logger, opts: opts, clock: opts.Clock, delay: delay,
		queues: slices.Compact(slices.Sorted(slices.Values(opts.Queues))), poke: make(chan struct{}, 1),
		slots: make(chan struct{}, opts.Concurrency), inflight: map[string]bool{},
		retrying: map[string]*retry{}, handedBack: map[string]string{}, listenNow: make(chan struct{}),
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.timers = newDeadlineTimer(opts.Clock, w.wakeLoop)
	return w
}

// retryDelay is the default wait before a run is tried again after its
// n-th failure in a row (from 0).
func retryDelay(n int, err error) time.Duration {
	var re *pipeline.RetryError
	if errors.As(err, &re) {
		return re.After
	}
	return min(time.Duration(1<<min(n, 5))*time.Second, 30*time.Second)
}

// serves reports whether queue is one of w's.
func (w *Worker) serves(queue string) bool {
	return slices.Contains(w.queues, queue)
}

// Start subscribes to the queues' wake channels and starts the claim
// passes in the background (the first one at once). The queues of a
// NewQueues worker are subscribed to when Listen is called, in the
// background: nobody else can know their names before this process saves
// a run there, so no hint can come before, and no step waits for it.
func (w *Worker) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	var sub *redis.PubSub
	if !w.opts.NewQueues {
		var err error
		if sub, err = w.subscribe(ctx); err != nil {
			cancel()
			return err
		}
	}
	w.loopCancel, w.loopDone = cancel, make(chan struct{})
	go func() { // owner: w; Stop cancels and waits
		defer close(w.loopDone)
		var hints sync.WaitGroup
		hints.Add(1)
		go func() { // owner: this loop, which waits for it
			defer hints.Done()
			if sub == nil {
				select {
				case <-w.listenNow:
				case <-ctx.Done():
					return
				}
			}
			w.listen(ctx, sub)
		}()
		w.loop(ctx)
		hints.Wait()
	}()
	return nil
}

// Listen makes a NewQueues worker subscribe to its queues' wake channels
// (once; see WorkerOptions.NewQueues). Any other worker subscribed at Start.
func (w *Worker) Listen() {
	w.listenOnce.Do(func() { close(w.listenNow) })
}

// wakeLoop asks the loop for a pass now.
func (w *Worker) wakeLoop() {
	select {
	case w.poke <- struct{}{}:
	default:
	}
}

// loop runs a claim pass at once, then every half lease and whenever poked.
func (w *Worker) loop(ctx context.Context) {
	t := w.clock.NewTicker(w.opts.Lease/2, "redisstore", "claim")
	defer t.Stop()
	defer w.timers.stop()
	queues := w.queues
	if w.opts.NewQueues {
		queues = nil
	}
	periodic := true
	for {
		if _, err := w.pass(ctx, queues, periodic); err != nil && ctx.Err() == nil {
			w.log.Info("claim pass failed; the next one tries again", "err", err)
		}
		queues = w.queues
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			periodic = true
		case <-w.poke:
			periodic = false
		}
	}
}

// kick starts advancing a run of one of w's queues now, in this process,
// and reports whether it did (or the run is advanced or retried here
// already: the wake-up collapses into one more advance after that one, or
// into the retry, which reads the run afresh). With
// every slot busy the run waits for one here, and false says others
// should be told.
func (w *Worker) kick(queue, runID string) bool {
	if !w.serves(queue) {
		return false
	}
	return w.take(pending{queue: queue, run: runID})
}

// hasFreeSlot reports whether the worker is running and a run woken now
// would find a free slot (unless another takes it first).
func (w *Worker) hasFreeSlot() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.stopped && len(w.slots) < cap(w.slots)
}

// take starts p's advance if a slot is free (true), or notes it for the
// next free slot (false); a run already advanced or waiting for its retry
// here is taken already (true).
func (w *Worker) take(p pending) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false
	}
	if _, ok := w.inflight[p.run]; ok {
		w.inflight[p.run] = true
		return true
	}
	if _, ok := w.retrying[p.run]; ok {
		return true
	}
	select {
	case w.slots <- struct{}{}:
		w.startLocked(p)
		return true
	default:
	}
	if len(w.backlog) < maxBacklog && !slices.ContainsFunc(w.backlog, func(b pending) bool { return b.run == p.run }) {
		w.backlog = append(w.backlog, p)
	}
	return false
}

// startLocked advances p in a slot the caller took; w.mu is held.
func (w *Worker) startLocked(p pending) {
	w.inflight[p.run] = false
	w.runs.Add(1)
	go func() { // owner: w; Stop cancels and waits
		defer w.runs.Done()
		w.carry(p)
	}()
}

// carry advances p, then the runs that waited for a slot, and frees the slot.
func (w *Worker) carry(p pending) {
	for {
		again, delay := w.advance(p)
		if p.claimed && !again {
			w.unclaim(p.run)
		}
		w.mu.Lock()
		if w.inflight[p.run] && !again && !w.stopped {
			// Woken while it was advanced: once more (the claim, if any,
			// was given back; the lease serialises as ever).
			w.inflight[p.run] = false
			p.claimed = false
			w.mu.Unlock()
			continue
		}
		delete(w.inflight, p.run)
		if again {
			w.retryLocked(p, delay)
		}
		next, ok := w.nextBacklogLocked()
		if !ok {
			<-w.slots
			w.mu.Unlock()
			return
		}
		p = next
		w.inflight[p.run] = false
		w.mu.Unlock()
	}
}

// unclaim gives back a pass's claim on a run whose advance ended: the
// lease guarded it meanwhile, and a deadline or work that comes later must
// find the run claimable at once, not a lease later.
func (w *Worker) unclaim(runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), w.opts.Lease/3)
	defer cancel()
	if err := w.rdb.Del(ctx, claimKey(w.opts.Prefix, runID)).Err(); err != nil {
		w.log.Debug("could not give back a claim; it expires within a lease", "run", runID, "err", err)
	}
}

// nextBacklogLocked pops the next run waiting for a slot that is not
// advanced or retried here already.
func (w *Worker) nextBacklogLocked() (pending, bool) {
	for len(w.backlog) > 0 && !w.stopped {
		p := w.backlog[0]
		w.backlog = w.backlog[1:]
		_, busy := w.inflight[p.run]
		_, later := w.retrying[p.run]
		if !busy && !later {
			return p, true
		}
	}
	return pending{}, false
}

// advance advances a run and decides what follows: nothing when it is done
// (or the run is someone else's, or gone), a hand-back when shutting down,
// and otherwise a retry after the returned delay (again), or the run's
// end after MaxRetry failures in a row outside its steps.
func (w *Worker) advance(p pending) (again bool, delay time.Duration) {
	err := w.adv.Advance(w.ctx, p.run)
	var re *pipeline.RetryError
	switch {
	case err == nil:
		return false, 0
	case errors.Is(err, pipeline.ErrLeaseBusy):
		// Another worker holds the run; it reads the run again after it
		// releases the lease, so this wake-up is not lost.
		w.log.Debug("run is being advanced elsewhere", "run", p.run)
		return false, 0
	case errors.Is(err, pipeline.ErrNotFound):
		w.log.Info("a woken run does not exist (expired or pruned)", "run", p.run)
		return false, 0
	case w.ctx.Err() != nil:
		w.mu.Lock()
		w.handedBack[p.run] = p.queue
		w.mu.Unlock()
		return false, 0
	case errors.As(err, &re):
		// A step failed; the engine counts the attempts.
	case p.failures >= w.opts.MaxRetry:
		w.log.Error("run keeps failing; ending it", "run", p.run, "attempts", p.failures+1, "err", err)
		if ferr := w.adv.Fail(context.WithoutCancel(w.ctx), p.run, err); ferr != nil {
			w.log.Error("could not end a failing run", "run", p.run, "err", ferr)
		}
		return false, 0
	default:
		w.log.Info("advancing run failed; it will be tried again", "run", p.run, "attempt", p.failures+1, "err", err)
	}
	delay = w.delay(p.failures, err)
	w.claimUntilRetry(p.run, delay)
	return true, delay
}

// Stop stops claiming and listening, waits for the advances in flight up
// to the shutdown timeout, cancels those still going (the engine hands
// each back, saved) and publishes a wake-up for every run handed back, so
// another replica takes it at once.
func (w *Worker) Stop() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.stopped = true
	w.backlog = nil
	for id, r := range w.retrying {
		r.timer.Stop()
		delete(w.retrying, id)
	}
	w.mu.Unlock()
	if w.loopCancel != nil {
		w.loopCancel()
		<-w.loopDone
	}
	done := make(chan struct{})
	go func() { // owner: Stop, which waits for it
		w.runs.Wait()
		close(done)
	}()
	// The shutdown bound is real time: a process given SIGTERM is killed
	// after a real grace period, whatever clock its runs read.
	timer := time.NewTimer(w.opts.ShutdownTimeout)
	select {
	case <-done:
	case <-timer.C:
		w.cancel()
		<-done
	}
	timer.Stop()
	w.cancel()
	w.handBack()
}
