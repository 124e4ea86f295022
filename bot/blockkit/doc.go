// Package blockkit renders researchbot's Slack surfaces as pure functions:
// Block Kit messages (runs, checkpoints, reports, follow-ups, streams), the
// App Home, the forms (checkpoint edit and reject, the start form, the
// definition builder) and the parsing of their submissions, and the
// conversion of untrusted Markdown and text into escaped mrkdwn.
//
// It turns the domain's types (pipeline, checkpoints, scheduler) into
// slack-go's Block Kit types and does nothing else: no Web API call, no
// Socket Mode, no Redis, no metrics (internal/archtest holds it to that).
// Every renderer is checked by the golden files in testdata/golden, here and
// in bot, whose handlers decide what to show and send it.
package blockkit
