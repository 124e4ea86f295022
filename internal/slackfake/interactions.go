package slackfake

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/slack-go/slack"
)

// SlashCommand is a slash command a user types. Empty TeamID, TriggerID and
// ResponseURL are filled in by the fake.
type SlashCommand struct{ Command, Text, UserID, ChannelID, TeamID, TriggerID, ResponseURL string }

// responseTarget is what a response_url posts into.
type responseTarget struct {
	channel   string
	userID    string
	messageTS string // the message an interactive response_url belongs to
	threadTS  string
}

// The caller holds s.mu.
func (s *Server) userJSON(id string) map[string]any {
	name := id
	if u, ok := s.users[id]; ok {
		name = u.name
	}
	return map[string]any{"id": id, "username": name, "name": name, "team_id": TeamID}
}

// The caller holds s.mu.
func (s *Server) channelName(id string) string {
	if c, ok := s.channels[id]; ok {
		return c.name
	}
	return ""
}

// The caller holds s.mu.
func (s *Server) newResponseURL(kind string, t responseTarget) string {
	id := s.nextID(kind + "-")
	s.responseURL[id] = t
	return s.httpSrv.URL + "/hooks/" + kind + "/" + id
}

// SlashCommand delivers a slash_commands envelope and waits for the ack. An
// ack payload with text or blocks is shown to the user like Slack does: as an
// ephemeral message, or in the channel when response_type is "in_channel".
func (s *Server) SlashCommand(ctx context.Context, cmd SlashCommand) (Ack, error) {
	s.mu.Lock()
	cmd.TeamID = cmp.Or(cmd.TeamID, TeamID)
	cmd.TriggerID = s.issueTrigger(cmd.TriggerID, cmd.UserID)
	if cmd.ResponseURL == "" {
		cmd.ResponseURL = s.newResponseURL("commands", responseTarget{channel: cmd.ChannelID, userID: cmd.UserID})
	}
	payload := map[string]any{
		"token": "fake-verification-token", "team_id": cmd.TeamID, "team_domain": TeamDomain,
		"channel_id": cmd.ChannelID, "channel_name": s.channelName(cmd.ChannelID),
		"user_id": cmd.UserID, "user_name": s.userJSON(cmd.UserID)["name"],
		"command": cmd.Command, "text": cmd.Text, "api_app_id": AppID,
		"is_enterprise_install": false, "response_url": cmd.ResponseURL, "trigger_id": cmd.TriggerID,
	}
	s.mu.Unlock()
	extra := func(a Ack) {
		s.applyResponse(a.Payload, responseTarget{channel: cmd.ChannelID, userID: cmd.UserID}, false)
	}
	return s.send(ctx, Envelope{Type: "slash_commands", Payload: payload, AcceptsResponsePayload: true}, extra)
}

// ClickButton delivers a block_actions envelope for the element actionID on
// message messageTS (inside block blockID when not empty), with a fresh
// trigger_id, and waits for the ack. value "" means the element's own value.
// It fails with ErrNoSuchMessage or ErrNoSuchAction when the message or
// element does not exist, because no user could click it.
func (s *Server) ClickButton(ctx context.Context, userID, channelID, messageTS, actionID, value, blockID string) (Ack, error) {
	return s.click(ctx, userID, channelID, messageTS, actionID, blockID, func(el, action map[string]any) error {
		if t, ok := el["text"]; ok {
			action["text"] = t
		}
		if value == "" {
			value, _ = el["value"].(string)
		}
		if value != "" {
			action["value"] = value
		}
		return nil
	})
}

// ClickFeedback delivers a block_actions envelope for a click on the
// positive (or negative) button of the feedback_buttons element actionID on
// message messageTS, in Slack's documented shape: the action's type is
// feedback_buttons, its value and text those of the button clicked, and the
// payload carries a fresh trigger_id like any block_actions. It fails with
// ErrNoSuchAction when the message has no such feedback_buttons element.
func (s *Server) ClickFeedback(ctx context.Context, userID, channelID, messageTS, actionID string, positive bool) (Ack, error) {
	side := "negative_button"
	if positive {
		side = "positive_button"
	}
	return s.click(ctx, userID, channelID, messageTS, actionID, "", func(el, action map[string]any) error {
		btn, ok := el[side].(map[string]any)
		if el["type"] != "feedback_buttons" || !ok {
			return fmt.Errorf("%w: %q on %s/%s is a %v element, not feedback_buttons", ErrNoSuchAction, actionID, channelID, messageTS, el["type"])
		}
		action["value"], action["text"] = btn["value"], btn["text"]
		return nil
	})
}

