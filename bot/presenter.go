package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// OriginKind is the pipeline.Origin.Kind of runs started in Slack.
const OriginKind = "slack"

// Keys of what the Slack adapter remembers (Memory; redisstore's key table
// says where they live).
const (
	keyCheckpointMsg = "cp:"       // + instance id → checkpointMsg JSON
	keyProgressMsg   = "progress:" // + run id → ts of the progress message
	keyFinal         = "final:"    // + run id → fields of what Finished has shown
	keySeen          = "seen:"     // + kind:id → a delivery taken
	msgKeyTTL        = 60 * 24 * time.Hour
)

// PresenterConfig configures a Presenter.
type PresenterConfig struct {
	// Sender is the Web API client shared with the App; nil makes one from
	// BotToken, APIURL, Metrics and HTTPClient.
	Sender   *Sender
	BotToken string
	// APIURL is the Web API base URL (SLACK_API_URL); "" means Slack's.
	APIURL string
	// Memory remembers which message shows which checkpoint and progress, so
	// any replica can update them.
	Memory Memory
	// Metrics counts Web API calls; nil means none.
	Metrics *Metrics
	// MinInterval paces progress edits per run; zero means 3s.
	MinInterval time.Duration
	// HTTPClient makes the Web API calls; nil means a default client.
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Now and AfterFunc are the clock progress is paced by; nil means the
	// real one. AfterFunc calls f after d unless stop is called first
	// (stop reports whether it prevented the call, as time.Timer.Stop).
	Now       func() time.Time
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// Clock waits out Slack's Retry-After, and is the default of Now and
	// AfterFunc; nil means the real clock.
	Clock quartz.Clock
	// Admins (SLACK_ADMINS) are sent a direct message when a checkpoint's
	// circuit breaker trips; Alerts makes it one message per trip across
	// replicas. Without either, no one is alerted.
	Admins []string
	Alerts BreakerAlerts
}

// Presenter shows runs that started in Slack (pipeline.Presenter for
// Origin.Kind "slack"): checkpoint messages in the run's thread, collapsed
// after the decision; one progress message edited in place, coalesced and
// paced; the final summary with the full Markdown report attached.
type Presenter struct {
	api      *slack.Client
	mem      Memory
	log      *slog.Logger
	now      func() time.Time
	after    func(d time.Duration, f func()) (stop func() bool)
	clock    quartz.Clock
	interval time.Duration
	admins   []string
	alerts   BreakerAlerts

	ctx    context.Context // for deferred progress flushes; ended by Close
	cancel context.CancelFunc

	mu       sync.Mutex
	progress map[string]*progressState
	// lastSweep is when idle progress states were last dropped; maxRuns
	// bounds how many are kept (progressMaxRuns unless a test says less).
	lastSweep time.Time
	maxRuns   int
	wg        sync.WaitGroup
}

// Bounds of the per-run progress states a Presenter keeps in memory. A run
// finished on another replica (or waiting at a checkpoint for days) never
// tells this one, so states idle for progressIdle are dropped; the progress
// message's ts is in Redis, so a run that speaks again simply carries on.
const (
	progressIdle       = time.Hour
	progressSweepEvery = time.Minute
	progressMaxRuns    = 10000
)

var (
	_ pipeline.Presenter = (*Presenter)(nil)
	_ pipeline.Notifier  = (*Presenter)(nil)
)

// progressState paces one run's progress message.
type progressState struct {
	channel, thread string
	pending         []slack.Block // latest rendering not yet sent
	pendingText     string
	lastSent        time.Time
	notBefore       time.Time   // after a 429
	stop            func() bool // stops the pending flush; nil when none
	sending         bool
	touched         time.Time // last Progress call
}

// checkpointMsg is where a checkpoint's message is.
type checkpointMsg struct {
	Channel string `json:"channel"`
	TS      string `json:"ts"`
	Attempt int    `json:"attempt"`
	// Closed is set once the message no longer shows buttons (decided, or
	// closed when the run ended).
	Closed bool `json:"closed,omitempty"`
}

