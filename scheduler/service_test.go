package scheduler_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/researchtest"

	"github.com/coder/quartz"
	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// fakeRunner is a scheduler.Runner that keeps runs in memory. With finishAtOnce,
// every run it starts is completed at once (as if a worker had run it), without
// its presenter being told: the scheduler must notice on its own.
type fakeRunner struct {
	mu           sync.Mutex
	runs         map[string]*pipeline.Run
	started      []pipeline.Request
	ids          []string
	cancelled    []string
	finishAtOnce bool
	failStart    error
}

func newFakeRunner() *fakeRunner { return &fakeRunner{runs: map[string]*pipeline.Run{}} }

func (f *fakeRunner) Start(_ context.Context, req pipeline.Request) (*pipeline.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failStart != nil {
		return nil, f.failStart
	}
	id := fmt.Sprintf("r-%d", len(f.started)+1)
	r := &pipeline.Run{ID: id, Question: req.Question, Mode: req.Mode, Origin: req.Origin, Since: req.Since, Known: req.Known,
		RequestedBy: req.RequestedBy, Status: pipeline.StatusQueued, CreatedAt: time.Now()}
	if f.finishAtOnce {
		r.Status = pipeline.StatusCompleted
		r.Report = &pipeline.Report{NothingNew: true}
		r.Presented = true
	}
	f.runs[id] = r
	f.started = append(f.started, req)
	f.ids = append(f.ids, id)
	return cloneRun(r), nil
}

func (f *fakeRunner) Load(_ context.Context, id string) (*pipeline.Run, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.runs[id]
	if !ok {
		return nil, pipeline.ErrNotFound
	}
	return cloneRun(r), nil
}

func (f *fakeRunner) Cancel(_ context.Context, id, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, id)
	return nil
}

// setStatus sets a run's status; a final status is also presented, as the
// engine marks it once its presenter succeeded.
func (f *fakeRunner) setStatus(id string, s pipeline.Status) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs[id].Status = s
	f.runs[id].Presented = s.Final()
}

// update changes a stored run.
func (f *fakeRunner) update(id string, change func(*pipeline.Run)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.runs[id])
}

func (f *fakeRunner) starts() []pipeline.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.started)
}

func cloneRun(r *pipeline.Run) *pipeline.Run { c := *r; return &c }

// innerRecorder is the inner presenter of a DigestPresenter.
type innerRecorder struct {
	mu       sync.Mutex
	finished []*pipeline.Run
	offered  []string
}

func (p *innerRecorder) Offer(_ context.Context, _ *pipeline.Run, inst *checkpoints.Instance) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.offered = append(p.offered, inst.DefinitionID)
	return nil
}
func (p *innerRecorder) Decided(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}
func (p *innerRecorder) Progress(context.Context, *pipeline.Run)       {}
func (p *innerRecorder) Notice(context.Context, *pipeline.Run, string) {}
func (p *innerRecorder) Stranded(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}
func (p *innerRecorder) BreakerTripped(context.Context, checkpoints.Definition, int) error {
	return nil
}
func (p *innerRecorder) RemindersStopped(context.Context, *pipeline.Run, *checkpoints.Instance) error {
	return nil
}
func (p *innerRecorder) Finished(_ context.Context, r *pipeline.Run) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished = append(p.finished, r)
	return nil
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC) // a Monday