// click delivers a block_actions envelope for the element actionID on
// message messageTS; shape fills the action from the element.
func (s *Server) click(ctx context.Context, userID, channelID, messageTS, actionID, blockID string, shape func(el, action map[string]any) error) (Ack, error) {
	s.mu.Lock()
	m, _ := s.findMessage(channelID, messageTS)
	if m == nil {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %s/%s", ErrNoSuchMessage, channelID, messageTS)
	}
	el, bid, ok := findAction(m.Blocks, actionID, blockID)
	if !ok {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %q on %s/%s", ErrNoSuchAction, actionID, channelID, messageTS)
	}
	actionTS := s.nextTS()
	action := map[string]any{"action_id": actionID, "block_id": bid, "type": el["type"], "action_ts": actionTS}
	if err := shape(el, action); err != nil {
		s.mu.Unlock()
		return Ack{}, err
	}
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": channelID, "is_ephemeral": m.Ephemeral}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
	}
	target := responseTarget{channel: channelID, userID: userID, messageTS: m.TS, threadTS: m.ThreadTS}
	payload := map[string]any{
		"type": "block_actions", "user": s.userJSON(userID), "api_app_id": AppID,
		"token": "fake-verification-token", "container": container,
		"trigger_id": s.issueTrigger("", userID), "team": map[string]any{"id": TeamID, "domain": TeamDomain},
		"enterprise": nil, "is_enterprise_install": false,
		"channel":      map[string]any{"id": channelID, "name": s.channelName(channelID)},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": s.newResponseURL("actions", target),
		"actions":      []any{action},
	}
	if !m.Ephemeral {
		payload["message"] = messageJSON(m)
	}
	s.mu.Unlock()
	return s.send(ctx, Envelope{Type: "interactive", Payload: payload}, nil)
}

// SubmitView delivers a view_submission envelope for view (typically
// Views()[i].SlackView(), or any view the bot opened) with the given state
// values (block_id → action_id → value), and waits for the ack. Input blocks
// of the view that are missing from values are sent empty, as Slack does.
// After the ack the fake applies response_action like Slack: "errors" keeps
// the view open, "update"/"push" record a new view version, anything else
// closes the view.
func (s *Server) SubmitView(ctx context.Context, userID string, view slack.View, values map[string]map[string]slack.BlockAction) (Ack, error) {
	s.mu.Lock()
	doc, err := s.viewDoc(view)
	if err != nil {
		s.mu.Unlock()
		return Ack{}, err
	}
	state := map[string]any{}
	for bid, actions := range inputElementTypes(doc) {
		state[bid] = map[string]any{}
		for aid, typ := range actions {
			state[bid].(map[string]any)[aid] = map[string]any{"type": typ}
		}
	}
	for bid, actions := range values {
		if _, ok := state[bid]; !ok {
			state[bid] = map[string]any{}
		}
		for aid, act := range actions {
			raw, _ := json.Marshal(act)
			var v map[string]any
			_ = json.Unmarshal(raw, &v)
			c, _ := compact(v)
			obj, _ := c.(map[string]any)
			if obj == nil {
				obj = map[string]any{}
			}
			if _, ok := obj["type"]; !ok {
				if typ := inputElementTypes(doc)[bid][aid]; typ != "" {
					obj["type"] = typ
				}
			}
			s.fileInputState(obj)
			state[bid].(map[string]any)[aid] = obj
		}
	}
	doc["state"] = map[string]any{"values": state}
	viewID, _ := doc["id"].(string)
	payload := map[string]any{
		"type": "view_submission", "team": map[string]any{"id": TeamID, "domain": TeamDomain},
		"user": s.userJSON(userID), "api_app_id": AppID, "token": "fake-verification-token",
		"trigger_id": s.issueTrigger("", userID), "view": doc, "response_urls": []any{},
		"is_enterprise_install": false, "enterprise": nil,
	}
	s.mu.Unlock()
	extra := func(a Ack) { s.applyViewAck(viewID, userID, a.Payload) }
	return s.send(ctx, Envelope{Type: "interactive", Payload: payload, AcceptsResponsePayload: true}, extra)
}

