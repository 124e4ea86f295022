package scheduler_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// flakyInner is an inner presenter whose Finished fails while fail > 0, and
// which records the runs it was given.
type flakyInner struct {
	mu       sync.Mutex
	fail     int
	posted   int
	offers   []*pipeline.Run
	decideds []*pipeline.Run
}

func (p *flakyInner) Offer(_ context.Context, r *pipeline.Run, _ *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offers = append(p.offers, r)
	return nil
}

func (p *flakyInner) Decided(_ context.Context, r *pipeline.Run, _ *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decideds = append(p.decideds, r)
	return nil
}

func (p *flakyInner) Progress(context.Context, *pipeline.Run)       {}
func (p *flakyInner) Notice(context.Context, *pipeline.Run, string) {}
func (p *flakyInner) Stranded(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}
func (p *flakyInner) BreakerTripped(context.Context, checkpoints.Definition, int) error { return nil }

func (p *flakyInner) RemindersStopped(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}

func (p *flakyInner) Finished(context.Context, *pipeline.Run) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fail > 0 {
		p.fail--
		return errors.New("slack: ratelimited")
	}
	p.posted++
	return nil
}

// finishedRun returns the run of a digest, completed with a report citing url.
func (f *fixture) finishedRun(runID, url string) *pipeline.Run {
	f.t.Helper()
	r, err := f.runner.Load(context.Background(), runID)
	if err != nil {
		f.t.Fatal(err)
	}
	r.Status = pipeline.StatusCompleted
	r.FinishedAt = f.clock.Now()
	r.Sources = []pipeline.Source{{ID: 1, Key: url, URL: url}}
	r.Pages = []pipeline.Page{{SourceID: 1, URL: url, FinalURL: url, Simhash: 4242}}
	r.Report = &pipeline.Report{References: []pipeline.Reference{{N: 1, SourceID: 1, URL: url}}}
	return r
}

// TestDigestPresenterPostsBeforeRecording: a digest whose post fails is not
// recorded (Known untouched, still running), so the engine's retry can post
// it; once posted it is recorded once, and a retry after that records
// nothing twice.
func TestDigestPresenterPostsBeforeRecording(t *testing.T) {
	f := newFixture(t, nil)
	f.create("Posted")
	f.tickAt(at(0, "09:00"))
	inner := &flakyInner{fail: 1}
	pres := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Store: f.store, Inner: inner, Clock: f.clock})
	r := f.finishedRun("r-1", "https://news.example/a")
	ctx := context.Background()

	if err := pres.Finished(ctx, r); err == nil {
		t.Fatal("Finished reported success although the post failed")
	}
	st := f.stream("Posted")
	if len(st.Known.URLs) != 0 || len(st.Known.Simhashes) != 0 || st.Running != "r-1" || st.Digests[0].Status != scheduler.DigestRunning {
		t.Fatalf("an unposted digest was recorded: known %+v running %q record %+v", st.Known, st.Running, st.Digests[0])
	}

	if err := pres.Finished(ctx, r); err != nil {
		t.Fatalf("retry: %v", err)
	}
	st = f.stream("Posted")
	if st.Running != "" || st.Digests[0].Status != scheduler.DigestCompleted || st.Digests[0].NewItems != 1 ||
		!slices.Contains(st.Known.URLs, "https://news.example/a") || !slices.Equal(st.Known.Simhashes, []uint64{4242}) {
		t.Fatalf("after the post: known %+v running %q record %+v", st.Known, st.Running, st.Digests[0])
	}
	version, known := st.Version, slices.Clone(st.Known.URLs)

	if err := pres.Finished(ctx, r); err != nil {
		t.Fatalf("second retry: %v", err)
	}
	st = f.stream("Posted")
	if st.Version != version || !slices.Equal(st.Known.URLs, known) || len(st.Digests) != 1 {
		t.Errorf("a retry after success recorded again: version %d→%d, known %v→%v, %d records", version, st.Version, known, st.Known.URLs, len(st.Digests))
	}
	if inner.posted != 2 {
		t.Errorf("inner presenter called successfully %d times, want 2 (it is idempotent itself)", inner.posted)
	}
}

// TestDigestPresenterWithoutSlackSaysSo: with no inner presenter (no Slack
// token) Finished fails with ErrNoPresenter and records nothing.
func TestDigestPresenterWithoutSlackSaysSo(t *testing.T) {
	f := newFixture(t, nil)
	f.create("Unposted")
	f.tickAt(at(0, "09:00"))
	pres := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Store: f.store, Clock: f.clock})
	err := pres.Finished(context.Background(), f.finishedRun("r-1", "https://news.example/a"))
	if !errors.Is(err, scheduler.ErrNoPresenter) || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
		t.Fatalf("Finished without a presenter: %v", err)
	}
	if st := f.stream("Unposted"); len(st.Known.URLs) != 0 || st.Running != "r-1" {
		t.Errorf("recorded without being posted: known %v running %q", st.Known.URLs, st.Running)
	}
}

