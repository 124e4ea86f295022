package slackfake

// Messages the bot posts, updates and deletes (chat.*, reactions.add), and
// the JSON every method that returns a message answers with.

import (
	"encoding/json"
	"slices"
	"strings"
)

// postable resolves a channel the bot may write to. A known user id resolves
// to the bot's DM with that user. The caller holds s.mu.
func (s *Server) postable(id string) (*channel, *apiError) {
	if id == "" {
		return nil, errCode("channel_not_found")
	}
	if _, ok := s.users[id]; ok {
		id = DMChannelID(id)
	}
	c, ok := s.channels[id]
	if !ok {
		return nil, errCode("channel_not_found")
	}
	if !c.member {
		return nil, errCode("not_in_channel")
	}
	return c, nil
}

func boolParam(p map[string]string, key string) *bool {
	v, ok := p[key]
	if !ok {
		return nil
	}
	b := v == "true" || v == "1"
	return &b
}

// messageContent validates text/blocks/attachments of a chat call.
func messageContent(p map[string]string, requireContent bool) (json.RawMessage, *apiError) {
	text := p["text"]
	if len([]rune(text)) > maxMessageText {
		return nil, errCode("msg_too_long")
	}
	var blocks json.RawMessage
	if b, ok := p["blocks"]; ok && b != "" {
		if probs := validateBlocks([]byte(b), maxMessageBlocks); len(probs) > 0 {
			return nil, errCode("invalid_blocks", probs...)
		}
		blocks = json.RawMessage(b)
	}
	if a, ok := p["attachments"]; ok && a != "" && !json.Valid([]byte(a)) {
		return nil, errCode("invalid_attachments")
	}
	if requireContent && text == "" && blocks == nil && p["attachments"] == "" {
		return nil, errCode("no_text")
	}
	return blocks, nil
}

// messageJSONWith is messageJSON with the message's metadata when asked
// (include_all_metadata).
func messageJSONWith(m *Message, metadata bool) map[string]any {
	out := messageJSON(m)
	if metadata && len(m.Metadata) > 0 {
		out["metadata"] = m.Metadata
	}
	return out
}

func messageJSON(m *Message) map[string]any {
	out := map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "team": TeamID}
	if m.User != "" {
		out["user"] = m.User
	}
	if m.BotID != "" {
		out["bot_id"] = m.BotID
		out["app_id"] = AppID
	}
	if m.ThreadTS != "" {
		out["thread_ts"] = m.ThreadTS
	}
	if len(m.Blocks) > 0 {
		out["blocks"] = m.Blocks
	}
	if len(m.FileIDs) > 0 {
		files := make([]map[string]any, 0, len(m.FileIDs))
		for _, id := range m.FileIDs {
			files = append(files, map[string]any{"id": id})
		}
		out["files"] = files
	}
	return out
}

// findMessage returns the message with ts in channel. The caller holds s.mu.
func (s *Server) findMessage(channelID, ts string) (*Message, int) {
	for i, m := range s.messages[channelID] {
		if m.TS == ts {
			return m, i
		}
	}
	return nil, -1
}

func (s *Server) chatPostMessage(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	blocks, e := messageContent(p, true)
	if e != nil {
		return nil, e
	}
	meta, e := messageMetadata(p["metadata"])
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	m := &Message{
		Channel: c.id, TS: s.nextTS(), ThreadTS: p["thread_ts"], User: BotUserID, BotID: BotID,
		Text: p["text"], Blocks: blocks, Metadata: meta,
		UnfurlLinks: boolParam(p, "unfurl_links"), UnfurlMedia: boolParam(p, "unfurl_media"),
	}
	s.messages[c.id] = append(s.messages[c.id], m)
	return map[string]any{"channel": c.id, "ts": m.TS, "message": messageJSON(m)}, nil
}

// messageMetadata validates chat.postMessage's metadata argument: a JSON
// object with a string event_type and an object event_payload, as Slack's
// message metadata is ("" is none).
func messageMetadata(raw string) (json.RawMessage, *apiError) {
	if raw == "" {
		return nil, nil
	}
	var md struct {
		EventType    *string         `json:"event_type"`
		EventPayload json.RawMessage `json:"event_payload"`
	}
	if err := json.Unmarshal([]byte(raw), &md); err != nil || md.EventType == nil || *md.EventType == "" {
		return nil, errCode("invalid_metadata_format")
	}
	var payload map[string]any
	if err := json.Unmarshal(md.EventPayload, &payload); err != nil || payload == nil {
		return nil, errCode("invalid_metadata_format")
	}
	return json.RawMessage(raw), nil
}

func (s *Server) chatPostEphemeral(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	blocks, e := messageContent(p, true)
	if e != nil {
		return nil, e
	}
	if p["user"] == "" {
		return nil, errCode("user_not_found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	m := &Message{
		Channel: c.id, TS: s.nextTS(), ThreadTS: p["thread_ts"], User: BotUserID, BotID: BotID,
		Text: p["text"], Blocks: blocks, Ephemeral: true, ToUser: p["user"],
	}
	s.messages[c.id] = append(s.messages[c.id], m)
	return map[string]any{"message_ts": m.TS}, nil
}

func (s *Server) chatUpdate(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	blocks, e := messageContent(p, false)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	m, _ := s.findMessage(c.id, p["ts"])
	if m == nil || m.Ephemeral {
		return nil, errCode("message_not_found")
	}
	if m.BotID != BotID {
		return nil, errCode("cant_update_message")
	}
	if e := s.streamingConflict(c.id, m.TS); e != nil {
		return nil, e
	}
	if _, ok := p["text"]; ok {
		m.Text = p["text"]
	}
	if _, ok := p["blocks"]; ok {
		m.Blocks = blocks
	}
	m.Updated++
	return map[string]any{"channel": c.id, "ts": m.TS, "text": m.Text, "message": messageJSON(m)}, nil
}

func (s *Server) chatDelete(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	m, i := s.findMessage(c.id, p["ts"])
	if m == nil || m.Ephemeral {
		return nil, errCode("message_not_found")
	}
	if m.BotID != BotID {
		return nil, errCode("cant_delete_message")
	}
	s.messages[c.id] = slices.Delete(s.messages[c.id], i, i+1)
	return map[string]any{"channel": c.id, "ts": m.TS}, nil
}

func (s *Server) reactionsAdd(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	if p["name"] == "" {
		return nil, errCode("invalid_name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	if m, _ := s.findMessage(c.id, p["timestamp"]); m == nil {
		return nil, errCode("message_not_found")
	}
	return map[string]any{}, nil
}

func (s *Server) chatGetPermalink(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.channels[p["channel"]]; !ok {
		return nil, errCode("channel_not_found")
	}
	if m, _ := s.findMessage(p["channel"], p["message_ts"]); m == nil || m.Ephemeral {
		return nil, errCode("message_not_found")
	}
	link := "https://" + TeamDomain + ".slack.com/archives/" + p["channel"] + "/p" + strings.ReplaceAll(p["message_ts"], ".", "")
	return map[string]any{"channel": p["channel"], "permalink": link}, nil
}
