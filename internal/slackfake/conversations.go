package slackfake

// Channels and users as the bot reads them: conversations.info, .join,
// .replies and .history, and users.info.

import (
	"cmp"
	"strconv"
	"time"
)

func (s *Server) conversationsInfo(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[req.params["channel"]]
	if !ok {
		return nil, errCode("channel_not_found")
	}
	return map[string]any{"channel": channelJSON(c)}, nil
}

func channelJSON(c *channel) map[string]any {
	out := map[string]any{
		"id": c.id, "is_channel": !c.im, "is_im": c.im, "is_private": false,
		"is_member": c.member, "is_archived": false, "context_team_id": TeamID,
	}
	if c.im {
		out["user"] = c.name
	} else {
		out["name"] = c.name
		out["name_normalized"] = c.name
	}
	return out
}

func (s *Server) conversationsJoin(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[req.params["channel"]]
	if !ok {
		return nil, errCode("channel_not_found")
	}
	if c.im {
		return nil, errCode("method_not_supported_for_channel_type")
	}
	out := map[string]any{}
	if c.member {
		out["warning"] = "already_in_channel"
		out["response_metadata"] = map[string]any{"warnings": []string{"already_in_channel"}}
	}
	c.member = true
	out["channel"] = channelJSON(c)
	return out, nil
}

func (s *Server) usersInfo(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	u, ok := s.users[req.params["user"]]
	now := s.now()
	s.mu.Unlock()
	if !ok {
		return nil, errCode("user_not_found")
	}
	tz, label, offset := u.tz, "", 0
	tz = cmp.Or(tz, "UTC")
	if loc, err := time.LoadLocation(tz); err == nil {
		label, offset = now.In(loc).Zone()
	}
	return map[string]any{"user": map[string]any{
		"id": u.id, "team_id": TeamID, "name": u.name, "real_name": u.name,
		"tz": tz, "tz_label": label, "tz_offset": offset, "is_bot": false, "deleted": false,
		"is_admin": u.admin, "is_owner": false, "is_primary_owner": false,
		"profile": map[string]any{"real_name": u.name, "display_name": u.name, "team": TeamID},
	}}, nil
}

// readable refuses to read a channel the fake does not know or the bot is
// not in, with Slack's error codes.
func (s *Server) readable(channel string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch c, ok := s.channels[channel]; {
	case !ok:
		return errCode("channel_not_found")
	case !c.member:
		return errCode("not_in_channel")
	}
	return nil
}

// conversationsReplies returns a whole thread (no pagination), ephemeral
// messages excluded as Slack does.
func (s *Server) conversationsReplies(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	if err := s.readable(p["channel"]); err != nil {
		return nil, err
	}
	withMeta := boolParam(p, "include_all_metadata")
	var msgs []map[string]any
	for _, m := range s.Thread(p["channel"], p["ts"]) {
		// oldest (exclusive) bounds the replies; the parent always comes first.
		if !m.Ephemeral && (m.TS == p["ts"] || p["oldest"] == "" || tsLess(p["oldest"], m.TS)) {
			msgs = append(msgs, messageJSONWith(&m, withMeta != nil && *withMeta))
		}
	}
	if len(msgs) == 0 {
		return nil, errCode("thread_not_found")
	}
	return map[string]any{"messages": msgs, "has_more": false}, nil
}

// conversationsHistory lists a conversation's messages (not the replies
// in threads), newest first, between oldest and latest (exclusive), at
// most limit (default 100) of them, with has_more as Slack answers it;
// metadata only with include_all_metadata=true.
func (s *Server) conversationsHistory(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	if err := s.readable(p["channel"]); err != nil {
		return nil, err
	}
	limit := 100
	if n, err := strconv.Atoi(p["limit"]); err == nil && n > 0 {
		limit = min(n, 999)
	}
	withMeta := boolParam(p, "include_all_metadata")
	all := s.Messages(p["channel"])
	msgs := []map[string]any{}
	more := false
	for i := len(all) - 1; i >= 0; i-- {
		m := all[i]
		if m.Ephemeral || (m.ThreadTS != "" && m.ThreadTS != m.TS) ||
			(p["oldest"] != "" && !tsLess(p["oldest"], m.TS)) || (p["latest"] != "" && !tsLess(m.TS, p["latest"])) {
			continue
		}
		if len(msgs) == limit {
			more = true
			break
		}
		msgs = append(msgs, messageJSONWith(&m, withMeta != nil && *withMeta))
	}
	return map[string]any{"messages": msgs, "has_more": more, "pin_count": 0}, nil
}
