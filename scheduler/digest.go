package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/dedup"
	"github.com/researchbot/researchbot/pipeline"
)

// OriginKind is the pipeline.Origin kind of digest runs; the engine must map it to
// a [DigestPresenter].
const OriginKind = "stream"

// maxDigestQuestion bounds the generated question (pipeline.MaxQuestionRunes is the hard limit).
const maxDigestQuestion = 600

// DigestRequest is the pipeline request of the digest of s scheduled at fireAt.
//
// The question asks what is new about the stream's keywords, in its focus areas,
// including its competitors; the stream's purpose, goals and expected outcomes go
// into Context. Since is the fire time of the previous digest that reported
// something (a completed or partial run, dry runs excluded), or one period of the
// stream's frequency before fireAt for the first digest. Known is the stream's
// Known, so the run leaves out what earlier digests reported. Policy auto runs in
// checkpoints.ModeAuto; hold_draft runs in checkpoints.ModeGuided, where the
// [DigestPresenter] approves every checkpoint but draft_review, which waits for the
// owner. Origin names the stream and its channel, and is Direct: a checkpoint the
// owner must decide is offered to them privately, never in the stream's channel.
// Origin.Queue is left empty (the [Service] fills it in).
func DigestRequest(s Stream, fireAt time.Time) pipeline.Request {
	mode := checkpoints.ModeAuto
	if s.Policy == PolicyHoldDraft {
		mode = checkpoints.ModeGuided
	}
	since := digestSince(s, fireAt)
	return pipeline.Request{
		Question:    digestQuestion(s.Spec),
		Mode:        mode,
		RequestedBy: s.Owner,
		Origin:      pipeline.Origin{Kind: OriginKind, StreamID: s.ID, Channel: s.Spec.Channel, Direct: true},
		Since:       since,
		Known: pipeline.Known{
			URLs:      slices.Clone(s.Known.URLs),
			Simhashes: slices.Clone(s.Known.Simhashes),
		},
		Context: digestContext(s.Spec, since),
		// The stream's domain rules hold for every digest.
		Domains: pipeline.DomainRules{Only: slices.Clone(s.Domains.Only), Never: slices.Clone(s.Domains.Never)},
		// A digest is read by the stream's channel.
		Audience: pipeline.ChannelAudience(s.Spec.Channel),
	}
}

// digestSince is the fire time of the newest earlier digest that reported
// something, or one period before fireAt.
func digestSince(s Stream, fireAt time.Time) time.Time {
	for i := len(s.Digests) - 1; i >= 0; i-- {
		d := s.Digests[i]
		if d.Trigger == TriggerDryRun || !d.FireAt.Before(fireAt) {
			continue
		}
		if d.Status == DigestCompleted || d.Status == DigestPartial {
			return d.FireAt
		}
	}
	return previousPeriod(s.Spec.Frequency, fireAt)
}

// previousPeriod returns t minus one period of f (a day for unknown frequencies).
func previousPeriod(f Frequency, t time.Time) time.Time {
	if r, ok := f.rule(); ok {
		return r.back(t)
	}
	return t.AddDate(0, 0, -1)
}

// digestQuestion builds "What is new about K1, K2 in F1, F2, including C1 (T research)?".
func digestQuestion(spec Spec) string {
	subject := strings.Join(spec.Keywords, ", ")
	subject = cmp.Or(subject, spec.Name)
	var b strings.Builder
	b.WriteString("What is new about " + subject)
	if len(spec.FocusAreas) > 0 {
		b.WriteString(" in " + strings.Join(spec.FocusAreas, ", "))
	}
	if len(spec.Competitors) > 0 {
		b.WriteString(", including " + strings.Join(spec.Competitors, ", "))
	}
	if spec.Type != "" {
		b.WriteString(" (" + string(spec.Type) + " research)")
	}
	q := cleanLine(b.String())
	if utf8.RuneCountInString(q) > maxDigestQuestion {
		q = truncate(q, maxDigestQuestion)
	}
	return q + "?"
}

