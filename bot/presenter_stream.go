package bot

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// The streamed plan: where Slack's chat streaming is available, a run's
// progress is a streamed message (chat.startStream with task_display_mode
// "plan") whose task cards — one per stage, one search per sub-question —
// go from pending to in progress to complete (or error), the reading task
// listing the pages read, instead of the edited progress message. It is
// used in an assistant thread, and in a channel's thread when the
// Presenter is configured to (StreamInChannels; Slack then needs the
// recipient: the requester and their workspace).
//
// One stream covers the stages between two checkpoints: it is stopped
// (chat.stopStream) before a checkpoint is posted, and a new one starts
// with the first progress after the decision; the last one ends with a
// short summary when the run ends. Updates go through the progress pacing
// (PresenterConfig.MinInterval per run), and carry only the tasks that
// changed.
//
// What was streamed is remembered (SlackMemory.PlanStream), so another
// replica, or this process after a restart, appends to the same stream; a
// stream Slack no longer takes appends on (it expired, or was stopped) is
// stopped if it can be and replaced by a new one showing the whole plan.
//
// A workspace whose plan has no streaming answers with a feature error:
// it is remembered (SlackMemory.PlanStreamOff, for planStreamOffTTL) and the edited
// progress message is used, without trying to stream every time. Another
// refusal of a start (a channel where streaming is not allowed) makes that
// run use the message.

// What the streamed plan remembers (SlackMemory.PlanStream,
// SlackMemory.PlanStreamOff) is kept for these.
const (
	// planStreamOffTTL is how long a workspace answered with a feature error
	// is not asked again.
	planStreamOffTTL = assistantOffTTL
)

// streamFeatureErrors are the errors that mean the workspace (or the
// installation) cannot stream messages at all.
var streamFeatureErrors = map[string]bool{
	"feature_not_enabled": true, "not_allowed": true, "team_not_allowed": true, "access_denied": true,
	"missing_scope": true, "not_allowed_token_type": true, "unknown_method": true, "method_deprecated": true,
	"not_supported": true,
}

// streamGoneErrors are the errors of an append or stop that mean the
// stream takes no more: Slack ended it, or it is not a stream.
var streamGoneErrors = map[string]bool{
	"message_not_in_streaming_state": true, "message_not_found": true, "cant_update_message": true,
}

// streamTransientErrors are Slack's errors that trying again later can
// cure: the run keeps its streamed plan and the next update tries again.
var streamTransientErrors = map[string]bool{
	"internal_error": true, "fatal_error": true, "service_unavailable": true, "request_timeout": true,
	"ratelimited": true, "team_added_to_org": true,
}

// planStream is what is remembered of a run's streamed plan.
type planStream struct {
	Channel string `json:"channel"`
	// TS is the current (or last) stream's ts; Open while it takes appends.
	TS   string `json:"ts,omitempty"`
	Open bool   `json:"open,omitempty"`
	// Sent is, per task id, the fingerprint of what the stream shows.
	Sent map[string]string `json:"sent,omitempty"`
	// StoppedAt is the checkpoint the last stream was stopped for: no new
	// stream starts until the run has moved past it.
	StoppedAt string `json:"stopped_at,omitempty"`
	// Fallback is set when this run shows the edited progress message.
	Fallback bool `json:"fallback,omitempty"`
	// Ended is set once the run's last stream was stopped.
	Ended bool `json:"ended,omitempty"`
	// Streams counts the streams started.
	Streams int `json:"streams,omitempty"`
}

// errNoStream says the run's progress is not streamed: show the message.
var errNoStream = errors.New("bot: no streamed plan for this run")

// streamLocks serialise the stream calls of a run within this process
// (striped by run id, so the set stays bounded).
type streamLocks [64]sync.Mutex

func (l *streamLocks) of(runID string) *sync.Mutex {
	h := fnv.New32a()
	_, _ = h.Write([]byte(runID))
	return &l[h.Sum32()%uint32(len(l))]
}

