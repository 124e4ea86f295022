package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hibiken/asynq"

	"github.com/researchbot/researchbot/pipeline"
)

// Task types on the queue.
const (
	taskAdvance = "run:advance"
	taskTimeout = "run:timeout"
)

// QueueOptions tune the queue. Zero values take the defaults.
type QueueOptions struct {
	// MaxRetry bounds how often a failing run's task is retried before the
	// run is ended as failed (default 5).
	MaxRetry int
	// TaskTimeout bounds one advance (several steps; default 30 minutes).
	TaskTimeout time.Duration
}

// Queue implements pipeline.Queue with asynq.
type Queue struct {
	client *asynq.Client
	opts   QueueOptions
}

// NewQueue returns a Queue on the Redis that rdb options name.
func NewQueue(conn asynq.RedisConnOpt, opts QueueOptions) *Queue {
	if opts.MaxRetry <= 0 {
		opts.MaxRetry = 5
	}
	if opts.TaskTimeout <= 0 {
		opts.TaskTimeout = 30 * time.Minute
	}
	return &Queue{client: asynq.NewClient(conn), opts: opts}
}

// Close closes the queue's connection.
func (q *Queue) Close() error { return q.client.Close() }

// Enqueue asks a worker on queue to advance the run. Duplicates are harmless:
// the run's lease serialises workers and advancing is idempotent.
func (q *Queue) Enqueue(ctx context.Context, queue, runID string) error {
	_, err := q.client.EnqueueContext(ctx, asynq.NewTask(taskAdvance, []byte(runID)),
		asynq.Queue(queue), asynq.MaxRetry(q.opts.MaxRetry), asynq.Timeout(q.opts.TaskTimeout))
	return err
}

// EnqueueTimeout asks a worker to check a checkpoint's timeout at a time.
func (q *Queue) EnqueueTimeout(ctx context.Context, queue, runID, instanceID string, at time.Time) error {
	_, err := q.client.EnqueueContext(ctx, asynq.NewTask(taskTimeout, []byte(runID+"\n"+instanceID)),
		asynq.Queue(queue), asynq.ProcessAt(at), asynq.MaxRetry(q.opts.MaxRetry), asynq.Timeout(time.Minute))
	return err
}

// Advancer is what a worker needs from the engine.
type Advancer interface {
	Advance(ctx context.Context, runID string) error
	CheckTimeout(ctx context.Context, runID, instanceID string) error
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
	// 200 ms): the longest a decision waits before a worker picks it up.
	PollInterval time.Duration
	// RetryDelay overrides asynq's retry backoff (tests).
	RetryDelay func(n int, err error) time.Duration
	Logger     *slog.Logger
}

// Worker takes runs from the queue and advances them with the engine.
type Worker struct {
	srv *asynq.Server
	mux *asynq.ServeMux
}

// NewWorker returns a Worker; call Start, then Stop.
func NewWorker(conn asynq.RedisConnOpt, adv Advancer, opts WorkerOptions) *Worker {
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
	log := opts.Logger
	cfg := asynq.Config{
		Concurrency:     opts.Concurrency,
		Queues:          opts.Queues,
		ShutdownTimeout: opts.ShutdownTimeout,
		Logger:          asynqLogger{log},
		LogLevel:        asynq.WarnLevel,
		// Idle workers look for new work this often; retries and scheduled
		// checkpoint timeouts are looked for every second.
		TaskCheckInterval:        opts.PollInterval,
		DelayedTaskCheckInterval: time.Second,
	}
	if opts.RetryDelay != nil {
		cfg.RetryDelayFunc = func(n int, err error, _ *asynq.Task) time.Duration { return opts.RetryDelay(n, err) }
	}
	mux := asynq.NewServeMux()
	mux.HandleFunc(taskAdvance, func(ctx context.Context, t *asynq.Task) error {
		runID := string(t.Payload())
		err := adv.Advance(ctx, runID)
		if err == nil || ctx.Err() != nil {
			return err
		}
		if errors.Is(err, ErrBusy) {
			// Another worker holds the run and is advancing it; it re-reads the
			// run after every step, so this task has nothing to add.
			log.Debug("run is being advanced elsewhere", "run", runID)
			return nil
		}
		if errors.Is(err, pipeline.ErrNotFound) {
			log.Warn("queued run does not exist", "run", runID)
			return fmt.Errorf("%w: %w", err, asynq.SkipRetry)
		}
		retried, _ := asynq.GetRetryCount(ctx)
		maxRetry, _ := asynq.GetMaxRetry(ctx)
		if retried >= maxRetry {
			log.Error("run keeps failing; ending it", "run", runID, "attempts", retried+1, "err", err)
			if ferr := adv.Fail(context.WithoutCancel(ctx), runID, err); ferr != nil {
				return fmt.Errorf("end failing run %s: %w (cause: %w)", runID, ferr, err)
			}
			return nil
		}
		log.Warn("advancing run failed; it will be retried", "run", runID, "attempt", retried+1, "err", err)
		return err
	})
	mux.HandleFunc(taskTimeout, func(ctx context.Context, t *asynq.Task) error {
		runID, instID, ok := cutLine(string(t.Payload()))
		if !ok {
			return fmt.Errorf("bad timeout task %q: %w", t.Payload(), asynq.SkipRetry)
		}
		return adv.CheckTimeout(ctx, runID, instID)
	})
	return &Worker{srv: asynq.NewServer(conn, cfg), mux: mux}
}

func cutLine(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// Start starts taking work in the background.
func (w *Worker) Start() error { return w.srv.Start(w.mux) }

// Stop stops taking new work, waits for steps in flight up to the shutdown
// timeout, and hands unfinished ones back to the queue.
func (w *Worker) Stop() { w.srv.Shutdown() }

// asynqLogger routes asynq's logs to slog.
type asynqLogger struct{ l *slog.Logger }

func (a asynqLogger) Debug(args ...any) { a.l.Debug(fmt.Sprint(args...)) }
func (a asynqLogger) Info(args ...any)  { a.l.Info(fmt.Sprint(args...)) }
func (a asynqLogger) Warn(args ...any)  { a.l.Warn(fmt.Sprint(args...)) }
func (a asynqLogger) Error(args ...any) { a.l.Error(fmt.Sprint(args...)) }
func (a asynqLogger) Fatal(args ...any) { a.l.Error(fmt.Sprint(args...)) }
