package slackfake

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Streamed messages (Slack's chat streaming for AI apps), validated as
// Slack documents them (docs.slack.dev/reference/methods/chat.startStream,
// chat.appendStream, chat.stopStream):
//
//   - chat.startStream: channel and thread_ts are required ("streamed
//     messages should always be replies to a user request");
//     recipient_user_id and recipient_team_id are required when streaming
//     to a channel (not a DM); task_display_mode is "timeline" (the
//     default) or "plan"; markdown_text is at most 12,000 characters.
//   - chat.appendStream: channel, ts and markdown_text or chunks; the
//     message must be a stream still open (message_not_in_streaming_state).
//   - chat.stopStream: channel and ts, optional markdown_text, chunks and
//     blocks; a stream already stopped answers
//     message_not_in_streaming_state.
//   - chunks is a JSON array of chunk objects: markdown_text {text},
//     task_update {id, title, status ∈ pending|in_progress|complete|error,
//     details?, output?, sources? [{type:"url", url, text}]}, plan_update
//     {title} and blocks {blocks}. Anything else is invalid_chunks.
//   - chat.update of a message that is still streaming answers
//     streaming_state_conflict (measured by others against Slack; not in its
//     documentation).
//
// A task_update sets the task's title and status and, when given, its
// details, output and sources; tasks keep the order they first appeared in.
// A workspace without the AI-app feature (DisableStreaming) answers every
// streaming call with the error it was given.

// Limits of the streaming methods.
const maxStreamMarkdown = 12000

// StreamTask is one task of a streamed message, as the fake holds it.
type StreamTask struct {
	ID, Title, Status, Details, Output string
	Sources                            []StreamSource
	// Updates counts the task_update chunks applied to it.
	Updates int
}

// StreamSource is a URL source of a task.
type StreamSource struct {
	Type, URL, Text string
}

// Stream is a streamed message as the fake holds it.
type Stream struct {
	Channel, TS, ThreadTS                      string
	RecipientUserID, RecipientTeamID, TaskMode string
	Open                                       bool
	PlanTitle                                  string
	Tasks                                      []StreamTask
	// Markdown is every markdown_text appended, in order.
	Markdown string
	// Appends counts chat.appendStream calls applied to it.
	Appends int
	// StoppedWithContent is whether the stop call carried chunks or text.
	StoppedWithContent bool
}

// Task returns the task with id.
func (st Stream) Task(id string) (StreamTask, bool) {
	for _, t := range st.Tasks {
		if t.ID == id {
			return t, true
		}
	}
	return StreamTask{}, false
}

// streamState is the fake's streamed messages; the Server's mu guards it.
type streamState struct {
	byKey map[string]*Stream // channel:ts →
	order []string
	// disabled is the error every streaming call answers ("" when the
	// workspace has the feature).
	disabled string
}

// DisableStreaming makes the workspace one whose plan has no AI-app
// streaming: every chat.startStream/appendStream/stopStream answers
// {"ok":false,"error":code}. An empty code gives the feature back.
func (s *Server) DisableStreaming(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streams.disabled = code
}

// ExpireStream ends the stream at channel/ts as Slack does by itself (a
// stream lives a few minutes): later appends and stops answer
// message_not_in_streaming_state.
func (s *Server) ExpireStream(channel, ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams.byKey[channel+":"+ts]
	if st == nil {
		return false
	}
	st.Open = false
	s.notifyLocked()
	return true
}

// Streams returns every streamed message, oldest first.
func (s *Server) Streams() []Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Stream, 0, len(s.streams.order))
	for _, k := range s.streams.order {
		out = append(out, copyStream(s.streams.byKey[k]))
	}
	return out
}

// StreamAt returns the streamed message at channel and ts.
func (s *Server) StreamAt(channel, ts string) (Stream, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.streams.byKey[channel+":"+ts]
	if st == nil {
		return Stream{}, false
	}
	return copyStream(st), true
}

func copyStream(st *Stream) Stream {
	c := *st
	c.Tasks = make([]StreamTask, len(st.Tasks))
	for i, t := range st.Tasks {
		t.Sources = slices.Clone(t.Sources)
		c.Tasks[i] = t
	}
	return c
}

