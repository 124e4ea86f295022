package roles

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/internal/app"
)

// foregroundProcess is a foreground process of fakes: a job, workers that
// start (or fail to) when started is released, an after-workers hook and
// a presenter, each noting what it does in r.
func foregroundProcess(r *recorder, job func(ctx context.Context) error, started <-chan struct{}, startErr error) *Process {
	p := newProcess()
	up := make(chan bool, 1)
	p.add("workers", stageWorkers, func(ctx context.Context) error {
		<-started
		// Noted before the job is told, as the workers are up (or failed)
		// before StartWorker returns: the job's note comes after.
		if startErr != nil {
			r.note("workers failed")
			up <- false
			return startErr
		}
		r.note("workers up")
		up <- true
		return waiting(r, "workers", nil, nil)(ctx)
	})
	p.add("presenters", stagePresenters, waiting(r, "presenters", nil, nil))
	p.addForeground(Job{
		Run: func(ctx context.Context, _ *app.App) error {
			r.note("job starts")
			return job(ctx)
		},
		AfterWorkers: func(ctx context.Context, _ *app.App) {
			if ctx.Err() != nil {
				r.note("after workers: context ended")
			}
			r.note("after workers")
		},
	}, up)
	return p
}

// TestAForegroundJobEndsTheProcess: the job starts once the workers take
// runs; its return ends the process, whose parts then stop in order (the
// workers hand their steps back, then the after-workers hook runs, then
// the presenters close), and its error is what Run returns, as it is:
// context.Canceled too.
func TestAForegroundJobEndsTheProcess(t *testing.T) {
	stopped := &exitCode{130}
	for name, jobErr := range map[string]error{"nil": nil, "error": stopped} {
		t.Run(name, func(t *testing.T) {
			r := newRecorder()
			up := make(chan struct{})
			release := make(chan struct{})
			p := foregroundProcess(r, func(context.Context) error {
				<-release
				r.note("job done")
				return jobErr
			}, up, nil)
			if got, want := p.Parts(), []string{"foreground", "workers", "after workers", "presenters"}; !slices.Equal(got, want) {
				t.Errorf("Parts() = %v, want %v", got, want)
			}
			done := make(chan error, 1)
			go func() { done <- p.Run(context.Background()) }() // owner: the test; ends with the job
			if slices.Contains(r.got(), "job starts") {
				t.Fatalf("the job started before the workers: %v", r.got())
			}
			close(up)
			close(release)
			if err := <-done; err != jobErr { //nolint:errorlint // the job's error must come back as it is, not wrapped
				t.Errorf("Run = %v, want the job's %v", err, jobErr)
			}
			want := []string{"workers up", "job starts", "job done", "stop workers", "done workers", "after workers", "stop presenters", "done presenters"}
			if got := r.got(); !slices.Equal(got, want) {
				t.Errorf("events %v, want %v", got, want)
			}
		})
	}
}

// exitCode is an error of the command's kind (researchbot run's exit 130).
type exitCode struct{ code int }

func (e *exitCode) Error() string { return "stopped" }

// TestCtrlCStopsTheJobFirstAndTheHookRunsAfterTheWorkers: when the
// process is told to stop (Ctrl-C), the job is stopped first and returns
// its own error (exit 130); the workers hand their steps back only once it
// has returned; the after-workers hook (run: mark the run interrupted)
// runs only once the workers have returned, with a context that is not
// cancelled, and the presenters close last. The job's error is Run's as
// it is, even context.Canceled, which other parts return as a clean stop.
func TestCtrlCStopsTheJobFirstAndTheHookRunsAfterTheWorkers(t *testing.T) {
	for _, stopped := range []error{&exitCode{130}, context.Canceled} {
		t.Run(stopped.Error(), func(t *testing.T) { ctrlC(t, stopped) })
	}
}

