package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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
	client    *asynq.Client
	inspector *asynq.Inspector
	opts      QueueOptions
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
	return &Queue{client: asynq.NewClientFromRedisClient(rdb), inspector: asynq.NewInspectorFromRedisClient(rdb), opts: opts}
}

// Close closes the queue (not the shared Redis client).
func (q *Queue) Close() error { return errors.Join(q.client.Close(), q.inspector.Close()) }

func advanceTaskID(runID string, version int64) string {
	return runID + ":v" + strconv.FormatInt(version, 10)
}

// Enqueue asks a worker on queue to advance the run, seen at version.
func (q *Queue) Enqueue(ctx context.Context, queue, runID string, version int64) error {
	return q.enqueueAdvance(ctx, queue, runID, advanceTaskID(runID, version))
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
	return q.enqueueAdvance(ctx, queue, runID, id)
}

// EnqueueTimer asks a worker to check a checkpoint's timeout at deadline.
// asynq keeps whole seconds (it truncates) and moves due tasks once per
// check interval, so the task is set for the first whole second at or after
// the deadline: never early, and late by less than a second plus the
// worker's check interval and poll.
func (q *Queue) EnqueueTimer(ctx context.Context, queue, runID, instanceID string, deadline time.Time) error {
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
	// 200 ms): about the longest a decision waits before a worker picks it up.
	PollInterval time.Duration
	// TimerInterval is how often due timers and retries are moved to the
	// work queue (default 250 ms): with the whole-second rounding, a
	// checkpoint timeout fires less than 1.6 s after its deadline.
	TimerInterval time.Duration
	// RetryDelay overrides the wait before a task is tried again (tests).
	// By default a failed step waits what the engine says (2 s, then 4 s),
	// and other failures back off from 1 s to 30 s.
	RetryDelay func(n int, err error) time.Duration
	Logger     *slog.Logger
}

// Worker takes runs from the queue and advances them with the engine.
type Worker struct {
	srv *asynq.Server
	mux *asynq.ServeMux
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
	mux := asynq.NewServeMux()
	mux.HandleFunc(taskAdvance, func(ctx context.Context, t *asynq.Task) error {
		runID := string(t.Payload())
		err := adv.Advance(ctx, runID)
		var re *pipeline.RetryError
		switch {
		case err == nil:
			return nil
		case errors.Is(err, pipeline.ErrLeaseBusy):
			// Another worker holds the run; it reads the run again after it
			// releases the lease, so this wake-up is not lost.
			log.Debug("run is being advanced elsewhere", "run", runID)
			return nil
		case errors.Is(err, pipeline.ErrNotFound):
			log.Info("a queued run does not exist (expired or pruned)", "run", runID)
			return nil
		case ctx.Err() != nil:
			return err // shutting down: asynq hands the task back
		case errors.As(err, &re):
			return err // a step failed; the engine counts the attempts
		}
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		if retried >= maxRetry {
			log.Error("run keeps failing; ending it", "run", runID, "attempts", retried+1, "err", err)
			if ferr := adv.Fail(context.WithoutCancel(ctx), runID, err); ferr != nil {
				log.Error("could not end a failing run", "run", runID, "err", ferr)
			}
			return nil
		}
		log.Info("advancing run failed; it will be tried again", "run", runID, "attempt", retried+1, "err", err)
		return err
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
	return &Worker{srv: asynq.NewServerFromRedisClient(rdb, cfg), mux: mux}
}

// Start starts taking work in the background.
func (w *Worker) Start() error { return w.srv.Start(w.mux) }

// Stop stops taking new work, waits for steps in flight up to the shutdown
// timeout, and hands unfinished ones back to the queue.
func (w *Worker) Stop() { w.srv.Shutdown() }