// CloseView closes an open view as the user would. Slack only tells the app
// (a view_closed envelope) when the view was opened with notify_on_close; for
// other views CloseView returns a zero Ack and sends nothing.
func (s *Server) CloseView(ctx context.Context, userID string, view slack.View) (Ack, error) {
	s.mu.Lock()
	doc, err := s.viewDoc(view)
	if err != nil {
		s.mu.Unlock()
		return Ack{}, err
	}
	viewID, _ := doc["id"].(string)
	if v, ok := s.views[viewID]; ok {
		v.closed = true
	}
	notify, _ := doc["notify_on_close"].(bool)
	payload := map[string]any{
		"type": "view_closed", "team": map[string]any{"id": TeamID, "domain": TeamDomain},
		"user": s.userJSON(userID), "api_app_id": AppID, "token": "fake-verification-token",
		"view": doc, "is_cleared": false, "is_enterprise_install": false, "enterprise": nil,
	}
	s.mu.Unlock()
	if !notify {
		return Ack{}, nil
	}
	return s.send(ctx, Envelope{Type: "interactive", Payload: payload}, nil)
}

// viewDoc returns a copy of the stored document of view (by id), or the
// given view itself when the fake does not know it. The caller holds s.mu.
func (s *Server) viewDoc(view slack.View) (map[string]any, error) {
	if v, ok := s.views[view.ID]; ok {
		if v.closed {
			return nil, fmt.Errorf("%w: %s", ErrViewClosed, view.ID)
		}
		raw, _ := json.Marshal(v.doc)
		var doc map[string]any
		_ = json.Unmarshal(raw, &doc)
		return doc, nil
	}
	raw, err := json.Marshal(view)
	if err != nil {
		return nil, fmt.Errorf("slackfake: encoding view: %w", err)
	}
	var doc map[string]any
	_ = json.Unmarshal(raw, &doc)
	delete(doc, "ok")
	delete(doc, "error")
	return doc, nil
}

// applyViewAck applies a view_submission ack's response_action. The caller holds s.mu.
func (s *Server) applyViewAck(viewID, userID string, payload json.RawMessage) {
	v, err := (Ack{Payload: payload}).ViewSubmission()
	if err != nil {
		return
	}
	switch v.ResponseAction {
	case "errors":
		return
	case "update", "push":
		var doc map[string]any
		if json.Unmarshal(v.View, &doc) != nil {
			return
		}
		id := viewID
		if v.ResponseAction == "push" {
			id = s.nextID("V")
		}
		s.storeView(id, "ack:"+v.ResponseAction, "", userID, doc)
	default:
		if st, ok := s.views[viewID]; ok {
			st.closed = true
		}
	}
}

// PostUserMessage posts a message as a user (in a thread when threadTS is
// set), stores it, and delivers the events_api message event to the bot,
// waiting for its ack.
func (s *Server) PostUserMessage(ctx context.Context, userID, channelID, threadTS, text string) error {
	s.mu.Lock()
	if _, ok := s.channels[channelID]; !ok {
		s.mu.Unlock()
		return fmt.Errorf("slackfake: PostUserMessage: unknown channel %s", channelID)
	}
	m := &Message{Channel: channelID, TS: s.nextTS(), ThreadTS: threadTS, User: userID, Text: text}
	s.messages[channelID] = append(s.messages[channelID], m)
	event := map[string]any{
		"type": "message", "channel": channelID, "user": userID, "text": text, "ts": m.TS,
		"event_ts": m.TS, "channel_type": "channel", "team": TeamID,
		"client_msg_id": s.nextID("msg-"),
	}
	if s.channels[channelID].im {
		event["channel_type"] = "im"
		s.withActionToken(event, userID)
	}
	if threadTS != "" {
		event["thread_ts"] = threadTS
		event["parent_user_id"] = BotUserID
		if parent, _ := s.findMessage(channelID, threadTS); parent != nil {
			event["parent_user_id"] = parent.User
		}
	}
	payload := s.eventCallback(event)
	s.mu.Unlock()
	_, err := s.send(ctx, Envelope{Type: "events_api", Payload: payload}, nil)
	return err
}

