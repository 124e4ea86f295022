package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// apiRequest is a decoded Web API call.
type apiRequest struct {
	method string
	token  string
	params map[string]string
	json   json.RawMessage
}

// apiError is a Slack error code with optional response_metadata messages.
type apiError struct {
	code     string
	messages []string
}

func errCode(code string, messages ...string) *apiError {
	return &apiError{code: code, messages: messages}
}

type apiHandler func(req *apiRequest) (map[string]any, *apiError)

func (s *Server) handlers() map[string]apiHandler {
	return map[string]apiHandler{
		"apps.connections.open":        s.appsConnectionsOpen,
		"auth.test":                    s.authTest,
		"bots.info":                    s.botsInfo,
		"chat.postMessage":             s.chatPostMessage,
		"chat.update":                  s.chatUpdate,
		"chat.postEphemeral":           s.chatPostEphemeral,
		"chat.delete":                  s.chatDelete,
		"views.open":                   s.viewsOpen,
		"views.update":                 s.viewsUpdate,
		"views.push":                   s.viewsPush,
		"views.publish":                s.viewsPublish,
		"conversations.info":           s.conversationsInfo,
		"conversations.join":           s.conversationsJoin,
		"users.info":                   s.usersInfo,
		"files.getUploadURLExternal":   s.filesGetUploadURLExternal,
		"files.completeUploadExternal": s.filesCompleteUploadExternal,
		"files.delete":                 s.filesDelete,
		"files.info":                   s.filesInfo, // files_share.go
		"reactions.add":                s.reactionsAdd,
		"chat.getPermalink":            s.chatGetPermalink,
		"conversations.replies":        s.conversationsReplies,
		"conversations.history":        s.conversationsHistory,
		// assistant.go
		"assistant.threads.setStatus":           s.assistantSetStatus,
		"assistant.threads.setTitle":            s.assistantSetTitle,
		"assistant.threads.setSuggestedPrompts": s.assistantSetSuggestedPrompts,
		// stream.go
		"chat.startStream":  s.chatStartStream,
		"chat.appendStream": s.chatAppendStream,
		"chat.stopStream":   s.chatStopStream,
		// search_context.go
		"assistant.search.context": s.assistantSearchContext,
	}
}

const maxBody = 8 << 20

func decodeRequest(r *http.Request) (*apiRequest, error) {
	req := &apiRequest{method: strings.TrimPrefix(r.URL.Path, "/api/"), params: map[string]string{}}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return nil, err
	}
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case ctype == "application/json":
		req.json = body
		if len(body) > 0 {
			var top map[string]json.RawMessage
			if err := json.Unmarshal(body, &top); err != nil {
				return nil, fmt.Errorf("invalid JSON body: %w", err)
			}
			for k, v := range top {
				var str string
				if json.Unmarshal(v, &str) == nil {
					req.params[k] = str
				} else {
					req.params[k] = string(v)
				}
			}
		}
	default:
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, fmt.Errorf("invalid form body: %w", err)
		}
		for k, v := range r.URL.Query() {
			vals[k] = append(vals[k], v...)
		}
		for k, v := range vals {
			if len(v) > 0 {
				req.params[k] = v[0]
			}
		}
	}
	if auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && auth != "" {
		req.token = auth
	} else {
		req.token = req.params["token"]
	}
	delete(req.params, "token")
	return req, nil
}

func (s *Server) handleAPI(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	req, err := decodeRequest(r)
	if err != nil {
		writeJSON(w, http.StatusOK, 0, map[string]any{"ok": false, "error": "invalid_form_data"})
		return
	}
	call := Call{Method: req.method, Token: req.token, Params: req.params, JSON: req.json}

	s.mu.Lock()
	call.At = s.now()
	var scripted *Reply
	if q := s.failures[req.method]; len(q) > 0 {
		f := q[0]
		s.failures[req.method] = q[1:]
		switch {
		case f.needed != "" || f.provided != "":
			call.Error = f.slackErr
			scripted = &Reply{Body: map[string]any{"ok": false, "error": f.slackErr, "needed": f.needed, "provided": f.provided}}
		case f.slackErr != "":
			scripted = &Reply{Error: f.slackErr}
		default:
			scripted = &Reply{Status: http.StatusTooManyRequests, RetryAfter: f.retryAfter, Error: "ratelimited"}
		}
	}
	hook := s.hook
	s.mu.Unlock()

	if scripted == nil && hook != nil {
		scripted = hook(Call{Method: call.Method, Token: call.Token, Params: cloneMap(call.Params), JSON: call.JSON, At: call.At})
	}
	if scripted != nil && scripted.Lost {
		_, apiErr := s.dispatch(req)
		if apiErr != nil {
			call.Error = apiErr.code
		}
		call.Status = http.StatusBadGateway
		s.record(call)
		writeJSON(w, http.StatusBadGateway, 0, map[string]any{"ok": false, "error": "answer_lost"})
		return
	}
	if scripted != nil {
		status := scripted.Status
		if status == 0 {
			status = http.StatusOK
		}
		body := any(scripted.Body)
		if scripted.Error != "" || body == nil {
			body = map[string]any{"ok": scripted.Error == "", "error": scripted.Error}
			call.Error = scripted.Error
		}
		call.Status = status
		s.record(call)
		writeJSON(w, status, scripted.RetryAfter, body)
		return
	}

	resp, apiErr := s.dispatch(req)
	call.Status = http.StatusOK
	if apiErr != nil {
		call.Error = apiErr.code
		resp = map[string]any{"ok": false, "error": apiErr.code}
		if len(apiErr.messages) > 0 {
			resp["response_metadata"] = map[string]any{"messages": apiErr.messages}
		}
	} else {
		resp["ok"] = true
	}
	s.record(call)
	writeJSON(w, http.StatusOK, 0, resp)
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
}

