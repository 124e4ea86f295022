// Package scheduler is the pure core of research streams: the guided creation
// conversation that captures a stream's [Spec], and the schedule that decides when
// the stream's digest is due.
//
// The conversation follows a fixed workflow of steps (exploration, one data step per
// field, review, complete). At each turn a language model proposes the next step and
// any field values it extracted from the user's text (a [Proposal]); [Apply] checks
// the proposal against the allowed transitions and the field types, applies it when
// it is valid and stays on the current step when it is not. Everything here is
// deterministic and free of I/O: no Redis, no Slack, no network. The model is an
// interface ([TurnProposer]) implemented elsewhere; [RenderPrompt] renders its prompt.
//
// The schedule ([NextFire], [DueFires]) is computed with robfig/cron/v3 in the
// stream's own time zone, with one digest per scheduled local date whatever daylight
// saving does, and at most one catch-up digest after downtime.
//
// Text in a [Turn] (model messages, suggestions, user-supplied values) is untrusted
// plain text: the Slack adapter must escape it before posting.
package scheduler