// NewPresenter makes a Presenter. Close it to stop pending progress flushes.
func NewPresenter(cfg PresenterConfig) (*Presenter, error) {
	if cfg.BotToken == "" && cfg.Sender == nil {
		return nil, errors.New("bot: presenter needs the bot token (SLACK_BOT_TOKEN)")
	}
	if cfg.Memory == nil {
		return nil, errors.New("bot: presenter needs a Memory")
	}
	p := &Presenter{
		api:      senderOr(cfg.Sender, SenderConfig{BotToken: cfg.BotToken, APIURL: cfg.APIURL, HTTPClient: cfg.HTTPClient, Metrics: cfg.Metrics, Logger: cfg.Logger, Clock: cfg.Clock}).API(),
		mem:      cfg.Memory,
		log:      cfg.Logger,
		now:      cfg.Now,
		after:    cfg.AfterFunc,
		interval: cfg.MinInterval,
		admins:   cfg.Admins,
		alerts:   cfg.Alerts,
		progress: map[string]*progressState{},
		maxRuns:  progressMaxRuns,
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.clock = cfg.Clock
	if p.clock == nil {
		p.clock = quartz.NewReal()
	}
	if p.now == nil {
		p.now = func() time.Time { return p.clock.Now() }
	}
	if p.after == nil {
		p.after = func(d time.Duration, f func()) func() bool {
			t := p.clock.AfterFunc(d, f, "bot", "progress")
			return func() bool { return t.Stop() }
		}
	}
	if p.interval <= 0 {
		p.interval = 3 * time.Second
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	return p, nil
}

// Close stops pending progress flushes and waits for one in flight.
func (p *Presenter) Close() {
	p.cancel()
	p.mu.Lock()
	for _, st := range p.progress {
		p.stopFlushLocked(st)
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Offer posts the checkpoint message in the run's thread. A reminder
// (Attempt > 1) is posted as a new message and the earlier offer is reduced
// to a pointer to it. Offering the same attempt twice updates the message.
func (p *Presenter) Offer(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	log := p.log.With("run_id", r.ID, "checkpoint_id", inst.ID, "definition", inst.DefinitionID, "attempt", inst.Attempt)
	p.attachDraft(ctx, r, inst)
	blocks := RenderCheckpoint(inst, r.RequestedBy)
	text := fmt.Sprintf("%s: your decision is needed", oneLine(firstNonEmpty(inst.Label, inst.DefinitionID)))
	if inst.Attempt > 1 {
		text = "Reminder — " + text
	}
	text = EscapeTruncate(text, 300)
	// Look before posting: a checkpoint shown again after a takeover (or a
	// retry) updates the message of its attempt instead of posting another.
	prev, err := p.lookup(ctx, inst.ID)
	if err != nil {
		return fmt.Errorf("looking up the message of checkpoint %s: %w", inst.ID, err)
	}
	if prev != nil && prev.Attempt == inst.Attempt {
		err := retry429(ctx, p.clock, func() error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, prev.Channel, prev.TS, quiet(blocks, text))
			return err
		})
		if err == nil {
			if prev.Closed {
				prev.Closed = false
				if err := p.remember(ctx, inst.ID, *prev); err != nil {
					log.Warn("bot: remembering a checkpoint message failed", "err", err)
				}
			}
			return nil
		}
		log.Warn("bot: updating an offered checkpoint failed; posting it again", "err", err)
	}
	place, thread := checkpointPlace(r)
	var channel, ts string
	err = retry429(ctx, p.clock, func() error {
		var err error
		channel, ts, err = p.api.PostMessageContext(ctx, place, quiet(blocks, text), slack.MsgOptionTS(thread))
		return err
	})
	if err != nil {
		log.Error("bot: posting a checkpoint failed", "err", err)
		return fmt.Errorf("posting checkpoint %s: %w", inst.ID, err)
	}
	// Remember the channel Slack answered with: posting to a user id lands
	// in a DM whose channel id differs, and chat.update needs the real one.
	if channel == "" {
		channel = place
	}
	if err := p.remember(ctx, inst.ID, checkpointMsg{Channel: channel, TS: ts, Attempt: inst.Attempt}); err != nil {
		log.Warn("bot: remembering a checkpoint message failed", "err", err)
	}
	if prev != nil && prev.Attempt != inst.Attempt {
		if err := retry429(ctx, p.clock, func() error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, prev.Channel, prev.TS, quiet(renderSuperseded(inst), text))
			return err
		}); err != nil {
			log.Warn("bot: reducing an earlier offer failed", "err", err)
		}
	}
	log.Info("bot: checkpoint offered", "ts", ts)
	return nil
}

