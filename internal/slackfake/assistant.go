package slackfake

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// The assistant panel (Slack's "Agents & AI Apps" split view): the events
// Slack sends when a person opens it or moves beside it, and the
// assistant.threads methods, validated as documented:
//
//   - assistant.threads.setStatus: channel_id, thread_ts and status are
//     required (an empty status clears it); loading_messages holds at most 10
//     messages (a JSON array, or comma-separated as slack-go sends it).
//   - assistant.threads.setTitle: channel_id, thread_ts and title are required.
//   - assistant.threads.setSuggestedPrompts: channel_id and prompts are
//     required, thread_ts and title optional; up to four prompts, each with
//     a title and a message.
//
// A thread_ts that is not an assistant thread of the channel answers
// invalid_thread_ts; a workspace without the feature (DisableAssistant)
// answers every call with the error it was given.

// Limits of the assistant.threads methods.
const (
	maxLoadingMessages = 10
	maxPrompts         = 4
)

// AssistantPrompt is one suggested prompt.
type AssistantPrompt struct {
	Title   string `json:"title"`
	Message string `json:"message"`
}

// AssistantThread is an assistant thread as the fake holds it.
type AssistantThread struct {
	Channel, ThreadTS, User string
	// Context is the channel the person views beside the panel.
	Context string
	// Status and LoadingMessages are what setStatus last set ("" when cleared).
	Status          string
	LoadingMessages []string
	Title           string
	PromptsTitle    string
	Prompts         []AssistantPrompt
}

// assistantState is the fake's assistant panel; the Server's mu guards it.
type assistantState struct {
	threads map[string]*AssistantThread // channel:ts →
	// disabled is the error every assistant.threads call answers ("" when
	// the workspace has the feature).
	disabled string
}

func (a *assistantState) find(channel, ts string) *AssistantThread {
	return a.threads[channel+":"+ts]
}

// DisableAssistant makes the workspace one without the AI-app feature:
// every assistant.threads call answers {"ok":false,"error":code}. An empty
// code gives the feature back.
func (s *Server) DisableAssistant(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ai.disabled = code
}

// AssistantThreadAt returns the assistant thread at channel and ts.
func (s *Server) AssistantThreadAt(channel, ts string) (AssistantThread, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.ai.find(channel, ts)
	if t == nil {
		return AssistantThread{}, false
	}
	c := *t
	c.LoadingMessages = append([]string(nil), t.LoadingMessages...)
	c.Prompts = append([]AssistantPrompt(nil), t.Prompts...)
	return c, true
}

// StartAssistantThread opens the assistant panel for a user viewing
// contextChannel ("" for none), as Slack does: a new thread in the user's
// DM with the app, whose root message is the user's, and the
// assistant_thread_started event, waiting for its ack. It returns the
// thread's ts.
func (s *Server) StartAssistantThread(ctx context.Context, userID, contextChannel string) (string, error) {
	s.mu.Lock()
	dm := DMChannelID(userID)
	if _, ok := s.channels[dm]; !ok {
		s.mu.Unlock()
		return "", fmt.Errorf("slackfake: StartAssistantThread: unknown user %s", userID)
	}
	m := &Message{Channel: dm, TS: s.nextTS(), User: userID, Text: "New Assistant Thread"}
	m.ThreadTS = m.TS
	s.messages[dm] = append(s.messages[dm], m)
	if s.ai.threads == nil {
		s.ai.threads = map[string]*AssistantThread{}
	}
	s.ai.threads[dm+":"+m.TS] = &AssistantThread{Channel: dm, ThreadTS: m.TS, User: userID, Context: contextChannel}
	payload := s.eventCallback(s.assistantEvent("assistant_thread_started", dm, m.TS, userID, contextChannel))
	s.mu.Unlock()
	_, err := s.send(ctx, Envelope{Type: "events_api", Payload: payload}, nil)
	return m.TS, err
}

