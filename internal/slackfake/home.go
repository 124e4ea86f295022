package slackfake

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/slack-go/slack"
)

// homeProblems validates an App Home view the way views.publish does.
func homeProblems(doc map[string]any) []string {
	var probs []string
	if t, _ := doc["type"].(string); t != "home" {
		probs = append(probs, fmt.Sprintf("[ERROR] views.publish takes a home view, not %q", t))
	}
	if hasInputBlock(doc) {
		probs = append(probs, "[ERROR] a home view cannot have input blocks")
	}
	return append(probs, viewBodyProblems(doc)...)
}

// viewsPublish publishes a user's App Home: one home view per user, kept
// under its id across publishes, hash-checked like Slack.
func (s *Server) viewsPublish(req *apiRequest) (map[string]any, *apiError) {
	user := req.params["user_id"]
	raw, ok := req.params["view"]
	if !ok {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: view")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, errCode("invalid_arguments", "[ERROR] view is not a JSON object")
	}
	if probs := homeProblems(doc); len(probs) > 0 {
		return nil, errCode("invalid_arguments", probs...)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, known := s.users[user]; !known {
		return nil, errCode("user_not_found")
	}
	id, ok := s.homes[user]
	if !ok {
		id = s.nextID("VH")
		s.homes[user] = id
	} else if h := req.params["hash"]; h != "" && h != s.views[id].hash {
		return nil, errCode("hash_conflict")
	}
	return map[string]any{"view": s.storeView(id, "views.publish", "", user, doc)}, nil
}

// Home returns the App Home view last published for a user.
func (s *Server) Home(userID string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.homes[userID]
	if !ok {
		return View{}, false
	}
	for i := len(s.viewLog) - 1; i >= 0; i-- {
		if s.viewLog[i].ID == id {
			return s.viewLog[i], true
		}
	}
	return View{}, false
}

// SetAdmin marks a user registered with AddUser as a workspace admin (or
// not), as users.info reports it.
func (s *Server) SetAdmin(userID string, admin bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.users[userID]
	u.admin = admin
	s.users[userID] = u
}

// OpenHome delivers the app_home_opened event a user causes by opening the
// app's Home tab, and waits for its ack.
func (s *Server) OpenHome(ctx context.Context, userID string) error {
	s.mu.Lock()
	ts := s.nextTS()
	event := map[string]any{"type": "app_home_opened", "user": userID, "channel": DMChannelID(userID), "tab": "home", "event_ts": ts}
	if id, ok := s.homes[userID]; ok {
		event["view"] = s.views[id].doc
	}
	payload := s.eventCallback(event)
	s.mu.Unlock()
	_, err := s.send(ctx, Envelope{Type: "events_api", Payload: payload}, nil)
	return err
}

// ClickViewButton delivers the block_actions envelope of a click on the
// element actionID (with value, "" for the element's own) in a view the
// user sees: their App Home or an open modal. It fails with ErrNoSuchAction
// when the view has no such element.
func (s *Server) ClickViewButton(ctx context.Context, userID string, view slack.View, actionID, value string) (Ack, error) {
	s.mu.Lock()
	doc, err := s.viewDoc(view)
	if err != nil {
		s.mu.Unlock()
		return Ack{}, err
	}
	blocksRaw, _ := json.Marshal(doc["blocks"])
	var blocks []map[string]any
	_ = json.Unmarshal(blocksRaw, &blocks)
	el, bid, ok := findActionWithValue(blocks, actionID, value)
	if !ok {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("%w: %q (value %q) in view %v", ErrNoSuchAction, actionID, value, doc["id"])
	}
	action := map[string]any{"action_id": actionID, "block_id": bid, "type": el["type"], "action_ts": s.nextTS()}
	if t, ok := el["text"]; ok {
		action["text"] = t
	}
	if v, _ := el["value"].(string); v != "" {
		action["value"] = v
	}
	viewType, _ := doc["type"].(string)
	payload := map[string]any{
		"type": "block_actions", "user": s.userJSON(userID), "api_app_id": AppID,
		"token": "fake-verification-token", "container": map[string]any{"type": "view", "view_id": doc["id"]},
		"trigger_id": s.issueTrigger("", userID), "team": map[string]any{"id": TeamID, "domain": TeamDomain},
		"enterprise": nil, "is_enterprise_install": false, "view": doc,
		"state":   map[string]any{"values": map[string]any{}},
		"actions": []any{action},
	}
	if viewType == "modal" {
		payload["response_urls"] = []any{}
	}
	s.mu.Unlock()
	return s.send(ctx, Envelope{Type: "interactive", Payload: payload}, nil)
}

// findActionWithValue finds an interactive element by action id and, when
// value is set, by its value (App Home buttons share action ids).
func findActionWithValue(blocks []map[string]any, actionID, value string) (map[string]any, string, bool) {
	for _, b := range blocks {
		bid, _ := b["block_id"].(string)
		var els []any
		if e, ok := b["elements"].([]any); ok {
			els = e
		}
		if acc, ok := b["accessory"].(map[string]any); ok {
			els = append(els, acc)
		}
		for _, e := range els {
			el, ok := e.(map[string]any)
			if !ok || el["action_id"] != actionID {
				continue
			}
			if v, _ := el["value"].(string); value == "" || v == value {
				return el, bid, true
			}
		}
	}
	return nil, "", false
}
