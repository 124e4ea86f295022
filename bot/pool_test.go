package bot

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

func TestPoolIsBoundedAndFinishesQueuedWorkOnClose(t *testing.T) {
	p := newPool(1, 1, time.Second, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	p.run(ctx)
	release := make(chan struct{})
	var done atomic.Int32
	started := make(chan struct{})
	if !p.submit(func(context.Context) { close(started); <-release; done.Add(1) }) {
		t.Fatal("first job refused")
	}
	<-started
	if !p.submit(func(context.Context) { done.Add(1) }) {
		t.Fatal("queued job refused")
	}
	if p.submit(func(context.Context) {}) {
		t.Fatal("a job beyond the queue was accepted")
	}
	cancel() // a shutdown does not cancel the jobs in flight
	close(release)
	p.close()
	if done.Load() != 2 {
		t.Fatalf("%d jobs done after close, want 2", done.Load())
	}
	if p.submit(func(context.Context) {}) {
		t.Fatal("a closed pool accepted a job")
	}
}

func TestPoolSurvivesAPanickingJob(t *testing.T) {
	p := newPool(1, 2, time.Second, slog.New(slog.DiscardHandler))
	p.run(context.Background())
	var ok atomic.Bool
	p.submit(func(context.Context) { panic("boom") })
	p.submit(func(context.Context) { ok.Store(true) })
	p.close()
	if !ok.Load() {
		t.Fatal("the job after a panic did not run")
	}
}
