package slackfake

import (
	"encoding/json"
	"fmt"
)

// viewProblems validates a modal the way Slack's views.* methods do.
func viewProblems(doc map[string]any) []string {
	var probs []string
	if t, _ := doc["type"].(string); t != "modal" {
		probs = append(probs, fmt.Sprintf("[ERROR] unsupported view type %q", t))
	}
	for key, limit := range map[string]int{"title": 24, "submit": 24, "close": 24} {
		o, ok := doc[key].(map[string]any)
		if !ok {
			if key == "title" {
				probs = append(probs, "[ERROR] missing required field: title")
			}
			continue
		}
		if t, _ := o["text"].(string); len([]rune(t)) > limit || t == "" {
			probs = append(probs, fmt.Sprintf("[ERROR] %s text must be 1..%d characters", key, limit))
		}
	}
	probs = append(probs, viewBodyProblems(doc)...)
	if hasInputBlock(doc) && doc["submit"] == nil {
		probs = append(probs, "[ERROR] a view with input blocks needs a submit button")
	}
	return probs
}

// viewBodyProblems checks what every view type shares: metadata, callback
// id and blocks.
func viewBodyProblems(doc map[string]any) []string {
	var probs []string
	if pm, _ := doc["private_metadata"].(string); len(pm) > 3000 {
		probs = append(probs, "[ERROR] private_metadata must be at most 3000 characters")
	}
	if cb, _ := doc["callback_id"].(string); len(cb) > 255 {
		probs = append(probs, "[ERROR] callback_id must be at most 255 characters")
	}
	raw, _ := json.Marshal(doc["blocks"])
	return append(probs, validateBlocks(raw, maxViewBlocks)...)
}

func hasInputBlock(doc map[string]any) bool {
	blocks, _ := doc["blocks"].([]any)
	for _, b := range blocks {
		if m, ok := b.(map[string]any); ok && m["type"] == "input" {
			return true
		}
	}
	return false
}

// storeView creates or replaces view id with the bot's view document and
// logs the version. The caller holds s.mu.
func (s *Server) storeView(id, method, triggerID, userID string, doc map[string]any) map[string]any {
	v, ok := s.views[id]
	if !ok {
		v = &viewState{id: id, userID: userID}
		s.views[id] = v
	}
	full := map[string]any{}
	for k, val := range doc {
		full[k] = val
	}
	v.hash = s.nextID("hash-")
	if ext, _ := doc["external_id"].(string); ext != "" {
		v.externalID = ext
	}
	full["id"] = id
	full["team_id"] = TeamID
	full["app_id"] = AppID
	full["bot_id"] = BotID
	full["app_installed_team_id"] = TeamID
	full["hash"] = v.hash
	full["root_view_id"] = id
	full["previous_view_id"] = nil
	full["state"] = map[string]any{"values": map[string]any{}}
	for _, k := range []string{"private_metadata", "callback_id", "external_id"} {
		if _, ok := full[k]; !ok {
			full[k] = ""
		}
	}
	for _, k := range []string{"clear_on_close", "notify_on_close"} {
		if _, ok := full[k]; !ok {
			full[k] = false
		}
	}
	v.doc = full
	v.closed = false
	raw, _ := json.Marshal(full)
	s.viewLog = append(s.viewLog, View{ID: id, TriggerID: triggerID, UserID: v.userID, Method: method, JSON: raw, At: s.now()})
	return full
}

// useTrigger checks and consumes a trigger_id. The caller holds s.mu.
func (s *Server) useTrigger(id string) *apiError {
	t, ok := s.triggers[id]
	switch {
	case !ok:
		return errCode("invalid_trigger_id")
	case t.used:
		return errCode("exchanged_trigger_id")
	case s.now().Sub(t.issued) > s.triggerTTL:
		return errCode("expired_trigger_id")
	}
	t.used = true
	return nil
}

func decodeView(req *apiRequest) (map[string]any, *apiError) {
	raw, ok := req.params["view"]
	if !ok {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: view")
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		return nil, errCode("invalid_arguments", "[ERROR] view is not a JSON object")
	}
	if probs := viewProblems(doc); len(probs) > 0 {
		return nil, errCode("invalid_arguments", probs...)
	}
	return doc, nil
}

func (s *Server) viewsOpen(req *apiRequest) (map[string]any, *apiError) {
	doc, e := decodeView(req)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	trig := req.params["trigger_id"]
	if e := s.useTrigger(trig); e != nil {
		return nil, e
	}
	id := s.nextID("V")
	return map[string]any{"view": s.storeView(id, "views.open", trig, s.triggers[trig].userID, doc)}, nil
}

func (s *Server) viewsPush(req *apiRequest) (map[string]any, *apiError) {
	doc, e := decodeView(req)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	trig := req.params["trigger_id"]
	if e := s.useTrigger(trig); e != nil {
		return nil, e
	}
	id := s.nextID("V")
	return map[string]any{"view": s.storeView(id, "views.push", trig, s.triggers[trig].userID, doc)}, nil
}

func (s *Server) viewsUpdate(req *apiRequest) (map[string]any, *apiError) {
	doc, e := decodeView(req)
	if e != nil {
		return nil, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var v *viewState
	if id := req.params["view_id"]; id != "" {
		v = s.views[id]
	} else if ext := req.params["external_id"]; ext != "" {
		for _, cand := range s.views {
			if cand.externalID == ext {
				v = cand
			}
		}
	} else {
		return nil, errCode("invalid_arguments", "[ERROR] view_id or external_id is required")
	}
	if v == nil {
		return nil, errCode("not_found")
	}
	if h := req.params["hash"]; h != "" && h != v.hash {
		return nil, errCode("hash_conflict")
	}
	return map[string]any{"view": s.storeView(v.id, "views.update", "", v.userID, doc)}, nil
}