// eventCallback wraps an inner event as Slack's Events API does. The
// caller holds s.mu.
func (s *Server) eventCallback(event map[string]any) map[string]any {
	return map[string]any{
		"token": "fake-verification-token", "team_id": TeamID, "api_app_id": AppID,
		"event": event, "type": "event_callback", "event_id": s.nextID("Ev"),
		"event_time": s.now().Unix(), "is_ext_shared_channel": false,
		"authorizations": []any{map[string]any{
			"team_id": TeamID, "user_id": BotUserID, "is_bot": true, "is_enterprise_install": false,
		}},
		"event_context": "fake-event-context",
	}
}

// handleResponseURL serves response_url posts (slack-go's MsgOptionResponseURL).
func (s *Server) handleResponseURL(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/hooks/"), "/")
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
	s.mu.Lock()
	call := Call{Method: "response_url", JSON: body, At: s.now(), Status: http.StatusOK,
		Params: map[string]string{"url": r.URL.Path}}
	var t responseTarget
	ok := len(parts) == 2
	if ok {
		t, ok = s.responseURL[parts[1]]
	}
	if !ok {
		call.Status, call.Error = http.StatusNotFound, "no_such_response_url"
	} else if !json.Valid(body) {
		call.Status, call.Error = http.StatusBadRequest, "invalid_payload"
	} else {
		s.applyResponse(body, t, parts[0] == "actions")
	}
	s.calls = append(s.calls, call)
	s.notifyLocked()
	s.mu.Unlock()
	switch call.Status {
	case http.StatusOK:
		writeJSON(w, http.StatusOK, 0, map[string]any{"ok": true})
	default:
		http.Error(w, call.Error, call.Status)
	}
}

// applyResponse shows a slash-command ack payload or a response_url post.
// The caller holds s.mu.
func (s *Server) applyResponse(body json.RawMessage, t responseTarget, interactive bool) {
	var msg struct {
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ResponseType    string          `json:"response_type"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
		ThreadTS        string          `json:"thread_ts"`
	}
	if len(body) == 0 || json.Unmarshal(body, &msg) != nil {
		return
	}
	if b := strings.TrimSpace(string(msg.Blocks)); b == "null" || b == "[]" {
		msg.Blocks = nil
	}
	if interactive && (msg.ReplaceOriginal || msg.DeleteOriginal) {
		orig, i := s.findMessage(t.channel, t.messageTS)
		if orig == nil {
			return
		}
		if msg.DeleteOriginal {
			s.messages[t.channel] = append(s.messages[t.channel][:i], s.messages[t.channel][i+1:]...)
			return
		}
		orig.Text, orig.Blocks = msg.Text, msg.Blocks
		orig.Updated++
		return
	}
	if msg.Text == "" && msg.Blocks == nil {
		return
	}
	threadTS := msg.ThreadTS
	threadTS = cmp.Or(threadTS, t.threadTS)
	m := &Message{Channel: t.channel, TS: s.nextTS(), ThreadTS: threadTS, User: BotUserID, BotID: BotID,
		Text: msg.Text, Blocks: msg.Blocks}
	if msg.ResponseType != "in_channel" {
		m.Ephemeral, m.ToUser = true, t.userID
	}
	s.messages[t.channel] = append(s.messages[t.channel], m)
}

// SlackView decodes the view version into slack-go's type, for SubmitView
// and CloseView.
func (v View) SlackView() slack.View {
	var out slack.View
	_ = json.Unmarshal(v.JSON, &out)
	return out
}