// TestSchedulerRecordsOnlyPresentedRuns: a finished run the engine has not
// posted yet is left alone (it is recorded once posted); one that stays
// unposted past the maximum duration is swept without touching Known.
func TestSchedulerRecordsOnlyPresentedRuns(t *testing.T) {
	f := newFixture(t, nil) // MaxDigestDuration 1h
	f.create("Unshown")
	f.tickAt(at(0, "09:00"))
	f.runner.update("r-1", func(r *pipeline.Run) {
		r.Status = pipeline.StatusCompleted
		r.UpdatedAt = at(0, "09:20")
		r.Report = &pipeline.Report{References: []pipeline.Reference{{N: 1, SourceID: 1, URL: "https://x.example/1"}}}
	})
	f.tickAt(at(0, "09:30"))
	if st := f.stream("Unshown"); st.Running != "r-1" || st.Digests[0].Status != scheduler.DigestRunning || len(st.Known.URLs) != 0 {
		t.Fatalf("an unposted finished run was recorded: running %q record %+v known %v", st.Running, st.Digests[0], st.Known.URLs)
	}
	f.tickAt(at(0, "10:30"))
	st := f.stream("Unshown")
	if st.Running != "" || st.Digests[0].Status != scheduler.DigestSwept || !strings.Contains(st.Digests[0].Note, "could not be posted") || len(st.Known.URLs) != 0 {
		t.Fatalf("a never-posted run: running %q record %+v known %v", st.Running, st.Digests[0], st.Known.URLs)
	}
}

// TestHeldDraftApprovedLateCompletes: a hold_draft digest whose owner approves
// the draft three hours after the fire is not swept: waiting for a person is
// not working time. It completes and is recorded.
func TestHeldDraftApprovedLateCompletes(t *testing.T) {
	f := newFixture(t, nil) // MaxDigestDuration 1h
	f.create("Late")
	if _, err := f.svc.SetPolicy(context.Background(), "Late", "UOWNER", false, scheduler.PolicyHoldDraft); err != nil {
		t.Fatal(err)
	}
	f.tickAt(at(0, "09:00"))
	f.runner.update("r-1", func(r *pipeline.Run) {
		r.Status, r.UpdatedAt, r.Active = pipeline.StatusWaiting, at(0, "09:10"), 10*time.Minute
	})
	f.tickAt(at(0, "11:00"))
	f.tickAt(at(0, "12:00"))
	// The owner approves at 12:00; the worker saves the run as running.
	f.runner.update("r-1", func(r *pipeline.Run) {
		r.Status, r.UpdatedAt = pipeline.StatusRunning, at(0, "12:00")
		r.Checkpoints = []checkpoints.Instance{{ID: "c1", DefinitionID: checkpoints.DraftReview,
			Decision: &checkpoints.Decision{Action: checkpoints.Approve, By: "UOWNER", At: at(0, "12:00")}}}
	})
	f.tickAt(at(0, "12:01"))
	f.tickAt(at(0, "12:30"))
	if st := f.stream("Late"); st.Running != "r-1" || st.Digests[0].Status != scheduler.DigestRunning {
		t.Fatalf("an approved draft was swept: running %q record %+v", st.Running, st.Digests[0])
	}
	if len(f.runner.cancelled) != 0 {
		t.Fatalf("the approved digest was cancelled: %v", f.runner.cancelled)
	}
	f.finish("r-1", "https://news.example/late")
	if st := f.stream("Late"); st.Digests[0].Status != scheduler.DigestCompleted || !slices.Contains(st.Known.URLs, "https://news.example/late") {
		t.Errorf("late approval: record %+v known %v", st.Digests[0], st.Known.URLs)
	}
	// A run that then hangs for more than an hour of no progress is swept.
	f.tickAt(at(1, "09:00"))
	f.runner.update("r-2", func(r *pipeline.Run) { r.Status, r.UpdatedAt = pipeline.StatusRunning, at(1, "09:05") })
	f.tickAt(at(1, "10:06"))
	if st := f.stream("Late"); st.Digests[1].Status != scheduler.DigestSwept || !strings.Contains(st.Digests[1].Note, "no progress") {
		t.Errorf("a hung run was not swept: %+v", st.Digests[1])
	}
}

// TestHeldDraftGoesToOwnerPrivately: a digest run asks for its checkpoints
// to be private (Origin.Direct, see TestDigestRequest); the held draft and
// its collapse reach the inner presenter with the run as it is, which
// decides what private means in Slack.
func TestHeldDraftGoesToOwnerPrivately(t *testing.T) {
	inner := &flakyInner{}
	pres := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Inner: inner})
	st := scheduler.Stream{ID: "s-1", Owner: "UOWNER", Spec: dailySpec("Held"), Policy: scheduler.PolicyHoldDraft}
	req := scheduler.DigestRequest(st, at(14, "09:00"))
	r := &pipeline.Run{ID: "r-1", RequestedBy: req.RequestedBy, Mode: req.Mode, Origin: req.Origin}
	if !r.Origin.Direct || r.RequestedBy != "UOWNER" || r.Origin.Channel != st.Spec.Channel {
		t.Fatalf("a held digest is not addressed privately to its owner: by %q, %+v", r.RequestedBy, r.Origin)
	}
	inst := &checkpoints.Instance{ID: "c1", DefinitionID: checkpoints.DraftReview}
	ctx := context.Background()
	if err := pres.Offer(ctx, r, inst); err != nil {
		t.Fatal(err)
	}
	if err := pres.Decided(ctx, r, inst); err != nil {
		t.Fatal(err)
	}
	if len(inner.offers) != 1 || len(inner.decideds) != 1 {
		t.Fatalf("offers %d decideds %d", len(inner.offers), len(inner.decideds))
	}
	for _, got := range append(slices.Clone(inner.offers), inner.decideds...) {
		if got != r {
			t.Errorf("the inner presenter got a different run: %+v", got.Origin)
		}
	}
	if err := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{}).Offer(ctx, r, inst); !errors.Is(err, scheduler.ErrNoPresenter) {
		t.Errorf("offer without a presenter: %v", err)
	}
}
