package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/pipeline"
)

// Task types on the queue.
const (
	taskAdvance = "run:advance"
	taskTimer   = "run:timer"
	// taskTimeoutV1 is the timer task of earlier versions ("run\ninstance"),
	// still queued in a Redis they used: it wakes the run.
	taskTimeoutV1 = "run:timeout"
)

// QueueOptions tune the queue. Zero values take the defaults.
type QueueOptions struct {
	// MaxRetry bounds how often a task is retried after errors outside the
	// run's steps (Redis unreachable, a presenter failing); the run's steps
	// have their own bound, pipeline.MaxStepAttempts (default 25).
	MaxRetry int
	// TaskTimeout bounds one advance (several steps; default 30 minutes).
	TaskTimeout time.Duration
}

// Queue implements pipeline.Queue with asynq.
//
// Wake-ups carry a task id made of the run id and the run version the waker
// saw (r-abc:v7), so duplicates collapse: a decision queued twice, or queued
// by the bot and by a rescue pass, is one task. asynq refuses an id that
// exists in any state; a task that already exists for that version has seen
// (or will see) that version, so the refusal is success — except for a task
// asynq archived, which is deleted and queued again.
type Queue struct {
	rdb       redis.UniversalClient
	client    *asynq.Client
	inspector *asynq.Inspector
	opts      QueueOptions
	// local is the worker of this process that Enqueue hands wake-ups to
	// at once (RunLocally), or nil.
	local atomic.Pointer[Worker]
}

var _ pipeline.Queue = (*Queue)(nil)

// NewQueue returns a Queue on the Redis of rdb.
func NewQueue(rdb redis.UniversalClient, opts QueueOptions) *Queue {
	if opts.MaxRetry <= 0 {
		opts.MaxRetry = 25
	}
	if opts.TaskTimeout <= 0 {
		opts.TaskTimeout = 30 * time.Minute
	}
	return &Queue{rdb: rdb, client: asynq.NewClientFromRedisClient(rdb), inspector: asynq.NewInspectorFromRedisClient(rdb), opts: opts}
}

// Close closes the queue (not the shared Redis client).
func (q *Queue) Close() error { return errors.Join(q.client.Close(), q.inspector.Close()) }

func advanceTaskID(runID string, version int64) string {
	return runID + ":v" + strconv.FormatInt(version, 10)
}

// Enqueue asks a worker on queue to advance the run, seen at version. When
// this process serves the queue (RunLocally) and its worker has a free
// slot, the worker starts advancing the run at once, under the run's lease,
// and nothing is queued: a wake-up never waits for a worker's poll, and the
// queue's bookkeeping of a task beside the advance (some thirty commands a
// run) is not paid. The durable fallback is the store's index of runs with
// work, which the caller saved before waking the run: if this process dies
// before or during the advance, a Rescuer serving the queue finds the run
// once its lease has expired and queues it (within 1.5 leases of the death).
// Otherwise the wake-up is queued as a task.
func (q *Queue) Enqueue(ctx context.Context, queue, runID string, version int64) error {
	if w := q.local.Load(); w != nil && w.kick(queue, runID) {
		return nil
	}
	err := q.enqueueAdvance(ctx, queue, runID, advanceTaskID(runID, version))
	// Served (and noted as queued to) even after an error: the task may
	// have been written all the same.
	q.serveQueued(queue)
	return err
}

// serveQueued makes sure the local worker (an on-demand one) polls queue:
// work is put there that it will not take at once.
func (q *Queue) serveQueued(queue string) {
	if w := q.local.Load(); w != nil {
		w.serveQueued(queue)
	}
}

// RunLocally makes Enqueue hand the runs of w's queues to w at once, and w
// queue what it could not finish (a retry, a shutdown) back on q.
func (q *Queue) RunLocally(w *Worker) {
	w.followUp = q
	q.local.Store(w)
}

