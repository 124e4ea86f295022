package slackfake

import (
	"context"
	"fmt"
)

// PostUserMention posts a message as a user that starts with an @mention of
// the bot (in a thread when threadTS is set), stores it, and delivers the
// events_api app_mention event — the only message event an app with just
// app_mentions:read receives — waiting for its ack. text is what follows
// the mention.
func (s *Server) PostUserMention(ctx context.Context, userID, channelID, threadTS, text string) error {
	s.mu.Lock()
	if _, ok := s.channels[channelID]; !ok {
		s.mu.Unlock()
		return fmt.Errorf("slackfake: PostUserMention: unknown channel %s", channelID)
	}
	full := "<@" + BotUserID + "> " + text
	m := &Message{Channel: channelID, TS: s.nextTS(), ThreadTS: threadTS, User: userID, Text: full}
	s.messages[channelID] = append(s.messages[channelID], m)
	event := map[string]any{
		"type": "app_mention", "channel": channelID, "user": userID, "text": full, "ts": m.TS,
		"event_ts": m.TS, "team": TeamID, "client_msg_id": s.nextID("msg-"),
	}
	if threadTS != "" {
		event["thread_ts"] = threadTS
	}
	s.withActionToken(event, userID)
	payload := s.eventCallback(event)
	s.mu.Unlock()
	_, err := s.send(ctx, Envelope{Type: "events_api", Payload: payload}, nil)
	return err
}