// streamSender makes the stream calls. They leave a 429 to their callers,
// as progress edits do (Sender.Paced): flush sends again after Retry-After,
// and endStream carries on as after any failed stop.
func (p *Presenter) streamSender() *Sender { return p.send.Paced() }

// streamPlace is where and to whom r's plan is streamed.
type streamPlace struct {
	channel, thread, user, team string
}

// streamTarget says whether r's progress is streamed, and where. It
// reports false for a run whose workspace has no streaming, whose thread
// is not one streams go to, or that fell back to the message.
func (p *Presenter) streamTarget(ctx context.Context, r *pipeline.Run) (streamPlace, bool) {
	o := r.Origin
	if o.Kind != OriginKind || o.Channel == "" || o.ThreadTS == "" {
		return streamPlace{}, false
	}
	place := streamPlace{channel: o.Channel, thread: o.ThreadTS, user: r.RequestedBy, team: o.TeamID}
	if t, ok := p.panel.Thread(ctx, o.Channel, o.ThreadTS); ok {
		place.user = blockkit.FirstNonEmpty(t.User, place.user)
	} else if !p.streamChannels || place.user == "" || place.team == "" {
		return streamPlace{}, false
	}
	if place.team != "" {
		if _, off, err := p.mem.PlanStreamOff(ctx, place.team); err != nil || off {
			return streamPlace{}, false
		}
	}
	return place, true
}

// loadStream reads what is remembered of r's streamed plan.
func (p *Presenter) loadStream(ctx context.Context, runID string) (planStream, error) {
	var ps planStream
	v, found, err := p.mem.PlanStream(ctx, runID)
	if err != nil || !found {
		return ps, err
	}
	if err := json.Unmarshal([]byte(v), &ps); err != nil {
		return planStream{}, nil // unreadable: start afresh
	}
	return ps, nil
}

func (p *Presenter) saveStream(ctx context.Context, runID string, ps planStream) error {
	b, err := json.Marshal(ps)
	if err != nil {
		return err
	}
	return p.mem.RememberPlanStream(ctx, runID, string(b), MessageKeyTTL)
}

// streamUpdate is a run's progress as its streamed plan shows it, taken
// while the caller owns the run: the update is sent later, from a timer,
// while the engine goes on changing the run, so it keeps no pointer into it.
type streamUpdate struct {
	run   *pipeline.Run // ID, Origin, RequestedBy, Status and the checkpoints' states only
	tasks []blockkit.StreamTask
}

// newStreamUpdate takes r's streamed plan, with a passing note (Notice) on
// the task in progress.
func newStreamUpdate(r *pipeline.Run, note string) *streamUpdate {
	return &streamUpdate{
		run: &pipeline.Run{
			ID: r.ID, Origin: r.Origin, RequestedBy: r.RequestedBy, Status: r.Status,
			Checkpoints: slices.Clone(r.Checkpoints),
		},
		tasks: blockkit.WithStreamNote(blockkit.StreamPlan(r), note),
	}
}

// streamProgress shows a run's progress in its streamed plan. It returns
// errNoStream when the run's progress is the edited message instead.
func (p *Presenter) streamProgress(ctx context.Context, u *streamUpdate) error {
	r, tasks := u.run, u.tasks
	place, ok := p.streamTarget(ctx, r)
	if !ok {
		return errNoStream
	}
	mu := p.streamMu.of(r.ID)
	mu.Lock()
	defer mu.Unlock()
	ps, err := p.loadStream(ctx, r.ID)
	if err != nil {
		return err
	}
	switch {
	case ps.Fallback:
		return errNoStream
	case ps.Ended:
		return nil // the run's plan is complete; Finished shows the rest
	case !ps.Open && !movedPast(r, ps.StoppedAt):
		return nil // stopped at a checkpoint the run still waits on
	}
	replacing := false
	if ps.Open {
		chunks := blockkit.StreamChunks(tasks, ps.Sent)
		if len(chunks) == 0 {
			return nil
		}
		err := p.streamSender().AppendStream(ctx, ps.Channel, ps.TS, slack.MsgOptionChunks(chunks...))
		switch code := SlackErrorCode(err); {
		case err == nil:
			markSent(&ps, tasks, chunks)
			return p.saveStream(ctx, r.ID, ps)
		case streamGoneErrors[code]:
			p.log.Info("bot: a streamed plan takes no more appends; replacing it", "run_id", r.ID, "ts", ps.TS, "error", code)
			p.stopQuietly(ctx, ps)
			ps.Open, replacing = false, true
		default:
			return p.streamFailed(ctx, r, &ps, place, err)
		}
	}
	return p.startStream(ctx, r, &ps, place, tasks, "", replacing)
}

