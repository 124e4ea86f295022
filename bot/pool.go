package bot

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// pool runs slow work after the ack on a bounded number of workers with a
// bounded queue. It owns its goroutines: start them with run, stop them
// with close (which finishes the queued jobs first).
type pool struct {
	jobs    chan func(context.Context)
	workers int
	timeout time.Duration
	log     *slog.Logger
	wg      sync.WaitGroup

	mu     sync.Mutex
	closed bool
}

func newPool(workers, queue int, timeout time.Duration, log *slog.Logger) *pool {
	return &pool{jobs: make(chan func(context.Context), queue), workers: workers, timeout: timeout, log: log}
}

// run starts the workers. Each job gets its own context bounded by the pool's
// timeout; ctx's values (not its cancellation) are passed on, so a shutdown
// lets the jobs in flight finish.
func (p *pool) run(ctx context.Context) {
	base := context.WithoutCancel(ctx)
	for range p.workers {
		p.wg.Go(func() {
			for job := range p.jobs {
				p.do(base, job)
			}
		})
	}
}

func (p *pool) do(base context.Context, job func(context.Context)) {
	ctx, cancel := context.WithTimeout(base, p.timeout)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("bot: job panicked", "panic", r)
		}
	}()
	job(ctx)
}

// submit queues a job without blocking; it reports false when the queue is
// full or the pool is closed.
func (p *pool) submit(job func(context.Context)) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	select {
	case p.jobs <- job:
		return true
	default:
		return false
	}
}

// close stops taking jobs and waits for the queued and running ones.
func (p *pool) close() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.jobs)
	}
	p.mu.Unlock()
	p.wg.Wait()
}