// digestContext is the background the planner gets: what the stream is for.
func digestContext(spec Spec, since time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Research stream %q", spec.Name)
	if spec.Type != "" {
		fmt.Fprintf(&b, " (%s research)", spec.Type)
	}
	b.WriteString(": a recurring digest that reports only what is new")
	if !since.IsZero() {
		b.WriteString(" since " + since.UTC().Format("2006-01-02"))
	}
	b.WriteString(".\n")
	line := func(label, v string) {
		if v = strings.TrimSpace(v); v != "" {
			b.WriteString(label + ": " + v + "\n")
		}
	}
	line("Purpose", spec.Purpose)
	line("Business goals", strings.Join(spec.BusinessGoals, "; "))
	line("Expected outcomes", spec.ExpectedOutcomes)
	line("Focus areas", strings.Join(spec.FocusAreas, "; "))
	line("Keywords", strings.Join(spec.Keywords, "; "))
	line("Competitors to monitor", strings.Join(spec.Competitors, "; "))
	return strings.TrimSpace(b.String())
}

// DigestPresenterConfig wires a DigestPresenter.
type DigestPresenterConfig struct {
	// Store holds the streams whose digests are recorded. Required.
	Store Store
	// Inner shows the run (the Slack presenter, which posts the report to the
	// stream's channel, and held drafts to the owner's direct messages). It must
	// be idempotent. Without it nothing can be shown: Offer, Decided and
	// Finished fail with ErrNoPresenter, and no digest is recorded.
	Inner pipeline.Presenter
	// Clock stamps the digests' outcomes; nil means the real clock.
	Clock  quartz.Clock
	Logger *slog.Logger
}

// DigestPresenter is the pipeline.Presenter of digest runs (Origin.Kind "stream").
// It records each digest's outcome in its stream and delegates showing the run to
// an inner presenter. The checkpoints of unattended digests are decided by
// [DigestCheckpoints], not shown.
type DigestPresenter struct {
	store Store
	inner pipeline.Presenter
	clock quartz.Clock
	log   *slog.Logger
}

var _ pipeline.Presenter = (*DigestPresenter)(nil)

// NewDigestPresenter returns a DigestPresenter.
func NewDigestPresenter(cfg DigestPresenterConfig) *DigestPresenter {
	p := &DigestPresenter{store: cfg.Store, inner: cfg.Inner, clock: cfg.Clock, log: cfg.Logger}
	if p.clock == nil {
		p.clock = quartz.NewReal()
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	return p
}

// Offer shows a held checkpoint (the draft of a hold_draft digest, or its
// reminder) through the inner presenter; the run's Origin is Direct (see
// [DigestRequest]), so the owner sees it privately, not the stream's channel.
// Without an inner presenter it returns ErrNoPresenter.
func (p *DigestPresenter) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	if p.inner == nil {
		return fmt.Errorf("offer checkpoint of digest run %s: %w", r.ID, ErrNoPresenter)
	}
	return p.inner.Offer(ctx, r, inst)
}

// Decided collapses a decided checkpoint where Offer showed it.
func (p *DigestPresenter) Decided(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	if p.inner == nil {
		return fmt.Errorf("show decision of digest run %s: %w", r.ID, ErrNoPresenter)
	}
	return p.inner.Decided(ctx, r, inst)
}

// RemindersStopped passes the end of a held checkpoint's reminders to the
// inner presenter, if there is one.
func (p *DigestPresenter) RemindersStopped(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	if p.inner == nil {
		return nil
	}
	return p.inner.RemindersStopped(ctx, r, inst)
}

// Notice does nothing: a digest runs unattended, and its passing notes
// (a model call being retried) are not shown to the stream's channel.
func (p *DigestPresenter) Notice(context.Context, *pipeline.Run, string) {}