func (s *Server) dispatch(req *apiRequest) (map[string]any, *apiError) {
	h, ok := s.handlers()[req.method]
	if !ok {
		return nil, errCode("unknown_method")
	}
	if e := s.authorize(req); e != nil {
		return nil, e
	}
	return h(req)
}

// authorize checks the token type and value the way Slack does.
func (s *Server) authorize(req *apiRequest) *apiError {
	if req.token == "" {
		return errCode("not_authed")
	}
	wantApp := req.method == "apps.connections.open"
	isApp := strings.HasPrefix(req.token, "xapp-")
	switch {
	case wantApp && !isApp, !wantApp && isApp:
		return errCode("not_allowed_token_type")
	case wantApp && req.token != s.appToken, !wantApp && req.token != s.botToken:
		return errCode("invalid_auth")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status, retryAfter int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if retryAfter > 0 || status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) appsConnectionsOpen(*apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ticket := s.nextID("ticket-")
	s.tickets[ticket] = true
	u := strings.Replace(s.httpSrv.URL, "http://", "ws://", 1) + "/link/?ticket=" + ticket + "&app_id=" + AppID
	return map[string]any{"url": u}, nil
}

func (s *Server) authTest(*apiRequest) (map[string]any, *apiError) {
	return map[string]any{
		"url": "https://" + TeamDomain + ".slack.com/", "team": "Fake Team", "user": "researchbot",
		"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID, "is_enterprise_install": false,
	}, nil
}

func (s *Server) botsInfo(req *apiRequest) (map[string]any, *apiError) {
	if id := req.params["bot"]; id != "" && id != BotID {
		return nil, errCode("bot_not_found")
	}
	return map[string]any{"bot": map[string]any{
		"id": BotID, "deleted": false, "name": "researchbot", "updated": 1700000000,
		"app_id": AppID, "user_id": BotUserID, "icons": map[string]any{},
	}}, nil
}

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
	if tz == "" {
		tz = "UTC"
	}
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

func (s *Server) filesGetUploadURLExternal(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	if p["filename"] == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: filename")
	}
	n, err := strconv.Atoi(p["length"])
	if err != nil || n <= 0 {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: length")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextID("F")
	s.files[id] = &File{ID: id, Name: p["filename"], DeclaredLength: n}
	s.fileOrder = append(s.fileOrder, id)
	return map[string]any{"upload_url": s.httpSrv.URL + "/upload/" + id, "file_id": id}, nil
}

// handleUpload receives the file body POSTed to an upload_url (multipart
// "file" field as slack-go sends it, or a raw body).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	var content []byte
	ctype, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ctype == "multipart/form-data" {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, "missing file field", http.StatusBadRequest)
			return
		}
		content, err = io.ReadAll(io.LimitReader(f, maxBody))
		_ = f.Close()
		if err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
	} else {
		var err error
		if content, err = io.ReadAll(io.LimitReader(r.Body, maxBody)); err != nil {
			http.Error(w, "read error", http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	f, ok := s.files[id]
	if ok {
		f.Content = content
	}
	s.calls = append(s.calls, Call{Method: "upload", Token: strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "),
		Params: map[string]string{"file_id": id}, At: s.now(), Status: http.StatusOK})
	s.notifyLocked()
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = fmt.Fprintf(w, "OK - %d", len(content))
}

func (s *Server) filesCompleteUploadExternal(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	var summaries []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p["files"]), &summaries); err != nil || len(summaries) == 0 {
		return nil, errCode("invalid_arguments", "[ERROR] files must be a JSON array")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	chID := p["channel_id"]
	if chID == "" {
		chID, _, _ = strings.Cut(p["channels"], ",")
	}
	var c *channel
	if chID != "" {
		var e *apiError
		if c, e = s.postable(chID); e != nil {
			return nil, e
		}
	}
	out := make([]map[string]any, 0, len(summaries))
	ids := make([]string, 0, len(summaries))
	for _, sum := range summaries {
		f, ok := s.files[sum.ID]
		if !ok || f.Content == nil {
			return nil, errCode("file_not_found")
		}
		f.Title = sum.Title
		if f.Title == "" {
			f.Title = f.Name
		}
		f.ThreadTS = p["thread_ts"]
		f.InitialComment = p["initial_comment"]
		f.Completed = true
		if c != nil {
			f.Channel = c.id
		}
		out = append(out, map[string]any{"id": f.ID, "title": f.Title})
		ids = append(ids, f.ID)
	}
	if c != nil {
		m := &Message{Channel: c.id, TS: s.nextTS(), ThreadTS: p["thread_ts"], User: BotUserID, BotID: BotID,
			Text: p["initial_comment"], FileIDs: ids}
		if b := p["blocks"]; b != "" {
			m.Blocks = json.RawMessage(b)
		}
		s.messages[c.id] = append(s.messages[c.id], m)
	}
	return map[string]any{"files": out}, nil
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

// conversationsReplies returns a whole thread (no pagination), ephemeral
// messages excluded as Slack does.
func (s *Server) conversationsReplies(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	s.mu.Lock()
	c, ok := s.channels[p["channel"]]
	member := ok && c.member
	s.mu.Unlock()
	if !ok {
		return nil, errCode("channel_not_found")
	}
	if !member {
		return nil, errCode("not_in_channel")
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
	s.mu.Lock()
	c, ok := s.channels[p["channel"]]
	member := ok && c.member
	s.mu.Unlock()
	if !ok {
		return nil, errCode("channel_not_found")
	}
	if !member {
		return nil, errCode("not_in_channel")
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