// startStream starts a new stream showing tasks (the whole plan) and, with
// end set, stops it at once with end as its last text; replacing says it
// takes the place of one Slack takes no more appends on (counted apart).
func (p *Presenter) startStream(ctx context.Context, r *pipeline.Run, ps *planStream, place streamPlace, tasks []blockkit.StreamTask, end string, replacing bool) error {
	chunks := []slack.StreamChunk{slack.NewPlanUpdateChunk(blockkit.StreamPlanTitle)}
	first := blockkit.StreamChunks(tasks, nil)
	chunks = append(chunks, first...)
	opts := []slack.MsgOption{slack.MsgOptionTS(place.thread), slack.MsgOptionTaskDisplayMode(slack.TaskDisplayModePlan), slack.MsgOptionChunks(chunks...)}
	if place.user != "" && place.team != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(place.user), slack.MsgOptionRecipientTeamID(place.team))
	}
	channel, ts, err := p.streamSender().StartStream(ctx, place.channel, opts...)
	if err != nil {
		return p.streamFailed(ctx, r, ps, place, err)
	}
	ps.Channel, ps.TS, ps.Open, ps.Sent, ps.StoppedAt = blockkit.FirstNonEmpty(channel, place.channel), ts, true, map[string]string{}, ""
	ps.Streams++
	if replacing {
		p.streamCount.count(streamReplaced)
	} else {
		p.streamCount.count(streamStarted)
	}
	markSent(ps, tasks, first)
	if err := p.saveStream(ctx, r.ID, *ps); err != nil {
		return err
	}
	p.log.Info("bot: streamed plan started", "run_id", r.ID, "ts", ts, "streams", ps.Streams)
	if end == "" {
		return nil
	}
	return p.stopStream(ctx, r, ps, place, tasks, end)
}

// streamFailed handles a failed start or append: a feature error turns
// streaming off for the workspace, another Slack refusal for the run (both
// then show the message); a rate limit or a network failure is returned.
func (p *Presenter) streamFailed(ctx context.Context, r *pipeline.Run, ps *planStream, place streamPlace, err error) error {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || streamTransientErrors[se.Err] {
		return err
	}
	code := se.Err
	if streamFeatureErrors[code] && place.team != "" {
		p.log.Info("bot: this workspace has no streamed messages; using the progress message", "team_id", place.team, "error", code)
		p.streamCount.count(streamFallbackFeature)
		if err := p.mem.RememberPlanStreamOff(ctx, place.team, code, planStreamOffTTL); err != nil {
			p.log.Warn("bot: remembering a workspace without streaming failed", "err", err)
		}
	} else {
		p.log.Warn("bot: streaming the plan was refused; this run shows the progress message", "run_id", r.ID, "error", code)
		p.streamCount.count(streamFallbackRefused)
	}
	if ps.Open {
		p.stopQuietly(ctx, *ps)
	}
	ps.Open, ps.Fallback = false, true
	if err := p.saveStream(ctx, r.ID, *ps); err != nil {
		return err
	}
	return errNoStream
}

// markSent records that chunks (task updates of tasks) were sent.
func markSent(ps *planStream, tasks []blockkit.StreamTask, chunks []slack.StreamChunk) {
	if ps.Sent == nil {
		ps.Sent = map[string]string{}
	}
	sent := map[string]bool{}
	for _, c := range chunks {
		if tu, ok := c.(slack.TaskUpdateChunk); ok {
			sent[tu.ID] = true
		}
	}
	for _, t := range tasks {
		if sent[t.ID] {
			ps.Sent[t.ID] = t.Key()
		}
	}
}

