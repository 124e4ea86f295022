package pipeline

import (
	"fmt"
	"slices"
	"time"
)

// Visibility says who may read a source (architecture invariant 12). The
// zero Visibility is public: a web page, a PDF on the web, the operator's
// document collection, an MCP server, a public channel's message.
type Visibility struct {
	// Conversation is the private conversation (private channel, DM,
	// group DM) the source lives in; "" for a public source.
	Conversation string `json:"conversation,omitempty"`
	// Reader is the person whose access surfaced the source: the asker
	// whose workspace search found it, the person who shared a file.
	Reader string `json:"reader,omitempty"`
}

// Public reports whether anyone may read the source.
func (v Visibility) Public() bool { return v == Visibility{} }

// Audience is who reads what a run writes (its report, answers, drafts,
// digests): the members of a conversation (a channel), or one person
// alone (a DM with the bot, an assistant thread, the terminal). The zero
// Audience is unknown: only public sources reach it (fail closed).
type Audience struct {
	// Conversation is the channel (public or private) or conversation the
	// run writes to.
	Conversation string `json:"conversation,omitempty"`
	// Person is set when one person alone reads the run: the asker.
	Person string `json:"person,omitempty"`
}

// ChannelAudience is the audience of a report posted in a channel (public
// or private) or a group DM: its members.
func ChannelAudience(conversation string) Audience { return Audience{Conversation: conversation} }

// PersonAudience is the audience of a report read by person alone: in
// conversation (their DM or assistant thread with the bot; "" for the
// terminal).
func PersonAudience(conversation, person string) Audience {
	return Audience{Conversation: conversation, Person: person}
}

// Permits reports whether everyone in the audience could already read a
// source of visibility v: a public source, yes; a private conversation's
// content, only in that same conversation or for the person alone whose
// access surfaced it.
func (a Audience) Permits(v Visibility) bool {
	switch {
	case v.Public():
		return true
	case v.Conversation != "" && v.Conversation == a.Conversation:
		return true
	case a.Person != "" && v.Reader == a.Person:
		return true
	}
	return false
}

// WithheldReason says why sources were withheld from a run.
const WithheldReason = "only people in a private conversation could read them"

// Withheld counts the sources kept from a run because its audience could
// not read them (Audience.Permits). Only their keys are kept, to count each
// once: never their text, title or snippet.
type Withheld struct {
	Count int      `json:"count"`
	Keys  []string `json:"keys,omitempty"`
}

// admit reports whether the run's audience may read a source of visibility
// v found under key; when not, it counts the source as withheld (once per
// key) and the caller must drop it: nothing of it is stored, nor does it
// reach any prompt.
func (r *Run) admit(key string, v Visibility) bool {
	if r.Audience.Permits(v) {
		return true
	}
	if key == "" || !slices.Contains(r.Withheld.Keys, key) {
		r.Withheld.Count++
		if key != "" {
			r.Withheld.Keys = append(r.Withheld.Keys, key)
		}
	}
	return false
}

// traceWithheld notes in the trace how many sources were withheld by one
// step, when any were.
func (r *Run) traceWithheld(now time.Time, step Step, before int) {
	if n := r.Withheld.Count - before; n > 0 {
		r.trace(now, step, "%s withheld: %s", plural(n, "source", "sources"), WithheldReason)
	}
}

// WithheldText is the report's line about the withheld sources, or "" for
// none: "2 sources withheld: only people in a private conversation could
// read them, and this report's readers are not all among them".
func WithheldText(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s withheld: %s, and this report's readers are not all among them; they were not shown to the model", plural(n, "source", "sources"), WithheldReason)
}
