package bot

import (
	"context"
	"testing"
)

type valueKey struct{}

// TestAHeldBackProgressEditKeepsTheValuesOfItsCall: a progress edit sent
// later is made with the values of the Progress call that asked for it
// (the run's trace span among them) and the presenter's cancellation, not
// the call's.
func TestAHeldBackProgressEditKeepsTheValuesOfItsCall(t *testing.T) {
	call, cancelCall := context.WithCancel(context.WithValue(context.Background(), valueKey{}, "step span"))
	cancelCall()
	presenter, stop := context.WithCancel(context.Background())
	ctx := withValues(presenter, context.WithoutCancel(call))
	if got := ctx.Value(valueKey{}); got != "step span" {
		t.Fatalf("value %v, want the call's", got)
	}
	if ctx.Err() != nil {
		t.Fatal("the ended call's cancellation reached the held-back edit")
	}
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	stop()
	<-child.Done() // the presenter's cancellation reaches what is derived from it
	if withValues(presenter, nil) != presenter {
		t.Error("without a call's context the presenter's is not used as it is")
	}
}