// enqueueFollowUp queues another advance of a run that a local advance
// left with work: after delay, under id when it is not empty (so follow-ups
// of one cause collapse).
func (q *Queue) enqueueFollowUp(ctx context.Context, queue, runID, id string, delay time.Duration) error {
	q.serveQueued(queue)
	opts := []asynq.Option{asynq.Queue(queue), asynq.MaxRetry(q.opts.MaxRetry), asynq.Timeout(q.opts.TaskTimeout), asynq.ProcessIn(delay)}
	if id != "" {
		opts = append(opts, asynq.TaskID(id))
	}
	_, err := q.client.EnqueueContext(ctx, asynq.NewTask(taskAdvance, []byte(runID)), opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

func (q *Queue) enqueueAdvance(ctx context.Context, queue, runID, id string) error {
	task := asynq.NewTask(taskAdvance, []byte(runID))
	opts := []asynq.Option{asynq.Queue(queue), asynq.TaskID(id), asynq.MaxRetry(q.opts.MaxRetry), asynq.Timeout(q.opts.TaskTimeout)}
	_, err := q.client.EnqueueContext(ctx, task, opts...)
	if !errors.Is(err, asynq.ErrTaskIDConflict) {
		return err
	}
	info, ierr := q.inspector.GetTaskInfo(queue, id)
	if ierr != nil || info.State != asynq.TaskStateArchived && info.State != asynq.TaskStateCompleted {
		return nil // it exists and will run (or runs now): the wake-up is there
	}
	if err := q.inspector.DeleteTask(queue, id); err != nil && !errors.Is(err, asynq.ErrTaskNotFound) {
		return fmt.Errorf("replace dead task %s: %w", id, err)
	}
	_, err = q.client.EnqueueContext(ctx, task, opts...)
	if errors.Is(err, asynq.ErrTaskIDConflict) {
		return nil
	}
	return err
}

// Rescue queues a run whose worker seems to have died. When the task of the
// run's version is still marked active (asynq notices its worker's death
// only after its own lease, about a minute), a task with a rescue id is
// queued beside it; window names the rescue window so rescues collapse too.
func (q *Queue) Rescue(ctx context.Context, queue, runID string, version int64, window int64) error {
	id := advanceTaskID(runID, version)
	if info, err := q.inspector.GetTaskInfo(queue, id); err == nil && info.State == asynq.TaskStateActive {
		id += ":rescue" + strconv.FormatInt(window, 10)
	}
	q.serveQueued(queue)
	return q.enqueueAdvance(ctx, queue, runID, id)
}

// EnqueueTimer asks a worker to check a checkpoint's timeout at deadline.
// asynq keeps whole seconds (it truncates) and moves due tasks once per
// check interval, so the task is set for the first whole second at or after
// the deadline: never early, and late by less than a second plus the
// worker's check interval and poll.
func (q *Queue) EnqueueTimer(ctx context.Context, queue, runID, instanceID string, deadline time.Time) error {
	q.serveQueued(queue)
	payload := runID + "\n" + instanceID + "\n" + strconv.FormatInt(deadline.UnixNano(), 10)
	_, err := q.client.EnqueueContext(ctx, asynq.NewTask(taskTimer, []byte(payload)),
		asynq.Queue(queue), asynq.ProcessAt(ceilSecond(deadline)), asynq.MaxRetry(q.opts.MaxRetry), asynq.Timeout(time.Minute))
	return err
}

// ceilSecond is the first whole second at or after t.
func ceilSecond(t time.Time) time.Time {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return time.Unix(s, 0)
}

// Advancer is what a worker needs from the engine.
type Advancer interface {
	Advance(ctx context.Context, runID string) error
	CheckTimeout(ctx context.Context, runID, instanceID string, deadline time.Time) error
	Fail(ctx context.Context, runID string, cause error) error
}

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Queues to take work from, with priorities (e.g. {"runs": 1}).
	Queues map[string]int
	// Concurrency is how many runs this process advances at once (default 8).
	Concurrency int
	// ShutdownTimeout is how long Stop waits for steps in flight before
	// handing them back to the queue (default 20 s).
	ShutdownTimeout time.Duration
	// PollInterval is how often an idle worker looks for work (default
	// 200 ms). Wake-ups made in this process do not wait for it (see
	// Queue.RunLocally); those of other processes (a decision taken by a
	// bot replica that serves no queue) wait at most about this long.
	PollInterval time.Duration
	// TimerInterval is how often due timers and retries are moved to the
	// work queue (default 250 ms): with the whole-second rounding, a
	// checkpoint timeout fires less than 1.6 s after its deadline.
	TimerInterval time.Duration
	// OnDemand says the queues are new and only this process puts work on
	// them (a terminal run's private queue): the queue server starts only
	// when work is queued that this process does not take at once (a retry,
	// a timer, a rescue, a wake-up finding no free slot), so a run that
	// needs none never polls and stopping never waits for a poll.
	OnDemand bool
	// Private says nobody else serves the queues (a terminal run's): Stop
	// deletes their keys, served or not, whatever the run's outcome (an
	// OnDemand worker only if this process queued anything there: the
	// queues are new, so there is nothing else to delete). Its
	// runs need nothing queued to go on: --resume queues its run again, and
	// the timers index finds its checkpoint's deadline.
	Private bool
	// RetryDelay overrides the wait before a task is tried again (tests).
	// By default a failed step waits what the engine says (2 s, then 4 s),
	// and other failures back off from 1 s to 30 s.
	RetryDelay func(n int, err error) time.Duration
	Logger     *slog.Logger
}

// Worker takes runs from the queue and advances them with the engine.
type Worker struct {
	srv  *asynq.Server
	mux  *asynq.ServeMux
	adv  Advancer
	log  *slog.Logger
	opts WorkerOptions
	// followUp is the queue that takes what a local advance left over.
	followUp *Queue
	// delay is the wait before a task is tried again after an error.
	delay func(n int, err error) time.Duration

	// slots bounds the runs advanced at once, from the queue or locally
	// (kick); ctx stops the local ones.
	mu      sync.Mutex
	stopped bool
	serving bool // the queue server was started
	// queued says work was put on a served queue through this process's
	// Queue (serveQueued), served or not: an on-demand worker with nothing
	// queued has no queue keys to delete when it stops.
	queued bool
	slots  chan struct{}
	local  sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// retryDelay is the default wait before a task runs again after err.
func retryDelay(n int, err error) time.Duration {
	var re *pipeline.RetryError
	if errors.As(err, &re) {
		return re.After
	}
	return min(time.Duration(1<<min(n, 5))*time.Second, 30*time.Second)
}

// NewWorker returns a Worker; call Start, then Stop.
func NewWorker(rdb redis.UniversalClient, adv Advancer, opts WorkerOptions) *Worker {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 8
	}
	if opts.ShutdownTimeout <= 0 {
		opts.ShutdownTimeout = 20 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 200 * time.Millisecond
	}
	if opts.TimerInterval <= 0 {
		opts.TimerInterval = 250 * time.Millisecond
	}
	delay := retryDelay
	if opts.RetryDelay != nil {
		delay = opts.RetryDelay
	}
	log := opts.Logger
	cfg := asynq.Config{
		Concurrency:              opts.Concurrency,
		Queues:                   opts.Queues,
		ShutdownTimeout:          opts.ShutdownTimeout,
		Logger:                   newQuietAsynqLogger(log),
		LogLevel:                 asynq.WarnLevel,
		TaskCheckInterval:        opts.PollInterval,
		DelayedTaskCheckInterval: opts.TimerInterval,
		RetryDelayFunc:           func(n int, err error, _ *asynq.Task) time.Duration { return delay(n, err) },
	}
	w := &Worker{adv: adv, log: log, opts: opts, delay: delay, slots: make(chan struct{}, opts.Concurrency)}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	mux := asynq.NewServeMux()
	mux.HandleFunc(taskAdvance, func(ctx context.Context, t *asynq.Task) error {
		// Queued and local advances share the process's slots (Concurrency).
		select {
		case w.slots <- struct{}{}:
			defer func() { <-w.slots }()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		return w.advance(ctx, string(t.Payload()), retried, maxRetry)
	})
	mux.HandleFunc(taskTimer, func(ctx context.Context, t *asynq.Task) error {
		parts := strings.SplitN(string(t.Payload()), "\n", 3)
		if len(parts) != 3 {
			log.Warn("dropping a malformed timer task", "payload_bytes", len(t.Payload()))
			return nil
		}
		nanos, err := strconv.ParseInt(parts[2], 10, 64)
		if err != nil {
			log.Warn("dropping a malformed timer task", "run", parts[0])
			return nil
		}
		err = adv.CheckTimeout(ctx, parts[0], parts[1], time.Unix(0, nanos))
		if errors.Is(err, pipeline.ErrLeaseBusy) || errors.Is(err, pipeline.ErrNotFound) {
			return nil // the holder re-checks deadlines after it releases the lease
		}
		return err
	})
	mux.HandleFunc(taskTimeoutV1, func(ctx context.Context, t *asynq.Task) error {
		runID, _, _ := strings.Cut(string(t.Payload()), "\n")
		if err := adv.Advance(ctx, runID); err != nil && !errors.Is(err, pipeline.ErrLeaseBusy) && !errors.Is(err, pipeline.ErrNotFound) {
			return err
		}
		return nil
	})
	w.srv, w.mux = asynq.NewServerFromRedisClient(rdb, cfg), mux
	return w
}

// advance advances a run for a queue task that was retried retried times
// of maxRetry, and says what the task should do: nil when it is done (or
// the run is someone else's), an error to be tried again.
func (w *Worker) advance(ctx context.Context, runID string, retried, maxRetry int) error {
	err := w.adv.Advance(ctx, runID)
	var re *pipeline.RetryError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pipeline.ErrLeaseBusy):
		// Another worker holds the run; it reads the run again after it
		// releases the lease, so this wake-up is not lost.
		w.log.Debug("run is being advanced elsewhere", "run", runID)
		return nil
	case errors.Is(err, pipeline.ErrNotFound):
		w.log.Info("a queued run does not exist (expired or pruned)", "run", runID)
		return nil
	case ctx.Err() != nil:
		return err // shutting down: asynq hands the task back
	case errors.As(err, &re):
		return err // a step failed; the engine counts the attempts
	}
	if retried >= maxRetry {
		w.log.Error("run keeps failing; ending it", "run", runID, "attempts", retried+1, "err", err)
		if ferr := w.adv.Fail(context.WithoutCancel(ctx), runID, err); ferr != nil {
			w.log.Error("could not end a failing run", "run", runID, "err", ferr)
		}
		return nil
	}
	w.log.Info("advancing run failed; it will be tried again", "run", runID, "attempt", retried+1, "err", err)
	return err
}