// streamChunk is one chunk as sent.
type streamChunk struct {
	Type    string          `json:"type"`
	Text    *string         `json:"text"`
	ID      string          `json:"id"`
	Title   *string         `json:"title"`
	Status  string          `json:"status"`
	Details *string         `json:"details"`
	Output  *string         `json:"output"`
	Sources []StreamSource  `json:"sources"`
	Blocks  json.RawMessage `json:"blocks"`
}

// parseChunks validates a chunks argument.
func parseChunks(v string) ([]streamChunk, *apiError) {
	if v == "" {
		return nil, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal([]byte(v), &raw); err != nil {
		return nil, errCode("invalid_chunks", "[ERROR] chunks must be an array of objects")
	}
	out := make([]streamChunk, 0, len(raw))
	bad := func(i int, why string) *apiError {
		return errCode("invalid_chunks", fmt.Sprintf("[ERROR] %s [json-pointer:/chunks/%d]", why, i))
	}
	for i, r := range raw {
		var c streamChunk
		if err := json.Unmarshal(r, &c); err != nil {
			return nil, bad(i, "must be an object")
		}
		switch c.Type {
		case "markdown_text":
			if c.Text == nil {
				return nil, bad(i, "missing required field: text")
			}
			if utf8.RuneCountInString(*c.Text) > maxStreamMarkdown {
				return nil, bad(i, fmt.Sprintf("must be at most %d characters", maxStreamMarkdown))
			}
		case "task_update":
			if strings.TrimSpace(c.ID) == "" || c.Title == nil || strings.TrimSpace(*c.Title) == "" {
				return nil, bad(i, "missing required field: id or title")
			}
			switch c.Status {
			case "pending", "in_progress", "complete", "error":
			default:
				return nil, bad(i, "status must be one of pending, in_progress, complete, error")
			}
			for j, src := range c.Sources {
				if src.Type != "url" || !strings.HasPrefix(src.URL, "http") || strings.TrimSpace(src.Text) == "" {
					return nil, bad(i, fmt.Sprintf("sources/%d must be a url source with url and text", j))
				}
			}
		case "plan_update":
			if c.Title == nil || strings.TrimSpace(*c.Title) == "" {
				return nil, bad(i, "missing required field: title")
			}
		case "blocks":
			if probs := validateBlocks(c.Blocks, maxMessageBlocks); len(probs) > 0 {
				return nil, errCode("invalid_blocks", probs...)
			}
		default:
			return nil, bad(i, "unknown chunk type "+fmt.Sprintf("%q", c.Type))
		}
		out = append(out, c)
	}
	return out, nil
}

// apply applies chunks and markdown text to st. The caller holds s.mu.
func (st *Stream) apply(chunks []streamChunk, markdown string) {
	st.Markdown += markdown
	for _, c := range chunks {
		switch c.Type {
		case "markdown_text":
			st.Markdown += *c.Text
		case "plan_update":
			st.PlanTitle = *c.Title
		case "task_update":
			i := slices.IndexFunc(st.Tasks, func(t StreamTask) bool { return t.ID == c.ID })
			if i < 0 {
				st.Tasks = append(st.Tasks, StreamTask{ID: c.ID})
				i = len(st.Tasks) - 1
			}
			t := &st.Tasks[i]
			t.Title, t.Status = *c.Title, c.Status
			if c.Details != nil {
				t.Details = *c.Details
			}
			if c.Output != nil {
				t.Output = *c.Output
			}
			if c.Sources != nil {
				t.Sources = slices.Clone(c.Sources)
			}
			t.Updates++
		}
	}
}

// streamContent validates markdown_text and chunks of a streaming call.
func streamContent(p map[string]string) (string, []streamChunk, *apiError) {
	md := p["markdown_text"]
	if utf8.RuneCountInString(md) > maxStreamMarkdown {
		return "", nil, errCode("msg_too_long")
	}
	chunks, e := parseChunks(p["chunks"])
	return md, chunks, e
}

// openStream finds the open stream of a chat.appendStream/stopStream call.
// The caller holds s.mu.
func (s *Server) openStream(p map[string]string) (*Stream, *apiError) {
	if s.streams.disabled != "" {
		return nil, errCode(s.streams.disabled)
	}
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	if p["ts"] == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: ts")
	}
	st := s.streams.byKey[c.id+":"+p["ts"]]
	if st == nil {
		if m, _ := s.findMessage(c.id, p["ts"]); m != nil {
			return nil, errCode("message_not_in_streaming_state")
		}
		return nil, errCode("message_not_found")
	}
	if !st.Open {
		return nil, errCode("message_not_in_streaming_state")
	}
	return st, nil
}