func at(days int, clock string) time.Time {
	var h, m int
	fmt.Sscanf(clock, "%d:%d", &h, &m)
	return day0.AddDate(0, 0, days).Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

func dailySpec(name string) scheduler.Spec {
	return scheduler.Spec{
		Channel: "C0DIGEST", Purpose: "Track the Nordic heat pump market",
		BusinessGoals: []string{"Spot pricing moves"}, ExpectedOutcomes: "Better pricing decisions",
		Name: name, Type: scheduler.TypeMarket, FocusAreas: []string{"Nordics", "Residential"},
		Keywords: []string{"heat pump", "air-to-water"}, Competitors: []string{"Daikin", "NIBE"},
		Frequency: scheduler.Daily, TimeOfDay: "09:00", TimeZone: "UTC",
		Weekday: time.Monday, MonthDay: 1,
	}
}

type fixture struct {
	t      *testing.T
	store  *redisstore.Streams
	runner *fakeRunner
	clock  *researchtest.Clock
	svc    *scheduler.Service
	logs   *syncBuffer
	pres   *scheduler.DigestPresenter
	inner  *innerRecorder
}

func newFixture(t *testing.T, mutate func(*scheduler.ServiceConfig)) *fixture {
	t.Helper()
	_, rdb := redistest.Start(t)
	f := &fixture{t: t, store: redisstore.NewStreams(rdb, ""), runner: newFakeRunner(), clock: researchtest.NewClock(at(0, "08:00")), logs: &syncBuffer{}, inner: &innerRecorder{}}
	cfg := scheduler.ServiceConfig{
		Store: f.store, Runner: f.runner, Clock: f.clock, Queue: "digests",
		Logger:            slog.New(slog.NewTextHandler(f.logs, nil)),
		MaxDigestDuration: time.Hour,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	svc, err := scheduler.NewService(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	f.pres = scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Store: f.store, Inner: f.inner, Clock: f.clock})
	return f
}

func (f *fixture) create(name string) *scheduler.Stream {
	f.t.Helper()
	st, err := f.svc.Create(context.Background(), dailySpec(name), "UOWNER")
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

func (f *fixture) tickAt(t time.Time) {
	f.t.Helper()
	f.clock.Set(t)
	if err := f.svc.Tick(context.Background()); err != nil {
		f.t.Fatalf("tick at %s: %v", t, err)
	}
}

func (f *fixture) stream(name string) *scheduler.Stream {
	f.t.Helper()
	st, err := f.svc.Show(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	return st
}

// finish completes a run through the DigestPresenter, as the engine would,
// with a report citing the given URLs (page i has simhash 1000+i).
func (f *fixture) finish(runID string, urls ...string) *pipeline.Run {
	f.t.Helper()
	r, err := f.runner.Load(context.Background(), runID)
	if err != nil {
		f.t.Fatal(err)
	}
	r.Status = pipeline.StatusCompleted
	r.FinishedAt = f.clock.Now()
	r.Report = &pipeline.Report{NothingNew: len(urls) == 0}
	for i, u := range urls {
		r.Sources = append(r.Sources, pipeline.Source{ID: i + 1, Key: u, URL: u})
		r.Pages = append(r.Pages, pipeline.Page{SourceID: i + 1, URL: u, FinalURL: u, Simhash: uint64(1000 + i)})
		r.Report.References = append(r.Report.References, pipeline.Reference{N: i + 1, SourceID: i + 1, URL: u})
	}
	// An uncited page is not "reported".
	r.Pages = append(r.Pages, pipeline.Page{SourceID: 99, URL: "https://uncited.example/p", Simhash: 7})
	f.runner.mu.Lock()
	f.runner.runs[runID] = cloneRun(r)
	f.runner.mu.Unlock()
	if err := f.pres.Finished(context.Background(), r); err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestTickFiresAtScheduledTimes(t *testing.T) {
	f := newFixture(t, nil)
	st := f.create("Nordic heat pumps")
	if want := at(0, "09:00"); !st.NextFire.Equal(want) {
		t.Fatalf("NextFire after create = %s, want %s", st.NextFire, want)
	}
	f.tickAt(at(0, "08:59"))
	if n := len(f.runner.starts()); n != 0 {
		t.Fatalf("%d digests before the first scheduled time", n)
	}
	f.tickAt(at(0, "09:00"))
	starts := f.runner.starts()
	if len(starts) != 1 {
		t.Fatalf("%d digests at 09:00, want 1", len(starts))
	}
	req := starts[0]
	if req.Origin.Kind != "stream" || req.Origin.StreamID != st.ID || req.Origin.Channel != "C0DIGEST" || req.Origin.Queue != "digests" {
		t.Errorf("origin = %+v", req.Origin)
	}
	if req.Mode != checkpoints.ModeAuto || req.RequestedBy != "UOWNER" {
		t.Errorf("mode %q requested by %q", req.Mode, req.RequestedBy)
	}
	if want := at(-1, "09:00"); !req.Since.Equal(want) {
		t.Errorf("first digest Since = %s, want one period back (%s)", req.Since, want)
	}
	got := f.stream("Nordic heat pumps")
	if got.Running != "r-1" || !got.LastFire.Equal(at(0, "09:00")) || !got.NextFire.Equal(at(1, "09:00")) {
		t.Errorf("after the fire: running %q last %s next %s", got.Running, got.LastFire, got.NextFire)
	}
	if len(got.Digests) != 1 || got.Digests[0].Status != scheduler.DigestRunning || got.Digests[0].RunID != "r-1" {
		t.Fatalf("digests = %+v", got.Digests)
	}

	f.tickAt(at(0, "09:01"))
	f.tickAt(at(0, "23:59"))
	if n := len(f.runner.starts()); n != 1 {
		t.Fatalf("%d digests on day 0, want 1", n)
	}
	f.finish("r-1", "https://news.example/a?utm_source=x#top", "https://news.example/b")
	got = f.stream("Nordic heat pumps")
	if got.Running != "" || got.Digests[0].Status != scheduler.DigestCompleted || got.Digests[0].NewItems != 2 {
		t.Fatalf("after finishing: running %q digest %+v", got.Running, got.Digests[0])
	}
	if !slices.Contains(got.Known.URLs, "https://news.example/a") || !slices.Contains(got.Known.URLs, "https://news.example/b") {
		t.Errorf("Known.URLs = %v, want the normalised cited URLs", got.Known.URLs)
	}
	if !slices.Equal(got.Known.Simhashes, []uint64{1000, 1001}) {
		t.Errorf("Known.Simhashes = %v, want the cited pages' only", got.Known.Simhashes)
	}
	if len(f.inner.finished) != 1 {
		t.Errorf("inner presenter finished %d runs, want 1", len(f.inner.finished))
	}

	f.tickAt(at(1, "09:00"))
	starts = f.runner.starts()
	if len(starts) != 2 {
		t.Fatalf("%d digests by day 1, want 2", len(starts))
	}
	if !starts[1].Since.Equal(at(0, "09:00")) {
		t.Errorf("second digest Since = %s, want the previous fire time", starts[1].Since)
	}
	if !slices.Contains(starts[1].Known.URLs, "https://news.example/a") || len(starts[1].Known.Simhashes) != 2 {
		t.Errorf("second digest Known = %+v", starts[1].Known)
	}
}

func TestPausedStreamDoesNotFire(t *testing.T) {
	f := newFixture(t, nil)
	f.create("Paused one")
	ctx := context.Background()
	if _, err := f.svc.Pause(ctx, "paused ONE", "USOMEONE", false); !errors.Is(err, scheduler.ErrNotAllowed) {
		t.Fatalf("pause by a stranger: %v", err)
	}
	st, err := f.svc.Pause(ctx, "paused one", "UOWNER", false)
	if err != nil || !st.Paused || !st.NextFire.IsZero() {
		t.Fatalf("pause: %+v %v", st, err)
	}
	for d := range 3 {
		f.tickAt(at(d, "09:00"))
		f.tickAt(at(d, "12:00"))
	}
	if n := len(f.runner.starts()); n != 0 {
		t.Fatalf("a paused stream fired %d digests", n)
	}
	// Resumed (by an admin) at day 2 12:00: no catch-up for the paused days.
	if _, err := f.svc.Resume(ctx, "Paused one", "UADMIN", true); err != nil {
		t.Fatal(err)
	}
	f.tickAt(at(2, "12:01"))
	if n := len(f.runner.starts()); n != 0 {
		t.Fatalf("resume caught up %d missed digests", n)
	}
	if got := f.stream("Paused one"); !got.NextFire.Equal(at(3, "09:00")) {
		t.Errorf("next fire after resume = %s", got.NextFire)
	}
	f.tickAt(at(3, "09:00"))
	if n := len(f.runner.starts()); n != 1 {
		t.Fatalf("%d digests after resume, want 1", n)
	}
}

func TestCatchUpAfterDowntimeFiresOne(t *testing.T) {
	f := newFixture(t, nil)
	f.create("Catch up")
	// The scheduler was down for five days.
	f.tickAt(at(5, "10:30"))
	f.tickAt(at(5, "10:31"))
	starts := f.runner.starts()
	if len(starts) != 1 {
		t.Fatalf("%d digests after downtime, want one catch-up", len(starts))
	}
	st := f.stream("Catch up")
	if !st.LastFire.Equal(at(5, "09:00")) || len(st.Digests) != 1 || !st.Digests[0].FireAt.Equal(at(5, "09:00")) {
		t.Errorf("catch-up fired %s (digests %+v), want the latest scheduled time", st.LastFire, st.Digests)
	}
	if !starts[0].Since.Equal(at(4, "09:00")) {
		t.Errorf("catch-up Since = %s", starts[0].Since)
	}
}

func TestStillRunningDigestCausesRecordedSkip(t *testing.T) {
	f := newFixture(t, func(c *scheduler.ServiceConfig) { c.MaxDigestDuration = 72 * time.Hour })
	f.create("Slow")
	f.tickAt(at(0, "09:00"))
	f.runner.setStatus("r-1", pipeline.StatusRunning)
	f.tickAt(at(1, "09:00"))
	if n := len(f.runner.starts()); n != 1 {
		t.Fatalf("%d digests, want 1: the second fire must be skipped", n)
	}
	st := f.stream("Slow")
	if len(st.Digests) != 2 {
		t.Fatalf("digests = %+v", st.Digests)
	}
	skip := st.Digests[1]
	if skip.Status != scheduler.DigestSkipped || !skip.FireAt.Equal(at(1, "09:00")) || !strings.Contains(skip.Skipped, "r-1") {
		t.Errorf("skip record = %+v", skip)
	}
	if st.Running != "r-1" || !st.LastFire.Equal(at(1, "09:00")) {
		t.Errorf("running %q last fire %s", st.Running, st.LastFire)
	}
	// A run-now is refused while a digest is running.
	if _, err := f.svc.RunNow(context.Background(), "Slow", "UOWNER", false, scheduler.RunOptions{}); !errors.Is(err, scheduler.ErrDigestRunning) {
		t.Errorf("run now during a digest: %v", err)
	}
	// Once it finishes (recorded by the presenter), the next fire runs.
	f.finish("r-1")
	f.tickAt(at(2, "09:00"))
	if n := len(f.runner.starts()); n != 2 {
		t.Fatalf("%d digests after the slow one finished, want 2", n)
	}
	if got := f.stream("Slow").Digests[0]; !got.NothingNew || got.Status != scheduler.DigestCompleted {
		t.Errorf("first digest record = %+v", got)
	}
}

func TestSweeperMarksStuckRuns(t *testing.T) {
	f := newFixture(t, nil) // MaxDigestDuration 1h
	f.create("Stuck")
	f.create("Held")
	ctx := context.Background()
	if _, err := f.svc.SetPolicy(ctx, "Held", "UOWNER", false, scheduler.PolicyHoldDraft); err != nil {
		t.Fatal(err)
	}
	f.tickAt(at(0, "09:00"))
	starts := f.runner.starts()
	if len(starts) != 2 {
		t.Fatalf("%d digests, want 2", len(starts))
	}
	ids := map[string]string{}
	for i, req := range starts {
		ids[req.Origin.StreamID] = f.runner.ids[i]
	}
	stuck, held := f.stream("Stuck"), f.stream("Held")
	f.runner.setStatus(ids[stuck.ID], pipeline.StatusRunning)
	f.runner.setStatus(ids[held.ID], pipeline.StatusWaiting) // the owner has not approved the draft yet
	f.tickAt(at(0, "09:59"))
	if f.stream("Stuck").Running == "" {
		t.Fatal("swept before the maximum duration")
	}
	f.tickAt(at(0, "10:01"))
	got := f.stream("Stuck")
	if got.Running != "" || got.Digests[0].Status != scheduler.DigestSwept || !strings.Contains(got.Digests[0].Note, "swept") {
		t.Fatalf("stuck digest not swept: running %q record %+v", got.Running, got.Digests[0])
	}
	if !slices.Contains(f.runner.cancelled, ids[stuck.ID]) {
		t.Errorf("the swept run was not asked to cancel (cancelled %v)", f.runner.cancelled)
	}
	if !strings.Contains(f.logs.String(), "swept") || !strings.Contains(f.logs.String(), stuck.ID) {
		t.Errorf("the sweep was not reported in the log:\n%s", f.logs.String())
	}
	if h := f.stream("Held"); h.Running != ids[held.ID] || h.Digests[0].Status != scheduler.DigestRunning {
		t.Errorf("a digest waiting for its owner was swept: %+v", h.Digests[0])
	}
	// The swept stream fires again on schedule.
	f.tickAt(at(1, "09:00"))
	if got := f.stream("Stuck"); got.Running == "" || len(got.Digests) != 2 || got.Digests[1].Status != scheduler.DigestRunning {
		t.Errorf("after the sweep the next fire should run: %+v", got.Digests)
	}
	// A finished run the presenter never recorded is recorded by the scheduler.
	f.runner.setStatus(ids[held.ID], pipeline.StatusCompleted)
	f.tickAt(at(1, "09:30"))
	if h := f.stream("Held"); h.Digests[0].Status != scheduler.DigestCompleted {
		t.Errorf("finished run not reconciled: %+v", h.Digests)
	}
}

func TestManagementPermissionsAndRunNow(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	f.create("Mine")
	if _, err := f.svc.Create(ctx, dailySpec("MINE"), "UOTHER"); !errors.Is(err, scheduler.ErrNameTaken) {
		t.Errorf("duplicate name: %v", err)
	}
	bad := dailySpec("Broken")
	bad.Keywords = nil
	if _, err := f.svc.Create(ctx, bad, "UOWNER"); !errors.Is(err, scheduler.ErrIncompleteSpec) {
		t.Errorf("invalid spec: %v", err)
	}
	if _, err := f.svc.RunNow(ctx, "Mine", "UOTHER", false, scheduler.RunOptions{}); !errors.Is(err, scheduler.ErrNotAllowed) {
		t.Errorf("run now by a stranger: %v", err)
	}
	if _, err := f.svc.SetPolicy(ctx, "Mine", "UOWNER", false, "sometimes"); !errors.Is(err, scheduler.ErrBadPolicy) {
		t.Errorf("bad policy: %v", err)
	}
	run, err := f.svc.RunNow(ctx, "Mine", "UOWNER", false, scheduler.RunOptions{DryRun: true, Channel: "C0CREATE", ThreadTS: "123.456"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Origin.Channel != "C0CREATE" || run.Origin.ThreadTS != "123.456" {
		t.Errorf("dry run origin = %+v", run.Origin)
	}
	f.finish(run.ID, "https://preview.example/x")
	st := f.stream("Mine")
	if st.Digests[0].Trigger != scheduler.TriggerDryRun || st.Digests[0].Status != scheduler.DigestCompleted || len(st.Known.URLs) != 0 {
		t.Errorf("dry run record %+v, known %v (a dry run must not count)", st.Digests[0], st.Known.URLs)
	}
	// Run now by an admin: posted to the stream's channel, counts as a digest.
	run, err = f.svc.RunNow(ctx, "mine", "UADMIN", true, scheduler.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Origin.Channel != "C0DIGEST" || run.Origin.ThreadTS != "" {
		t.Errorf("run-now origin = %+v", run.Origin)
	}
	f.finish(run.ID, "https://news.example/new")
	if st := f.stream("Mine"); !slices.Contains(st.Known.URLs, "https://news.example/new") || st.Digests[1].Trigger != scheduler.TriggerRunNow {
		t.Errorf("run-now record %+v known %v", st.Digests[1], st.Known.URLs)
	}
	// A start failure is recorded and frees the stream.
	f.runner.failStart = errors.New("queue down")
	if _, err := f.svc.RunNow(ctx, "Mine", "UOWNER", false, scheduler.RunOptions{}); err == nil {
		t.Error("a failed start was not reported")
	}
	if st := f.stream("Mine"); st.Running != "" || st.Digests[2].Status != scheduler.DigestFailed || !strings.Contains(st.Digests[2].Note, "queue down") {
		t.Errorf("failed start record %+v running %q", st.Digests[2], st.Running)
	}
	f.runner.failStart = nil

	if _, err := f.svc.Delete(ctx, "Mine", "UOTHER", false); !errors.Is(err, scheduler.ErrNotAllowed) {
		t.Errorf("delete by a stranger: %v", err)
	}
	if _, err := f.svc.Delete(ctx, "Mine", "UOWNER", false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Show(ctx, "Mine"); !errors.Is(err, scheduler.ErrStreamNotFound) {
		t.Errorf("show after delete: %v", err)
	}
	f.tickAt(at(3, "09:00"))
	if n := len(f.runner.starts()); n != 2 {
		t.Errorf("a deleted stream fired (%d starts)", n)
	}
	list, err := f.svc.List(ctx)
	if err != nil || len(list) != 0 {
		t.Errorf("list after delete = %d, %v", len(list), err)
	}
}

// replicas makes two schedulers, as two replicas would run them: each with
// its own Redis connection to the server at addr, one runner, one clock.
func replicas(t *testing.T, addr string, runner *fakeRunner, clock *researchtest.Clock) []*scheduler.Service {
	t.Helper()
	var services []*scheduler.Service
	for range 2 {
		svc, err := scheduler.NewService(scheduler.ServiceConfig{
			Store: redisstore.NewStreams(redisClient(t, addr), ""), Runner: runner, Clock: clock, ClaimTTL: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		services = append(services, svc)
	}
	return services
}

// TestExactlyOnceAcrossReplicas runs two schedulers, each with its own Redis
// connection to one real redis-server, ticking concurrently over ten days of
// three streams: each scheduled time produces exactly one digest.
func TestExactlyOnceAcrossReplicas(t *testing.T) {
	srv, rdb := redistest.Start(t)
	runner := newFakeRunner()
	runner.finishAtOnce = true
	clock := researchtest.NewClock(at(0, "08:00"))
	services := replicas(t, srv.Addr, runner, clock)
	ctx := context.Background()
	names := []string{"One", "Two", "Three"}
	for _, n := range names {
		if _, err := services[0].Create(ctx, dailySpec(n), "UOWNER"); err != nil {
			t.Fatal(err)
		}
	}
	const days = 10
	for d := range days {
		for _, clk := range []string{"08:59", "09:00", "09:00", "09:01", "13:00"} {
			clock.Set(at(d, clk))
			var wg sync.WaitGroup
			for _, svc := range services {
				for range 3 {
					wg.Go(func() {
						if err := svc.Tick(ctx); err != nil {
							t.Error(err)
						}
					})
				}
			}
			wg.Wait()
		}
	}
	starts := runner.starts()
	if len(starts) != days*len(names) {
		t.Fatalf("%d digests, want exactly %d (one per stream per day)", len(starts), days*len(names))
	}
	store := redisstore.NewStreams(rdb, "")
	for _, n := range names {
		st, err := store.GetByName(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		var fires []time.Time
		runs := map[string]bool{}
		for _, d := range st.Digests {
			if d.Status == scheduler.DigestSkipped {
				t.Errorf("%s: skipped fire %+v", n, d)
			}
			fires = append(fires, d.FireAt)
			runs[d.RunID] = true
		}
		if len(fires) != days || len(runs) != days {
			t.Fatalf("%s: %d digests over %d runs, want %d", n, len(fires), len(runs), days)
		}
		for d := range days {
			if !fires[d].Equal(at(d, "09:00")) {
				t.Errorf("%s: digest %d fired for %s", n, d, fires[d])
			}
		}
	}
}

// redisClient is one more connection to the server at addr (another replica).
func redisClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestRunTicksUntilCancelled(t *testing.T) {
	clock := quartz.NewMock(t)
	clock.Set(at(0, "08:00"))
	trap := clock.Trap().TickerFunc("scheduler", "tick")
	defer trap.Close()
	f := newFixture(t, func(c *scheduler.ServiceConfig) { c.Clock, c.Tick = clock, 24*time.Hour })
	f.create("Looping")
	clock.Set(at(0, "09:00"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.svc.Run(ctx) }()
	// Run starts its ticker after the first pass: once the ticker is
	// asked for, that pass has finished.
	trap.MustWait(ctx).MustRelease(ctx)
	if n := len(f.runner.starts()); n != 1 {
		t.Fatalf("%d digests after the first pass, want the due one", n)
	}
	f.runner.setStatus("r-1", pipeline.StatusCompleted)
	// A pass at the next day's time; the advance returns once it has run.
	clock.Advance(24 * time.Hour).MustWait(ctx)
	if n := len(f.runner.starts()); n != 2 {
		t.Fatalf("%d digests after the next day's pass, want 2", n)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop when its context ended")
	}
	if n := len(f.runner.starts()); n != 2 {
		t.Errorf("%d digests, want 2", n)
	}
}

func TestNewServiceNeedsStoreAndRunner(t *testing.T) {
	_, err := scheduler.NewService(scheduler.ServiceConfig{})
	if err == nil || !strings.Contains(err.Error(), "Store") || !strings.Contains(err.Error(), "Runner") {
		t.Errorf("NewService without Store and Runner: %v", err)
	}
}
