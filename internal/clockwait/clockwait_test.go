package clockwait_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/quartz"
	"github.com/researchbot/researchbot/internal/clockwait"
)

func TestSleepEndsWhenTheClockHasMoved(t *testing.T) {
	ctx := t.Context()
	clock := quartz.NewMock(t)
	trap := clock.Trap().NewTimer("test")
	defer trap.Close()
	done := make(chan error, 1)
	go func() { done <- clockwait.Sleep(ctx, clock, time.Minute, "test") }()
	trap.MustWait(ctx).MustRelease(ctx)
	clock.Advance(59 * time.Second).MustWait(ctx)
	select {
	case err := <-done:
		t.Fatalf("Sleep returned %v before its minute", err)
	default:
	}
	clock.Advance(time.Second).MustWait(ctx)
	if err := <-done; err != nil {
		t.Errorf("Sleep = %v, want nil", err)
	}
}

func TestSleepEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := clockwait.Sleep(ctx, quartz.NewMock(t), time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep = %v, want context.Canceled", err)
	}
}
