package bot

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Bounds of the per-run progress states a Presenter keeps in memory. A run
// finished on another replica (or waiting at a checkpoint for days) never
// tells this one, so states idle for progressIdle are dropped; the progress
// message's ts is in Redis, so a run that speaks again simply carries on.
const (
	progressIdle       = time.Hour
	progressSweepEvery = time.Minute
	progressMaxRuns    = 10000
)

// progressState paces one run's progress message.
type progressState struct {
	channel, thread string
	pending         []slack.Block // latest rendering not yet sent
	pendingText     string
	pendingStream   *streamUpdate // the same state as a streamed plan
	lastSent        time.Time
	notBefore       time.Time   // after a 429
	stop            func() bool // stops the pending flush; nil when none
	sending         bool
	touched         time.Time // last Progress call
	// within is the context of the last Progress call, without its
	// deadline: a flush held back and sent later is made within its
	// values (the run's trace, so the edit is a span of the step that
	// asked for it).
	within context.Context
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
	p.panel.runStatus(ctx, r)
	blocks, text := blockkit.RenderProgress(r, p.now()), blockkit.ProgressText(r)
	if note != "" {
		blocks = append(blocks, blockkit.ContextText(":hourglass_flowing_sand: "+blockkit.EscapeTruncate(note, 300)))
	}
	p.mu.Lock()
	p.sweepLocked()
	st := p.progress[r.ID]
	if st == nil {
		st = &progressState{channel: r.Origin.Channel, thread: r.Origin.ThreadTS}
		p.progress[r.ID] = st
	}
	st.touched, st.within = p.now(), context.WithoutCancel(ctx)
	st.pending, st.pendingText, st.pendingStream = blocks, text, newStreamUpdate(r, note)
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
		within := st.within
		p.mu.Unlock()
		ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
		defer cancel()
		p.flush(withValues(ctx, within), runID)
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
	blocks, text, update := st.pending, st.pendingText, st.pendingStream
	st.pending, st.pendingStream, st.sending = nil, nil, true
	p.mu.Unlock()

	err := errNoStream
	if update != nil {
		err = p.streamProgress(ctx, update)
	}
	if errors.Is(err, errNoStream) {
		err = p.sendProgress(ctx, true, runID, st.channel, st.thread, blocks, text)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	st.sending = false
	st.lastSent = p.now()
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		st.notBefore = p.now().Add(max(rl.RetryAfter, time.Second))
		if st.pending == nil {
			st.pending, st.pendingText, st.pendingStream = blocks, text, update
		}
	} else if err != nil {
		p.log.Warn("bot: progress update failed", "run_id", runID, "err", err)
	}
	if st.pending != nil && st.stop == nil {
		p.scheduleLocked(runID, st, max(p.dueLocked(st).Sub(p.now()), time.Millisecond))
	}
}

// sendProgress posts or edits the progress message. paced leaves a 429 to
// the caller (flush paces its retries itself); else the Sender retries it.
func (p *Presenter) sendProgress(ctx context.Context, paced bool, runID, channel, thread string, blocks []slack.Block, text string) error {
	send := p.send
	if paced {
		send = send.Paced()
	}
	ts, _, err := p.mem.ProgressMessage(ctx, runID)
	if err != nil {
		return err
	}
	if ts != "" {
		err = send.Update(ctx, channel, ts, blocks, text)
		if code := SlackErrorCode(err); err == nil || (code != "message_not_found" && code != "cant_update_message") {
			return err
		}
	}
	once := *p.once
	once.once429 = paced
	_, ts, err = once.post(ctx, postKey{Run: runID, Post: "progress"}, channel, thread, blocks, text)
	if err != nil {
		return err
	}
	return p.mem.RememberProgressMessage(ctx, runID, ts, MessageKeyTTL)
}

// withValues is ctx (its deadline and cancellation) with the values of
// values too (ctx's win; nil: ctx itself).
func withValues(ctx, values context.Context) context.Context {
	if values == nil {
		return ctx
	}
	return valuesOf{Context: ctx, values: values}
}

// valuesOf is a context whose values are another's.
type valuesOf struct {
	context.Context
	values context.Context
}

// Value returns the value of key in the context, else in the other one.
// (The context's come first: the context package finds a parent's
// cancellation through them.)
func (c valuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	return c.values.Value(key)
}