// Decided collapses the checkpoint message to a one-line record without
// buttons (posting the record when the message is unknown).
func (p *Presenter) Decided(ctx context.Context, r *pipeline.Run, inst *checkpoints.Instance) error {
	blocks := RenderDecided(inst)
	text := EscapeTruncate(oneLine(firstNonEmpty(inst.Label, inst.DefinitionID))+": decided", 300)
	msg, err := p.lookup(ctx, inst.ID)
	if err == nil && msg != nil {
		err = retry429(ctx, p.clock, func() error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, msg.Channel, msg.TS, quiet(blocks, text))
			return err
		})
		if err == nil {
			msg.Closed = true
			if err := p.remember(ctx, inst.ID, *msg); err != nil {
				p.log.Warn("bot: remembering a collapsed checkpoint message failed", "checkpoint_id", inst.ID, "err", err)
			}
			return nil
		}
	}
	p.log.Warn("bot: collapsing a checkpoint message failed; posting the record", "run_id", r.ID, "checkpoint_id", inst.ID, "err", err)
	place, thread := checkpointPlace(r)
	return retry429(ctx, p.clock, func() error {
		_, _, err := p.api.PostMessageContext(ctx, place, quiet(blocks, text), slack.MsgOptionTS(thread))
		return err
	})
}

// checkpointPlace is where r's checkpoint messages are posted: the run's
// thread, or, when its checkpoints are private (Origin.Direct), the
// requester's direct messages with the app (chat.postMessage takes a user
// id for that conversation).
func checkpointPlace(r *pipeline.Run) (channel, thread string) {
	if r.Origin.Direct && r.RequestedBy != "" {
		return r.RequestedBy, ""
	}
	return r.Origin.Channel, r.Origin.ThreadTS
}

// Progress edits the run's one progress message. Updates are coalesced: at
// most one edit per MinInterval per run, and none before a 429's
// Retry-After has passed; the latest state is always the one sent.
func (p *Presenter) Progress(ctx context.Context, r *pipeline.Run) { p.progressWith(ctx, r, "") }

// Notice shows a passing note (a model call being retried, a step tried
// again) under the run's progress message, until the next progress update.
func (p *Presenter) Notice(ctx context.Context, r *pipeline.Run, note string) {
	p.progressWith(ctx, r, note)
}

