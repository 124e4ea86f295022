package roles

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that a process leaves no goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// bleve's analysis workers, started by its package init.
		goleak.IgnoreAnyFunction("github.com/blevesearch/bleve_index_api.AnalysisWorker"),
	)
}

// recorder notes, in order, the parts that saw their context end and the
// parts that returned.
type recorder struct {
	mu      sync.Mutex
	events  []string
	changed chan struct{} // a new event (capacity 1)
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{}, 1)} }

func (r *recorder) note(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// waiting is a part that waits for its context, then for release (its
// drain), and returns err.
func waiting(r *recorder, name string, release <-chan struct{}, err error) func(context.Context) error {
	return func(ctx context.Context) error {
		<-ctx.Done()
		r.note("stop " + name)
		if release != nil {
			<-release
		}
		r.note("done " + name)
		return err
	}
}

func newProcess() *Process { return &Process{} }

// TestRunStopsThePartsStageByStage: when the process's context ends,
// Slack and the scheduler are stopped together; the HTTP endpoints only
// once both have returned (Slack drains its pool first), the workers only
// once HTTP has, and the presenters last.
func TestRunStopsThePartsStageByStage(t *testing.T) {
	r := newRecorder()
	drain := make(chan struct{})
	p := newProcess()
	p.add("presenters", stagePresenters, waiting(r, "presenters", nil, nil))
	p.add("workers", stageWorkers, waiting(r, "workers", nil, nil))
	p.add("http", stageHTTP, waiting(r, "http", nil, nil))
	p.add("slack", stageIntake, func(ctx context.Context) error {
		<-ctx.Done()
		r.note("stop slack")
		<-drain // the pool drains: nothing after this stage may stop yet
		r.note("done slack")
		return context.Canceled
	})
	p.add("scheduler", stageIntake, waiting(r, "scheduler", nil, nil))
	if got, want := p.Parts(), []string{"slack", "scheduler", "http", "workers", "presenters"}; !slices.Equal(got, want) {
		t.Errorf("Parts() = %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }() // owner: the test; ends with ctx
	cancel()
	// The scheduler stops with Slack, not after it.
	for !slices.Contains(r.got(), "done scheduler") || !slices.Contains(r.got(), "stop slack") {
		select {
		case err := <-done:
			t.Fatalf("Run returned before Slack drained: %v", err)
		case <-r.changed:
		}
	}
	if slices.ContainsFunc(r.got(), func(e string) bool { return e == "stop http" || e == "stop workers" || e == "stop presenters" }) {
		t.Fatalf("a later stage stopped while Slack drained: %v", r.got())
	}
	close(drain)
	if err := <-done; err != nil {
		t.Errorf("Run: %v, want nil (Slack's context.Canceled is a clean stop)", err)
	}
	ev := r.got()
	at := func(e string) int { return slices.Index(ev, e) }
	for _, order := range [][2]string{
		{"done slack", "stop http"}, {"done scheduler", "stop http"},
		{"done http", "stop workers"}, {"done workers", "stop presenters"},
	} {
		if at(order[0]) < 0 || at(order[1]) < 0 || at(order[0]) > at(order[1]) {
			t.Errorf("%q should come before %q: %v", order[0], order[1], ev)
		}
	}
}

// TestAPartThatFailsEndsTheProcess: a part's error (Slack refusing a
// token) stops every other part in order and is what Run returns; a part
// that returns nil on its own ends the process too.
func TestAPartThatFailsEndsTheProcess(t *testing.T) {
	refused := errors.New("SLACK_APP_TOKEN: token_revoked")
	for name, err := range map[string]error{"error": refused, "nil": nil} {
		t.Run(name, func(t *testing.T) {
			r := newRecorder()
			p := newProcess()
			p.add("slack", stageIntake, func(context.Context) error { r.note("done slack"); return err })
			p.add("scheduler", stageIntake, waiting(r, "scheduler", nil, nil))
			p.add("workers", stageWorkers, waiting(r, "workers", nil, nil))
			got := p.Run(context.Background())
			if !errors.Is(got, err) || (err == nil) != (got == nil) {
				t.Errorf("Run = %v, want %v", got, err)
			}
			ev := r.got()
			if !slices.Contains(ev, "done scheduler") || !slices.Contains(ev, "done workers") ||
				slices.Index(ev, "done scheduler") > slices.Index(ev, "stop workers") {
				t.Errorf("the other parts did not stop in order: %v", ev)
			}
			if p.Run(context.Background()) == nil {
				t.Error("a second Run succeeded")
			}
		})
	}
}
