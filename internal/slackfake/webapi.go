package slackfake

// The Web API's front door: decoding a call, the method table, the token
// check, scripted failures and the JSON answer; and the identity methods
// (apps.connections.open, auth.test, bots.info).

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
		status = cmp.Or(status, http.StatusOK)
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