// progressWith edits the progress message, with a note under it if any.
func (p *Presenter) progressWith(ctx context.Context, r *pipeline.Run, note string) {
	if r.Origin.Channel == "" || r.Origin.ThreadTS == "" {
		return // a digest posted to a channel shows no progress there
	}
	blocks, text := RenderProgress(r, p.now()), progressText(r)
	if note != "" {
		blocks = append(blocks, contextText(":hourglass_flowing_sand: "+EscapeTruncate(note, 300)))
	}
	p.mu.Lock()
	p.sweepLocked()
	st := p.progress[r.ID]
	if st == nil {
		st = &progressState{channel: r.Origin.Channel, thread: r.Origin.ThreadTS}
		p.progress[r.ID] = st
	}
	st.touched = p.now()
	st.pending, st.pendingText = blocks, text
	due := p.dueLocked(st)
	if st.sending || st.stop != nil {
		p.mu.Unlock()
		return
	}
	if wait := due.Sub(p.now()); wait > 0 {
		p.scheduleLocked(r.ID, st, wait)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.flush(ctx, r.ID)
}

// sweepLocked drops progress states idle for progressIdle (at most once per
// progressSweepEvery) and, beyond maxRuns states, the least recently used
// ones. A state being sent is kept; a pending flush is cancelled.
func (p *Presenter) sweepLocked() {
	now := p.now()
	if now.Sub(p.lastSweep) < progressSweepEvery && len(p.progress) < p.maxRuns {
		return
	}
	p.lastSweep = now
	drop := func(id string, st *progressState) {
		p.stopFlushLocked(st)
		delete(p.progress, id)
	}
	for id, st := range p.progress {
		if !st.sending && now.Sub(st.touched) > progressIdle {
			drop(id, st)
		}
	}
	if over := len(p.progress) - (p.maxRuns - 1); over > 0 {
		ids := make([]string, 0, len(p.progress))
		for id, st := range p.progress {
			if !st.sending {
				ids = append(ids, id)
			}
		}
		slices.SortFunc(ids, func(a, b string) int { return p.progress[a].touched.Compare(p.progress[b].touched) })
		for _, id := range ids[:min(over, len(ids))] {
			drop(id, p.progress[id])
		}
	}
}

// dueLocked is when the next edit may be sent.
func (p *Presenter) dueLocked(st *progressState) time.Time {
	due := st.lastSent.Add(p.interval)
	if st.notBefore.After(due) {
		due = st.notBefore
	}
	return due
}

// stopFlushLocked cancels st's pending flush, if any.
func (p *Presenter) stopFlushLocked(st *progressState) {
	if st.stop != nil && st.stop() {
		p.wg.Done()
	}
	st.stop = nil
}

// scheduleLocked arranges a flush after wait.
func (p *Presenter) scheduleLocked(runID string, st *progressState, wait time.Duration) {
	if p.ctx.Err() != nil {
		return
	}
	p.wg.Add(1)
	st.stop = p.after(wait, func() {
		defer p.wg.Done()
		p.mu.Lock()
		st.stop = nil
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		defer cancel()
		p.flush(ctx, runID)
	})
}

// flush sends the pending progress of a run, if any.
func (p *Presenter) flush(ctx context.Context, runID string) {
	p.mu.Lock()
	st := p.progress[runID]
	if st == nil || st.pending == nil || st.sending {
		p.mu.Unlock()
		return
	}
	blocks, text := st.pending, st.pendingText
	st.pending, st.sending = nil, true
	p.mu.Unlock()

	err := p.sendProgress(ctx, runID, st.channel, st.thread, blocks, text)

	p.mu.Lock()
	defer p.mu.Unlock()
	st.sending = false
	st.lastSent = p.now()
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		st.notBefore = p.now().Add(max(rl.RetryAfter, time.Second))
		if st.pending == nil {
			st.pending, st.pendingText = blocks, text
		}
	} else if err != nil {
		p.log.Warn("bot: progress update failed", "run_id", runID, "err", err)
	}
	if st.pending != nil && st.stop == nil {
		p.scheduleLocked(runID, st, max(p.dueLocked(st).Sub(p.now()), time.Millisecond))
	}
}

// sendProgress posts or edits the progress message.
func (p *Presenter) sendProgress(ctx context.Context, runID, channel, thread string, blocks []slack.Block, text string) error {
	ts, _, err := p.mem.Recall(ctx, keyProgressMsg+runID)
	if err != nil {
		return err
	}
	if ts != "" {
		_, _, _, err = p.api.UpdateMessageContext(ctx, channel, ts, quiet(blocks, text))
		if code := slackErrorCode(err); err == nil || (code != "message_not_found" && code != "cant_update_message") {
			return err
		}
	}
	_, ts, err = p.api.PostMessageContext(ctx, channel, quiet(blocks, text), slack.MsgOptionTS(thread))
	if err != nil {
		return err
	}
	return p.mem.Remember(ctx, keyProgressMsg+runID, ts, msgKeyTTL)
}

// Fields of the rb:slack:final:<run> hash, which records how far the final
// post of a run got, so Finished can be called again (the engine retries it
// until it succeeds) without posting anything twice.
const (
	finalSummary = "summary" // ts of the summary message
	finalFile    = "file"    // "uploaded", or "failed" when retrying cannot help
	finalNotice  = "notice"  // "1" once the upload-failure notice was posted
	finalDone    = "done"    // "1" once everything was shown
)