// Stranded passes on, through the inner presenter, that a held digest's
// checkpoint could not be shown after its retries: the owner is offered
// Skip and Retry where the draft was to be shown (the Slack presenter posts
// in the run's place, the owner's DM for a held draft), instead of the
// draft waiting unseen for `researchbot checkpoints skip`. Without an inner
// presenter nothing is posted.
func (p *DigestPresenter) Stranded(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	if p.inner == nil {
		return nil
	}
	return p.inner.Stranded(ctx, r, inst)
}

// BreakerTripped passes a tripped circuit breaker on to the inner presenter,
// which alerts the admins once per definition (a definition's breaker is
// shared by Slack runs and digests alike). Without an inner presenter
// nothing is posted; the App Home and `researchbot checkpoints` show it.
func (p *DigestPresenter) BreakerTripped(ctx context.Context, d checkpoints.Definition, failures int) error {
	if p.inner == nil {
		return nil
	}
	return p.inner.BreakerTripped(ctx, d, failures)
}

// Progress shows progress through the inner presenter.
func (p *DigestPresenter) Progress(ctx context.Context, r *pipeline.Run) {
	if p.inner != nil {
		p.inner.Progress(ctx, r)
	}
}

// ErrNoPresenter says a digest finished but nothing can show it (no inner presenter:
// SLACK_BOT_TOKEN is not set), so it was not posted and not recorded.
var ErrNoPresenter = errors.New("scheduler: the digest cannot be posted: no Slack presenter is configured (set SLACK_BOT_TOKEN on every process that takes the digests' queue)")

// Finished posts the finished digest through the inner presenter (the report in
// the stream's channel) and only then records its outcome in its stream (status,
// new items, nothing new; the cited pages' keys and fingerprints added to Known;
// Running cleared). When posting fails it returns the error and records nothing,
// so Known stays untouched and the engine tries again; without an inner
// presenter it returns ErrNoPresenter. It is idempotent: a call after a
// successful one posts nothing more (the inner presenter remembers what it
// showed) and records nothing twice.
func (p *DigestPresenter) Finished(ctx context.Context, r *pipeline.Run) error {
	if p.inner == nil {
		return fmt.Errorf("digest run %s: %w", r.ID, ErrNoPresenter)
	}
	if err := p.inner.Finished(ctx, r); err != nil {
		return fmt.Errorf("post digest run %s: %w", r.ID, err)
	}
	if r.Origin.StreamID == "" {
		return nil
	}
	if err := recordOutcome(ctx, p.store, r, p.clock.Now(), ""); err != nil {
		if errors.Is(err, ErrStreamNotFound) {
			p.log.Info("digest finished for a deleted stream", "stream", r.Origin.StreamID, "run", r.ID)
			return nil
		}
		p.log.Warn("record digest outcome", "stream", r.Origin.StreamID, "run", r.ID, "err", err)
		return fmt.Errorf("record digest of stream %s: %w", r.Origin.StreamID, err)
	}
	return nil
}