// kick starts advancing a run of one of w's queues now, in this process,
// when w has a free slot, and reports whether it did; otherwise the queued
// task does it.
func (w *Worker) kick(queue, runID string) bool {
	if _, ok := w.opts.Queues[queue]; !ok {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return false
	}
	select {
	case w.slots <- struct{}{}:
	default:
		return false // busy: the queue's worker takes it
	}
	w.local.Add(1)
	go func() { // owner: w; Stop cancels and waits
		defer w.local.Done()
		defer func() { <-w.slots }()
		w.advanceLocal(queue, runID)
	}()
	return true
}

// serveQueued starts the queue server of an on-demand worker that serves
// queue, once.
func (w *Worker) serveQueued(queue string) {
	if _, ok := w.opts.Queues[queue]; !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queued = true
	if w.serving || w.stopped {
		return
	}
	w.serving = true
	if err := w.srv.Start(w.mux); err != nil {
		w.log.Error("could not start serving the queue; a rescue pass will take its runs", "queue", queue, "err", err)
	}
}

// advanceLocal advances a run outside the queue and queues what is left: a
// step's retry at its time, a run handed back by a shutdown at once, and
// other failures after the usual backoff (their count starts there).
func (w *Worker) advanceLocal(queue, runID string) {
	err := w.advance(w.ctx, runID, 0, 1)
	if err == nil || w.followUp == nil {
		return
	}
	id, delay := "", w.delay(1, err)
	if re := (*pipeline.RetryError)(nil); errors.As(err, &re) {
		id = fmt.Sprintf("%s:%s:retry%d", runID, re.Step, re.Attempt)
	} else if w.ctx.Err() != nil {
		delay = 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if qerr := w.followUp.enqueueFollowUp(ctx, queue, runID, id, delay); qerr != nil {
		w.log.Warn("could not queue a run's next advance; a rescue pass will", "run", runID, "err", qerr)
	}
}

// Start starts taking work in the background (an on-demand worker only
// its local work, until something is queued for it).
func (w *Worker) Start() error {
	if w.opts.OnDemand {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.serving = true
	return w.srv.Start(w.mux)
}

// Stop stops taking new work, waits for steps in flight up to the shutdown
// timeout, and hands unfinished ones back to the queue.
func (w *Worker) Stop() {
	w.mu.Lock()
	w.stopped = true
	serving := w.serving
	w.mu.Unlock()
	queued := make(chan struct{})
	go func() { // owner: Stop, which waits for it
		defer close(queued)
		if serving {
			w.srv.Shutdown()
		}
	}()
	done := make(chan struct{})
	go func() { // owner: Stop, which waits for it
		w.local.Wait()
		close(done)
	}()
	timer := time.NewTimer(w.opts.ShutdownTimeout)
	select {
	case <-done:
	case <-timer.C:
		w.cancel() // hand the local runs back (advanceLocal queues them)
		<-done
	}
	timer.Stop()
	w.cancel()
	<-queued
	// An on-demand worker's queues are new, and nothing was put on them
	// unless this process queued it (serveQueued): with nothing queued
	// there are no keys to delete (a SCAN and an SREM saved).
	w.mu.Lock()
	purge := w.queued || !w.opts.OnDemand
	w.mu.Unlock()
	if w.opts.Private && w.followUp != nil && purge {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for q := range w.opts.Queues {
			if err := w.followUp.Purge(ctx, q); err != nil {
				w.log.Info("could not delete a private queue", "queue", q, "err", err)
			}
		}
	}
}