// Finished brings the progress message to its final state, posts the
// report summary (or the failure or cancellation) in the thread, attaches
// the full Markdown report, collapses a checkpoint message that still shows
// buttons and marks the root message.
//
// It is idempotent: what it has shown is recorded in Redis step by step, so
// a call after a failure (or a crash) does only what is left, and a call
// after a complete success posts nothing.
func (p *Presenter) Finished(ctx context.Context, r *pipeline.Run) error {
	log := p.log.With("run_id", r.ID, "status", r.Status)
	p.mu.Lock()
	if st := p.progress[r.ID]; st != nil {
		p.stopFlushLocked(st)
		delete(p.progress, r.ID)
	}
	p.mu.Unlock()
	key := keyFinal + r.ID
	done, err := p.mem.RecallFields(ctx, key)
	if err != nil {
		// Without the record, posting could repeat what an earlier call posted.
		return fmt.Errorf("reading what was shown of run %s: %w", r.ID, err)
	}
	if done[finalDone] != "" {
		return nil
	}
	mark := func(field, value string) error {
		return p.mem.RememberField(ctx, key, field, value, msgKeyTTL)
	}
	// A run without a thread (a stream digest posted to its channel) is a new
	// message in the channel, with the file in that message's thread.
	thread := r.Origin.ThreadTS
	if thread != "" {
		if err := retry429(ctx, p.clock, func() error {
			return p.sendProgress(ctx, r.ID, r.Origin.Channel, thread, RenderProgress(r, p.now()), progressText(r))
		}); err != nil {
			log.Warn("bot: final progress update failed", "err", err)
		}
	}
	summaryTS := done[finalSummary]
	if summaryTS == "" {
		if err := retry429(ctx, p.clock, func() error {
			var err error
			_, summaryTS, err = p.api.PostMessageContext(ctx, r.Origin.Channel, quiet(RenderFinished(r), reportText(r)), slack.MsgOptionTS(thread))
			return err
		}); err != nil {
			log.Error("bot: posting the report failed", "err", err)
			return fmt.Errorf("posting the result of run %s: %w", r.ID, err)
		}
		if err := mark(finalSummary, summaryTS); err != nil {
			return fmt.Errorf("recording the result message of run %s: %w", r.ID, err)
		}
	}
	if thread == "" {
		thread = summaryTS
	}
	if r.Report != nil && strings.TrimSpace(r.Report.Markdown) != "" && done[finalFile] == "" {
		if err := p.upload(ctx, r, thread); err != nil {
			if transient(err) {
				log.Warn("bot: uploading the report failed; it will be tried again", "err", err)
				return fmt.Errorf("uploading the report of run %s: %w", r.ID, err)
			}
			// Trying again cannot help (a missing scope, an archived
			// channel): say so once and finish without the file.
			log.Error("bot: uploading the report failed", "err", err)
			if done[finalNotice] == "" {
				if perr := retry429(ctx, p.clock, func() error {
					_, _, err := p.api.PostMessageContext(ctx, r.Origin.Channel, quiet(RenderError("I couldn't attach the full report file ("+Escape(slackErrorCode(err))+"). The summary above is complete; ask whoever runs researchbot to check the bot's file permissions (files:write).", ""), "Report upload failed"), slack.MsgOptionTS(thread))
					return err
				}); perr == nil {
					_ = mark(finalNotice, "1")
				}
			}
			if err := mark(finalFile, "failed"); err != nil {
				return fmt.Errorf("recording the failed upload of run %s: %w", r.ID, err)
			}
		} else if err := mark(finalFile, "uploaded"); err != nil {
			return fmt.Errorf("recording the upload of run %s: %w", r.ID, err)
		}
	}
	p.closeOpenCheckpoints(ctx, r)
	// Only a /research run's thread starts with its root message; a digest's
	// thread (a stream's creation thread, for a dry run) does not.
	if r.Origin.ThreadTS != "" && (r.Origin.Kind == OriginKind || r.Origin.Kind == "") {
		root := RootInfo{Question: r.Question, RunID: r.ID, RequestedBy: r.RequestedBy, Mode: r.Mode, Depth: r.Depth, Status: r.Status}
		if err := retry429(ctx, p.clock, func() error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, r.Origin.Channel, r.Origin.ThreadTS, quiet(RenderRoot(root), rootText(root)))
			return err
		}); err != nil {
			log.Warn("bot: marking the root message failed", "err", err)
		}
	}
	if err := mark(finalDone, "1"); err != nil {
		log.Warn("bot: recording that the run was shown failed", "err", err)
	}
	log.Info("bot: run finished")
	return nil
}