// recordOutcome writes a finished run's outcome into its stream's digest record.
// It is idempotent: recording the same run twice changes nothing more.
func recordOutcome(ctx context.Context, store Store, r *pipeline.Run, now time.Time, note string) error {
	keys, hashes := citedKeys(r)
	return updateStream(ctx, store, r.Origin.StreamID, func(s *Stream) (bool, error) {
		rec := s.digestFor(r.ID)
		if rec == nil {
			// The record was dropped (bounded history) or never written: keep the outcome.
			s.addDigest(DigestRecord{RunID: r.ID, FireAt: r.CreatedAt, StartedAt: r.CreatedAt, Status: DigestRunning})
			rec = &s.Digests[len(s.Digests)-1]
		}
		if rec.RunID == r.ID && rec.Status == digestStatusOf(r.Status) && rec.Status.Final() && !rec.FinishedAt.IsZero() {
			// Recorded already (a retried presentation, or the scheduler first):
			// Known holds the cited pages since then; record nothing twice.
			if s.Running == r.ID {
				s.Running = ""
				return true, nil
			}
			return false, nil
		}
		wasStarting := rec.Status == DigestStarting && rec.RunID == ""
		rec.RunID = r.ID
		rec.Status = digestStatusOf(r.Status)
		rec.FinishedAt = r.FinishedAt
		if rec.FinishedAt.IsZero() {
			rec.FinishedAt = now
		}
		if r.Report != nil {
			rec.NothingNew = r.Report.NothingNew
			rec.NewItems = len(r.Report.References)
		}
		switch {
		case r.Failure != "":
			rec.Note = clipNote(r.Failure)
		case r.CancelledBy != "" && rec.Note == "":
			rec.Note = clipNote("cancelled by " + r.CancelledBy)
		case note != "":
			rec.Note = note
		}
		if rec.Trigger != TriggerDryRun && r.Report != nil && (r.Status == pipeline.StatusCompleted || r.Status == pipeline.StatusPartial) {
			s.addKnown(keys, hashes)
		}
		if s.Running == r.ID || (s.Running == runningStarting && wasStarting) {
			s.Running = ""
		}
		return true, nil
	})
}

// citedKeys returns the document keys and fingerprints of the pages a run's report
// cites: each source's key (what the pipeline compares with Known.URLs), its URL and
// the page's final URL, normalised with dedup.NormalizeURL; and the pages' simhashes.
func citedKeys(r *pipeline.Run) ([]string, []uint64) {
	if r.Report == nil {
		return nil, nil
	}
	var keys []string
	var hashes []uint64
	add := func(u string) {
		if u == "" {
			return
		}
		if n, err := dedup.NormalizeURL(u); err == nil {
			u = n
		}
		if !slices.Contains(keys, u) {
			keys = append(keys, u)
		}
	}
	for _, ref := range r.Report.References {
		add(ref.URL)
		for _, s := range r.Sources {
			if s.ID == ref.SourceID {
				if s.Key != "" && !slices.Contains(keys, s.Key) {
					keys = append(keys, s.Key)
				}
				add(s.URL)
			}
		}
		for _, pg := range r.Pages {
			if pg.SourceID == ref.SourceID {
				add(pg.URL)
				add(pg.FinalURL)
				if pg.Simhash != 0 && !slices.Contains(hashes, pg.Simhash) {
					hashes = append(hashes, pg.Simhash)
				}
			}
		}
	}
	return keys, hashes
}

// digestStatusOf maps a run status to a digest status.
func digestStatusOf(s pipeline.Status) DigestStatus {
	switch s {
	case pipeline.StatusCompleted:
		return DigestCompleted
	case pipeline.StatusPartial:
		return DigestPartial
	case pipeline.StatusFailed:
		return DigestFailed
	case pipeline.StatusCancelled:
		return DigestCancelled
	}
	return DigestRunning
}

// clipNote makes untrusted text fit a one-line note.
func clipNote(s string) string { return truncate(cleanLine(s), 300) }

// maxUpdateRetries bounds compare-and-set retries on one stream.
const maxUpdateRetries = 10

// updateStream loads a stream, applies change and saves it with a version check,
// retrying on conflicts. change returns false to save nothing.
func updateStream(ctx context.Context, store Store, id string, change func(*Stream) (bool, error)) error {
	for range maxUpdateRetries {
		s, err := store.Get(ctx, id)
		if err != nil {
			return err
		}
		ok, err := change(s)
		if err != nil || !ok {
			return err
		}
		err = store.Update(ctx, s)
		if errors.Is(err, ErrStreamConflict) {
			continue
		}
		return err
	}
	return fmt.Errorf("update stream %s: %w (gave up after %d attempts)", id, ErrStreamConflict, maxUpdateRetries)
}
