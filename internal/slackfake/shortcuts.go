package slackfake

import (
	"context"
	"fmt"
)

// GlobalShortcut delivers a global shortcut (type "shortcut") with
// callbackID, as when userID picks it from the shortcuts menu, with a fresh
// trigger_id, and waits for the ack. A global shortcut carries no channel.
func (s *Server) GlobalShortcut(ctx context.Context, userID, callbackID string) (Ack, error) {
	s.mu.Lock()
	payload := map[string]any{
		"type": "shortcut", "token": "fake-verification-token", "action_ts": s.nextTS(),
		"team": map[string]any{"id": TeamID, "domain": TeamDomain}, "user": s.userJSON(userID),
		"callback_id": callbackID, "trigger_id": s.issueTrigger("", userID),
		"is_enterprise_install": false, "enterprise": nil,
	}
	s.mu.Unlock()
	return s.send(ctx, Envelope{Type: "interactive", Payload: payload}, nil)
}

// MessageShortcut delivers a message shortcut (type "message_action") with
// callbackID on message messageTS of channelID, as when userID picks it from
// the message's menu, and waits for the ack. The payload carries the
// message, its channel, a response_url and a fresh trigger_id. It fails with
// ErrNoSuchMessage when the message does not exist or is ephemeral, since no
// menu could be opened on it.
func (s *Server) MessageShortcut(ctx context.Context, userID, channelID, messageTS, callbackID string) (Ack, error) {
	s.mu.Lock()
	m, _ := s.findMessage(channelID, messageTS)
	if m == nil || m.Ephemeral {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %s/%s", ErrNoSuchMessage, channelID, messageTS)
	}
	target := responseTarget{channel: channelID, userID: userID, messageTS: m.TS, threadTS: m.ThreadTS}
	payload := map[string]any{
		"type": "message_action", "token": "fake-verification-token", "action_ts": s.nextTS(),
		"team": map[string]any{"id": TeamID, "domain": TeamDomain}, "user": s.userJSON(userID),
		"channel":     map[string]any{"id": channelID, "name": s.channelName(channelID)},
		"callback_id": callbackID, "trigger_id": s.issueTrigger("", userID),
		"message_ts": m.TS, "message": messageJSON(m),
		"response_url":          s.newResponseURL("actions", target),
		"is_enterprise_install": false, "enterprise": nil,
	}
	s.mu.Unlock()
	return s.send(ctx, Envelope{Type: "interactive", Payload: payload}, nil)
}