// stopQuietly stops a stream that is being replaced or abandoned; a
// failure (it is already over) is only logged.
func (p *Presenter) stopQuietly(ctx context.Context, ps planStream) {
	if err := p.streamSender().StopStream(ctx, ps.Channel, ps.TS); err != nil {
		p.log.Debug("bot: stopping a replaced stream", "ts", ps.TS, "error", SlackErrorCode(err))
	}
}

// stopStream sends what changed and end, and stops the open stream.
func (p *Presenter) stopStream(ctx context.Context, r *pipeline.Run, ps *planStream, place streamPlace, tasks []blockkit.StreamTask, end string) error {
	chunks := blockkit.StreamChunks(tasks, ps.Sent)
	all := append(append([]slack.StreamChunk(nil), chunks...), slack.NewMarkdownTextChunk(end))
	err := p.streamSender().StopStream(ctx, ps.Channel, ps.TS, slack.MsgOptionChunks(all...))
	if code := SlackErrorCode(err); err != nil && streamGoneErrors[code] {
		// Slack ended it first: show the final state in a new one.
		ps.Open = false
		p.log.Info("bot: a streamed plan ended before its stop; replacing it", "run_id", r.ID, "ts", ps.TS)
		return p.startStream(ctx, r, ps, place, tasks, end, true)
	} else if err != nil {
		return p.streamFailed(ctx, r, ps, place, err)
	}
	markSent(ps, tasks, chunks)
	ps.Open = false
	return p.saveStream(ctx, r.ID, *ps)
}

// endStream brings r's streamed plan to r's state and stops it, with end
// as its last text: before a checkpoint is shown (the stream is stopped
// for it) and when the run ends (final). It reports whether r's progress
// is streamed (false: the progress message shows it).
func (p *Presenter) endStream(ctx context.Context, r *pipeline.Run, end string, final bool) bool {
	place, ok := p.streamTarget(ctx, r)
	if !ok {
		return false
	}
	mu := p.streamMu.of(r.ID)
	mu.Lock()
	defer mu.Unlock()
	ps, err := p.loadStream(ctx, r.ID)
	if err != nil {
		p.log.Warn("bot: reading the streamed plan failed", "run_id", r.ID, "err", err)
		return false
	}
	if ps.Fallback {
		return false
	}
	p.dropPendingProgress(r.ID)
	if ps.Ended || (!ps.Open && !final && ps.StoppedAt == r.Waiting && r.Waiting != "") {
		return true // already done (a retry, or the same checkpoint offered again)
	}
	tasks := blockkit.StreamPlan(r)
	if ps.Open {
		err = p.stopStream(ctx, r, &ps, place, tasks, end)
	} else {
		err = p.startStream(ctx, r, &ps, place, tasks, end, false)
	}
	if errors.Is(err, errNoStream) {
		return false
	}
	if err != nil {
		p.log.Warn("bot: stopping the streamed plan failed", "run_id", r.ID, "err", err)
		return true
	}
	ps, _ = p.loadStream(ctx, r.ID)
	if final {
		ps.Ended = true
	} else {
		ps.StoppedAt = r.Waiting
	}
	if err := p.saveStream(ctx, r.ID, ps); err != nil {
		p.log.Warn("bot: remembering the stopped stream failed", "run_id", r.ID, "err", err)
	}
	return true
}

// movedPast reports whether r has moved past the checkpoint instance id (it
// was decided, or the run ended); true when there is none.
func movedPast(r *pipeline.Run, id string) bool {
	if id == "" || r.Status.Final() {
		return true
	}
	for _, inst := range r.Checkpoints {
		if inst.ID == id {
			return inst.Final()
		}
	}
	return false
}

// dropPendingProgress cancels a progress update of the run not yet sent:
// what it would show is shown by the caller.
func (p *Presenter) dropPendingProgress(runID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.progress[runID]; st != nil {
		p.stopFlushLocked(st)
		st.pending, st.pendingStream = nil, nil
	}
}