// upload attaches the full Markdown report to the thread.
func (p *Presenter) upload(ctx context.Context, r *pipeline.Run, thread string) error {
	return retry429(ctx, p.clock, func() error {
		_, err := p.api.UploadFileContext(ctx, slack.UploadFileParameters{
			Content:         r.Report.Markdown,
			FileSize:        len(r.Report.Markdown),
			Filename:        "research-" + fileSafe(r.ID) + ".md",
			Title:           Truncate(oneLine(firstNonEmpty(r.Report.Title, "Research report")), 200),
			Channel:         r.Origin.Channel,
			ThreadTimestamp: thread,
		})
		return err
	})
}

// closeOpenCheckpoints collapses the messages of the run's checkpoints that
// still show buttons (a run cancelled or failed while it waited), so nobody
// clicks a decision that can no longer apply. It is best-effort.
func (p *Presenter) closeOpenCheckpoints(ctx context.Context, r *pipeline.Run) {
	for i := range r.Checkpoints {
		inst := &r.Checkpoints[i]
		msg, err := p.lookup(ctx, inst.ID)
		if err != nil || msg == nil || msg.Closed {
			continue
		}
		text := EscapeTruncate(oneLine(firstNonEmpty(inst.Label, inst.DefinitionID))+": closed", 300)
		if err := retry429(ctx, p.clock, func() error {
			_, _, _, err := p.api.UpdateMessageContext(ctx, msg.Channel, msg.TS, quiet(renderEnded(inst, r.Status), text))
			return err
		}); err != nil {
			p.log.Warn("bot: closing a checkpoint message failed", "run_id", r.ID, "checkpoint_id", inst.ID, "err", err)
			continue
		}
		msg.Closed = true
		if err := p.remember(ctx, inst.ID, *msg); err != nil {
			p.log.Warn("bot: remembering a closed checkpoint message failed", "checkpoint_id", inst.ID, "err", err)
		}
	}
}

// transient reports whether a failed Web API call may succeed when tried
// again: rate limits, server errors, timeouts and network failures are;
// Slack's refusals (missing_scope, not_in_channel, is_archived, …) are not.
func transient(err error) bool {
	var rl *slack.RateLimitedError
	var sc slack.StatusCodeError
	var se slack.SlackErrorResponse
	switch {
	case errors.As(err, &rl):
		return true
	case errors.As(err, &sc):
		return sc.Retryable()
	case errors.As(err, &se):
		switch se.Err {
		case "internal_error", "fatal_error", "service_unavailable", "request_timeout", "ratelimited":
			return true
		}
		return false
	}
	return true
}

// fileSafe keeps letters, digits, dashes and underscores.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			return r
		}
		return -1
	}, s)
}

// remember stores where a checkpoint's message is.
func (p *Presenter) remember(ctx context.Context, instID string, m checkpointMsg) error {
	b, _ := json.Marshal(m)
	return p.mem.Remember(ctx, keyCheckpointMsg+instID, string(b), msgKeyTTL)
}

// lookup finds where a checkpoint's message is; nil when unknown.
func (p *Presenter) lookup(ctx context.Context, instID string) (*checkpointMsg, error) {
	return lookupCheckpointMsg(ctx, p.mem, instID)
}

// lookupCheckpointMsg finds where a checkpoint's message was posted (any
// replica may ask); nil when unknown.
func lookupCheckpointMsg(ctx context.Context, mem Memory, instID string) (*checkpointMsg, error) {
	b, found, err := mem.Recall(ctx, keyCheckpointMsg+instID)
	if err != nil || !found {
		return nil, err
	}
	var m checkpointMsg
	if err := json.Unmarshal([]byte(b), &m); err != nil {
		return nil, err
	}
	return &m, nil
}