func (s *Server) chatStartStream(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams.disabled != "" {
		return nil, errCode(s.streams.disabled)
	}
	c, e := s.postable(p["channel"])
	if e != nil {
		return nil, e
	}
	if p["thread_ts"] == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: thread_ts")
	}
	if !c.im {
		if p["recipient_user_id"] == "" {
			return nil, errCode("missing_recipient_user_id")
		}
		if p["recipient_team_id"] == "" {
			return nil, errCode("missing_recipient_team_id")
		}
	}
	mode := p["task_display_mode"]
	switch mode {
	case "":
		mode = "timeline"
	case "timeline", "plan":
	default:
		return nil, errCode("invalid_arguments", "[ERROR] task_display_mode must be timeline or plan")
	}
	md, chunks, e := streamContent(p)
	if e != nil {
		return nil, e
	}
	m := &Message{Channel: c.id, TS: s.nextTS(), ThreadTS: p["thread_ts"], User: BotUserID, BotID: BotID}
	st := &Stream{Channel: c.id, TS: m.TS, ThreadTS: m.ThreadTS, RecipientUserID: p["recipient_user_id"], RecipientTeamID: p["recipient_team_id"], TaskMode: mode, Open: true}
	st.apply(chunks, md)
	m.Text = st.Markdown
	s.messages[c.id] = append(s.messages[c.id], m)
	if s.streams.byKey == nil {
		s.streams.byKey = map[string]*Stream{}
	}
	s.streams.byKey[c.id+":"+m.TS] = st
	s.streams.order = append(s.streams.order, c.id+":"+m.TS)
	s.notifyLocked()
	return map[string]any{"channel": c.id, "ts": m.TS}, nil
}

func (s *Server) chatAppendStream(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	s.mu.Lock()
	defer s.mu.Unlock()
	st, e := s.openStream(p)
	if e != nil {
		return nil, e
	}
	md, chunks, e := streamContent(p)
	if e != nil {
		return nil, e
	}
	if md == "" && len(chunks) == 0 {
		return nil, errCode("no_text")
	}
	st.apply(chunks, md)
	st.Appends++
	s.syncStreamText(st)
	s.notifyLocked()
	return map[string]any{"channel": st.Channel, "ts": st.TS}, nil
}

func (s *Server) chatStopStream(req *apiRequest) (map[string]any, *apiError) {
	p := req.params
	s.mu.Lock()
	defer s.mu.Unlock()
	st, e := s.openStream(p)
	if e != nil {
		return nil, e
	}
	md, chunks, e := streamContent(p)
	if e != nil {
		return nil, e
	}
	if b := p["blocks"]; b != "" {
		if probs := validateBlocks([]byte(b), maxMessageBlocks); len(probs) > 0 {
			return nil, errCode("invalid_blocks", probs...)
		}
	}
	st.apply(chunks, md)
	st.StoppedWithContent = md != "" || len(chunks) > 0
	st.Open = false
	s.syncStreamText(st)
	s.notifyLocked()
	return map[string]any{"channel": st.Channel, "ts": st.TS}, nil
}

// syncStreamText keeps the stream's message text its Markdown. The caller
// holds s.mu.
func (s *Server) syncStreamText(st *Stream) {
	if m, _ := s.findMessage(st.Channel, st.TS); m != nil {
		m.Text = st.Markdown
	}
}

// streamingConflict is chat.update's answer for a message still streaming,
// or nil. The caller holds s.mu.
func (s *Server) streamingConflict(channel, ts string) *apiError {
	if st := s.streams.byKey[channel+":"+ts]; st != nil && st.Open {
		return errCode("streaming_state_conflict")
	}
	return nil
}
