package app

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/dedup"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// streamHarness is researchbot with the research-stream service: real
// redis-server, the fake web, the scripted model, the engine's workers, and the
// scheduler ticking on its own injected clock.
type streamHarness struct {
	t       *testing.T
	app     *App
	web     *researchtest.Web
	rec     *recorder
	svc     *scheduler.Service
	streams *redisstore.Streams
	clock   *researchtest.Clock
}

func newStreamHarness(t *testing.T, pages []researchtest.Page) *streamHarness {
	t.Helper()
	srv, rdb := redistest.Start(t)
	web := researchtest.NewWeb(t, pages...)
	web.PerQuery = 20 // every search returns every page: the digests' searches overlap fully
	res := &researchtest.Researcher{}
	model := llmtest.NewServer(t, res.Respond)
	cfg := testConfig(t, srv.URL, model.URL(), web.URL(), nil)
	h := &streamHarness{t: t, web: web, rec: newRecorder(), streams: redisstore.NewStreams(rdb, "rb:"), clock: &researchtest.Clock{}}
	presenter := scheduler.NewDigestPresenter(scheduler.DigestPresenterConfig{Store: h.streams, Inner: h.rec})
	a := startApp(t, cfg, Options{
		Presenters:   map[string]pipeline.Presenter{scheduler.OriginKind: presenter},
		DefaultQueue: "digests",
	})
	h.app = a
	var err error
	h.svc, err = scheduler.NewService(scheduler.ServiceConfig{
		Store: h.streams, Runner: a.Engine, Clock: h.clock, Queue: "digests",
	})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// tickAt runs one scheduling pass at t.
func (h *streamHarness) tickAt(t time.Time) {
	h.t.Helper()
	h.clock.Set(t)
	if err := h.svc.Tick(context.Background()); err != nil {
		h.t.Fatalf("tick: %v", err)
	}
}

// finished waits for the next run posted by the inner presenter, and for the
// digest presenter to record it in its stream (which it does after the post).
func (h *streamHarness) finished() *pipeline.Run {
	h.t.Helper()
	select {
	case r := <-h.rec.done:
		h.recorded(r)
		return r
	case inst := <-h.rec.offers:
		h.t.Fatalf("unexpected checkpoint %s", inst.DefinitionID)
	case <-time.After(waitLimit):
		h.t.Fatal("no digest finished in time")
	}
	return nil
}

// recorded waits until the stream of digest run r has recorded its outcome.
func (h *streamHarness) recorded(r *pipeline.Run) {
	h.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		st, err := h.streams.Get(context.Background(), r.Origin.StreamID)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, d := range st.Digests {
			if d.RunID == r.ID && d.Status.Final() {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("digest run %s was never recorded in its stream: %+v", r.ID, st.Digests)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *streamHarness) stream(name string) *scheduler.Stream {
	h.t.Helper()
	st, err := h.svc.Show(context.Background(), name)
	if err != nil {
		h.t.Fatal(err)
	}
	return st
}

func refURLs(r *pipeline.Run) []string {
	var out []string
	for _, ref := range r.Report.References {
		out = append(out, ref.URL)
	}
	return out
}

// TestStreamDigestsReportOnlyWhatIsNew runs three consecutive scheduled digests
// of one stream whose searches overlap: the second cites only pages published
// since the first, and the third, with nothing new, says so in one line.
func TestStreamDigestsReportOnlyWhatIsNew(t *testing.T) {
	all := researchtest.DefaultPages()
	for i := range all {
		all[i].Published = time.Time{} // undated: only the stream's memory can tell old from new
	}
	old := []researchtest.Page{all[0], all[1], all[2]}
	fresh := []researchtest.Page{all[4], all[5], {
		Title: "District heating utilities add large heat pumps",
		Body:  "Three Nordic utilities commissioned megawatt-scale heat pumps this autumn, drawing heat from sewage water and sea water. Operators expect lower fuel bills and fewer emissions over the winter season.",
	}}
	h := newStreamHarness(t, old)
	ctx := context.Background()

	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	h.clock.Set(day.Add(time.Hour))
	spec := dailySpec("Heat pumps")
	st, err := h.svc.Create(ctx, spec, "UOWNER")
	if err != nil {
		t.Fatal(err)
	}

	// Digest 1: everything is new.
	h.tickAt(day.Add(9*time.Hour + time.Minute))
	r1 := h.finished()
	if r1.Status != pipeline.StatusCompleted || r1.Origin.StreamID != st.ID || r1.Origin.Channel != "C0DIGEST" {
		t.Fatalf("digest 1: status %s origin %+v (%s %s)", r1.Status, r1.Origin, r1.FallbackReason, r1.Failure)
	}
	assertCitationsFetched(t, r1)
	oldURLs := []string{h.web.PageURL(0), h.web.PageURL(1), h.web.PageURL(2)}
	if got := refURLs(r1); len(got) != 3 {
		t.Fatalf("digest 1 cites %v, want the three pages", got)
	}
	s1 := h.stream("Heat pumps")
	for _, u := range oldURLs {
		n, _ := dedup.NormalizeURL(u)
		if !slices.Contains(s1.Known.URLs, n) {
			t.Errorf("Known lacks %s after digest 1: %v", n, s1.Known.URLs)
		}
	}
	if len(s1.Known.Simhashes) != 3 || s1.Running != "" || s1.Digests[0].Status != scheduler.DigestCompleted || s1.Digests[0].NewItems != 3 {
		t.Fatalf("stream after digest 1: known %d hashes, running %q, digests %+v", len(s1.Known.Simhashes), s1.Running, s1.Digests)
	}

	// Digest 2: three new pages appear; the old ones are still found by every search.
	h.web.SetPages(append(slices.Clone(old), fresh...))
	searchesBefore := h.web.Searches()
	h.tickAt(day.Add(33*time.Hour + time.Minute))
	r2 := h.finished()
	if r2.Status != pipeline.StatusCompleted {
		t.Fatalf("digest 2: %s (%s %s)", r2.Status, r2.FallbackReason, r2.Failure)
	}
	assertCitationsFetched(t, r2)
	if !r2.Since.Equal(day.Add(9*time.Hour)) || len(r2.Known.URLs) == 0 {
		t.Errorf("digest 2 since %s, known %d", r2.Since, len(r2.Known.URLs))
	}
	newURLs := []string{h.web.PageURL(3), h.web.PageURL(4), h.web.PageURL(5)}
	cited := refURLs(r2)
	if len(cited) == 0 {
		t.Fatal("digest 2 cites nothing although three pages are new")
	}
	for _, u := range cited {
		if !slices.Contains(newURLs, u) {
			t.Errorf("digest 2 cites %s, which is not new (new: %v)", u, newURLs)
		}
	}
	for _, p := range r2.Pages {
		if slices.Contains(oldURLs, p.URL) {
			t.Errorf("digest 2 read %s again", p.URL)
		}
	}
	if h.web.Searches() == searchesBefore || !traceHas(r2, "already reported earlier") || traceHas(r2, "(0 already reported earlier)") {
		t.Errorf("digest 2's searches did not overlap with digest 1's:\n%v", r2.Trace)
	}

	// Digest 3: nothing new, one line.
	h.tickAt(day.Add(57*time.Hour + time.Minute))
	r3 := h.finished()
	if r3.Status != pipeline.StatusCompleted || r3.Report == nil || !r3.Report.NothingNew {
		t.Fatalf("digest 3: status %s report %+v", r3.Status, r3.Report)
	}
	if len(r3.Report.References) != 0 || !strings.HasPrefix(r3.Report.Abstract, "Nothing material is new since") {
		t.Errorf("digest 3 report: %q with %d references", r3.Report.Abstract, len(r3.Report.References))
	}

	s3 := h.stream("Heat pumps")
	if len(s3.Digests) != 3 {
		t.Fatalf("stream keeps %d digests, want 3", len(s3.Digests))
	}
	for i, d := range s3.Digests {
		if d.Status != scheduler.DigestCompleted || d.Trigger != scheduler.TriggerSchedule || d.RunID == "" {
			t.Errorf("digest %d record: %+v", i+1, d)
		}
	}
	if s3.Digests[1].NewItems != len(cited) || s3.Digests[1].NothingNew {
		t.Errorf("digest 2 record: %+v", s3.Digests[1])
	}
	if !s3.Digests[2].NothingNew || s3.Digests[2].NewItems != 0 {
		t.Errorf("digest 3 record: %+v", s3.Digests[2])
	}
}

// TestStreamHoldDraftPolicy checks that a hold_draft digest approves its plan on
// its own and waits for the owner at the draft.
func TestStreamHoldDraftPolicy(t *testing.T) {
	pages := researchtest.DefaultPages()[:3]
	for i := range pages {
		pages[i].Published = time.Time{} // the default pages are older than the digest's window
	}
	h := newStreamHarness(t, pages)
	ctx := context.Background()
	h.clock.Set(time.Now())
	spec := scheduler.Spec{
		Channel: "C0DIGEST", Purpose: "Follow heat pumps", BusinessGoals: []string{"Plan"}, ExpectedOutcomes: "Decisions",
		Name: "Held", Type: scheduler.TypeMarket, FocusAreas: []string{"Cold climates"}, Keywords: []string{"heat pump"},
		Frequency: scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}
	if _, err := h.svc.Create(ctx, spec, "UOWNER"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.svc.SetPolicy(ctx, "Held", "UOWNER", false, scheduler.PolicyHoldDraft); err != nil {
		t.Fatal(err)
	}
	run, err := h.svc.RunNow(ctx, "Held", "UOWNER", false, scheduler.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.Mode != checkpoints.ModeGuided {
		t.Fatalf("hold_draft digest runs in mode %q", run.Mode)
	}
	var inst checkpoints.Instance
	select {
	case inst = <-h.rec.offers:
	case r := <-h.rec.done:
		t.Fatalf("the digest finished (%s, nothing new: %v) without holding its draft", r.Status, r.Report != nil && r.Report.NothingNew)
	case <-time.After(waitLimit):
		t.Fatal("no draft offered in time")
	}
	if inst.DefinitionID != checkpoints.DraftReview {
		t.Fatalf("the owner was asked about %s, want only the draft", inst.DefinitionID)
	}
	if st := h.stream("Held"); st.Running != run.ID {
		t.Errorf("while held, running = %q", st.Running)
	}
	if _, err := h.app.Engine.Decide(ctx, inst.ID, checkpoints.Decision{Action: checkpoints.Approve, By: "UOWNER"}); err != nil {
		t.Fatal(err)
	}
	r := h.finished()
	if r.Status != pipeline.StatusCompleted {
		t.Fatalf("status %s", r.Status)
	}
	var planBy string
	for _, c := range r.Checkpoints {
		if c.DefinitionID == checkpoints.PlanReview && c.Decision != nil {
			planBy = c.Decision.By
		}
	}
	if planBy != "auto" {
		t.Errorf("plan review decided by %q, want auto", planBy)
	}
	if st := h.stream("Held"); st.Running != "" || st.Digests[0].Status != scheduler.DigestCompleted {
		t.Errorf("after approval: running %q digests %+v", st.Running, st.Digests)
	}
}

func traceHas(r *pipeline.Run, s string) bool {
	for _, e := range r.Trace {
		if strings.Contains(e.Message, s) {
			return true
		}
	}
	return false
}

// dailySpec is a stream posting a daily digest on heat pumps at 09:00 UTC.
func dailySpec(name string) scheduler.Spec {
	return scheduler.Spec{
		Channel: "C0DIGEST", Purpose: "Follow heat pumps in cold climates", BusinessGoals: []string{"Plan product launches"},
		ExpectedOutcomes: "A weekly view of the market", Name: name, Type: scheduler.TypeMarket,
		FocusAreas: []string{"Cold climates"}, Keywords: []string{"heat pump efficiency", "heat pump cost"},
		Frequency: scheduler.Daily, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}
}