// ChangeAssistantContext moves the user to contextChannel while the panel
// shows the thread at ts: the assistant_thread_context_changed event,
// waiting for its ack.
func (s *Server) ChangeAssistantContext(ctx context.Context, userID, threadTS, contextChannel string) error {
	s.mu.Lock()
	dm := DMChannelID(userID)
	t := s.ai.find(dm, threadTS)
	if t == nil {
		s.mu.Unlock()
		return fmt.Errorf("slackfake: ChangeAssistantContext: no assistant thread %s of %s", threadTS, userID)
	}
	t.Context = contextChannel
	payload := s.eventCallback(s.assistantEvent("assistant_thread_context_changed", dm, threadTS, userID, contextChannel))
	s.mu.Unlock()
	_, err := s.send(ctx, Envelope{Type: "events_api", Payload: payload}, nil)
	return err
}

// assistantEvent is an assistant panel event in the documented shape. The
// caller holds s.mu.
func (s *Server) assistantEvent(typ, channel, ts, userID, contextChannel string) map[string]any {
	context := map[string]any{}
	if contextChannel != "" {
		context = map[string]any{"channel_id": contextChannel, "team_id": TeamID, "enterprise_id": nil}
	}
	return map[string]any{
		"type": typ,
		"assistant_thread": map[string]any{
			"user_id": userID, "context": context, "channel_id": channel, "thread_ts": ts,
		},
		"event_ts": s.nextTS(),
	}
}

// assistantThread resolves the thread of an assistant.threads call. The
// caller holds s.mu.
func (s *Server) assistantThread(p map[string]string, needTS bool, required ...string) (*AssistantThread, *apiError) {
	if s.ai.disabled != "" {
		return nil, errCode(s.ai.disabled)
	}
	for _, k := range required {
		if _, ok := p[k]; !ok || (p[k] == "" && k != "status") {
			return nil, errCode("invalid_arguments", "[ERROR] missing required field: "+k)
		}
	}
	if _, ok := s.channels[p["channel_id"]]; !ok {
		return nil, errCode("channel_not_found")
	}
	if !needTS && p["thread_ts"] == "" {
		return nil, nil
	}
	t := s.ai.find(p["channel_id"], p["thread_ts"])
	if t == nil {
		return nil, errCode("invalid_thread_ts")
	}
	return t, nil
}

func (s *Server) assistantSetStatus(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, e := s.assistantThread(req.params, true, "channel_id", "thread_ts", "status")
	if e != nil {
		return nil, e
	}
	loading, e := stringList(req.params["loading_messages"])
	if e != nil {
		return nil, e
	}
	if len(loading) > maxLoadingMessages {
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] no more than %d items allowed [json-pointer:/loading_messages]", maxLoadingMessages))
	}
	t.Status, t.LoadingMessages = req.params["status"], loading
	if t.Status == "" {
		t.LoadingMessages = nil
	}
	s.notifyLocked()
	return map[string]any{}, nil
}

func (s *Server) assistantSetTitle(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, e := s.assistantThread(req.params, true, "channel_id", "thread_ts", "title")
	if e != nil {
		return nil, e
	}
	t.Title = req.params["title"]
	s.notifyLocked()
	return map[string]any{}, nil
}

func (s *Server) assistantSetSuggestedPrompts(req *apiRequest) (map[string]any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, e := s.assistantThread(req.params, false, "channel_id", "prompts")
	if e != nil {
		return nil, e
	}
	var prompts []AssistantPrompt
	if err := json.Unmarshal([]byte(req.params["prompts"]), &prompts); err != nil {
		return nil, errCode("invalid_arguments", "[ERROR] prompts must be an array of objects with a title and a message")
	}
	if len(prompts) == 0 || len(prompts) > maxPrompts {
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] between 1 and %d items allowed [json-pointer:/prompts]", maxPrompts))
	}
	for i, p := range prompts {
		if strings.TrimSpace(p.Title) == "" || strings.TrimSpace(p.Message) == "" {
			return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] missing required field: title or message [json-pointer:/prompts/%d]", i))
		}
	}
	if t != nil {
		t.PromptsTitle, t.Prompts = req.params["title"], prompts
	}
	s.notifyLocked()
	return map[string]any{}, nil
}

// stringList reads an array argument: a JSON array of strings, or
// comma-separated text.
func stringList(v string) ([]string, *apiError) {
	if v == "" {
		return nil, nil
	}
	if strings.HasPrefix(strings.TrimSpace(v), "[") {
		var out []string
		if err := json.Unmarshal([]byte(v), &out); err != nil {
			return nil, errCode("invalid_arguments", "[ERROR] must be an array of strings")
		}
		return out, nil
	}
	return strings.Split(v, ","), nil
}