// ctrlC is the test above with a job that returns stopped.
func ctrlC(t *testing.T, stopped error) {
	r := newRecorder()
	handBack := make(chan struct{})
	p := newProcess()
	up := make(chan bool, 1)
	p.add("workers", stageWorkers, func(ctx context.Context) error {
		r.note("workers up") // before the job is told (see foregroundProcess)
		up <- true
		return waiting(r, "workers", handBack, nil)(ctx)
	})
	p.add("presenters", stagePresenters, waiting(r, "presenters", nil, nil))
	p.addForeground(Job{
		Run: func(ctx context.Context, _ *app.App) error {
			r.note("job starts")
			<-ctx.Done()
			r.note("job stopped")
			return stopped
		},
		AfterWorkers: func(ctx context.Context, _ *app.App) {
			if ctx.Err() != nil {
				r.note("after workers: context ended")
			}
			r.note("after workers")
		},
	}, up)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }() // owner: the test; ends with ctx
	for !slices.Contains(r.got(), "job starts") {
		<-r.changed
	}
	cancel() // Ctrl-C
	for !slices.Contains(r.got(), "stop workers") {
		select {
		case err := <-done:
			t.Fatalf("Run returned before the workers handed back: %v", err)
		case <-r.changed:
		}
	}
	if slices.Contains(r.got(), "after workers") || slices.Contains(r.got(), "stop presenters") {
		t.Fatalf("a later stage ran while the workers handed their steps back: %v", r.got())
	}
	close(handBack)
	if err := <-done; err != stopped { //nolint:errorlint // the job's error must come back as it is, not wrapped
		t.Errorf("Run = %v, want the job's %v", err, stopped)
	}
	want := []string{"workers up", "job starts", "job stopped", "stop workers", "done workers", "after workers", "stop presenters", "done presenters"}
	if got := r.got(); !slices.Equal(got, want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestWorkersThatCannotStartSkipTheJob: when the workers cannot start,
// the job never starts, the after-workers hook is not called, and Run
// returns the workers' error, even when the process was told to stop while
// they started.
func TestWorkersThatCannotStartSkipTheJob(t *testing.T) {
	refused := errors.New("start worker: refused")
	for _, stopFirst := range []bool{false, true} {
		r := newRecorder()
		up := make(chan struct{})
		p := foregroundProcess(r, func(context.Context) error { return nil }, up, refused)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- p.Run(ctx) }() // owner: the test; ends with the workers' failure
		if stopFirst {
			cancel()
		}
		close(up)
		if err := <-done; !errors.Is(err, refused) {
			t.Errorf("stopped first %v: Run = %v, want %v", stopFirst, err, refused)
		}
		cancel()
		if got, want := r.got(), []string{"workers failed", "stop presenters", "done presenters"}; !slices.Equal(got, want) {
			t.Errorf("stopped first %v: events %v, want %v", stopFirst, got, want)
		}
	}
}

// TestNewBuildsAForegroundProcess: the Foreground role's process, on the
// embedded Redis, is the job, the workers of its queue (the one Prepare
// names) and the hook, and no Slack presenter even with a bot token; the
// job's end ends the process. A Prepare that refuses fails New; a Foreground without a
// job, or with Slack, is refused.
func TestNewBuildsAForegroundProcess(t *testing.T) {
	cfg, err := config.Load(func(k string) string {
		return map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "SLACK_BOT_TOKEN": "xoxb-test"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	var events []string // the job's part, then the hook's: ordered by Run
	p, err := New(context.Background(), Config{Config: cfg, Roles: []Role{Foreground, Workers},
		Queues: []string{"terminal-new"}, NewQueue: true,
		Job: Job{
			Prepare: func(context.Context, *app.App) (string, error) { return "terminal-resumed", nil },
			Run: func(context.Context, *app.App) error {
				events = append(events, "job")
				return nil
			},
			AfterWorkers: func(context.Context, *app.App) { events = append(events, "after workers") },
		}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Parts(), []string{"foreground", "workers", "after workers"}; !slices.Equal(got, want) {
		t.Errorf("parts %v, want %v (no Slack presenter in a terminal's process)", got, want)
	}
	if err := p.Run(context.Background()); err != nil {
		t.Errorf("Run: %v", err)
	}
	_ = p.Close()
	if want := []string{"job", "after workers"}; !slices.Equal(events, want) {
		t.Errorf("events %v, want %v", events, want)
	}

	refused := errors.New("no such run")
	_, err = New(context.Background(), Config{Config: cfg, Roles: []Role{Foreground, Workers}, Job: Job{
		Prepare: func(context.Context, *app.App) (string, error) { return "", refused },
		Run:     func(context.Context, *app.App) error { return nil },
	}})
	if !errors.Is(err, refused) {
		t.Errorf("New with a refusing Prepare = %v, want %v", err, refused)
	}
	for _, roles := range [][]Role{{Foreground, Workers}, {Foreground, Slack}} {
		job := Job{Run: func(context.Context, *app.App) error { return nil }}
		if roles[1] == Workers {
			job = Job{}
		}
		if _, err := New(context.Background(), Config{Config: cfg, Roles: roles, Job: job}); err == nil {
			t.Errorf("New(%v, Run set %v) succeeded", roles, job.Run != nil)
		}
	}
}
