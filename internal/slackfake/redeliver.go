package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
)

// SentEnvelope is an envelope the fake sent over Socket Mode, as encoded.
type SentEnvelope struct {
	EnvelopeID             string
	Type                   string
	Payload                json.RawMessage
	AcceptsResponsePayload bool
	RetryAttempt           int
	extra                  func(Ack)
}

// Envelopes returns the envelopes sent so far, oldest first.
func (s *Server) Envelopes() []SentEnvelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SentEnvelope(nil), s.sent...)
}

// LastEnvelope returns the newest envelope of type typ ("events_api",
// "interactive", "slash_commands"), or false when none was sent.
func (s *Server) LastEnvelope(typ string) (SentEnvelope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.sent) - 1; i >= 0; i-- {
		if s.sent[i].Type == typ {
			return s.sent[i], true
		}
	}
	return SentEnvelope{}, false
}

// Redeliver sends an envelope sent before again, as Slack does when it saw
// no ack in time or the connection dropped: the same payload (so the same
// event_id or trigger_id) under a new envelope id, with retry_attempt one
// higher and retry_reason reason on events_api envelopes. It waits for the
// ack. What the ack payload shows is applied again, as Slack would.
func (s *Server) Redeliver(ctx context.Context, envelopeID, reason string) (Ack, error) {
	s.mu.Lock()
	var orig *SentEnvelope
	for i := range s.sent {
		if s.sent[i].EnvelopeID == envelopeID {
			orig = &s.sent[i]
		}
	}
	if orig == nil {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("slackfake: Redeliver: no envelope %s was sent", envelopeID)
	}
	e := Envelope{Type: orig.Type, Payload: orig.Payload, AcceptsResponsePayload: orig.AcceptsResponsePayload,
		RetryAttempt: orig.RetryAttempt + 1, RetryReason: reason}
	extra := orig.extra
	s.mu.Unlock()
	return s.send(ctx, e, extra)
}

// RewriteEnvelopes makes the fake pass the payload of every envelope it
// builds (slash commands, clicks, submissions, messages) to fn before
// sending it, so a test can play a request from another workspace or app,
// or a tampered button value. nil stops rewriting.
func (s *Server) RewriteEnvelopes(fn func(typ string, payload map[string]any)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rewrite = fn
}
