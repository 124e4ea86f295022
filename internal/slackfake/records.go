package slackfake

// What the fake records of what the bot did (calls, messages, views, files,
// acks), the accessors tests read it with, and the copies they get.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Call is one recorded Web API call (or response_url post, with Method
// "response_url").
type Call struct {
	Method string
	// Token is the token the call authenticated with (Authorization header
	// or the form "token" field).
	Token string
	// Params are the form fields, or the top-level fields of a JSON body
	// (strings as they are, other values as JSON text). "token" is removed.
	Params map[string]string
	// JSON is the raw body when the call was sent as JSON.
	JSON json.RawMessage
	At   time.Time
	// Status is the HTTP status answered; Error the Slack error code ("" when ok).
	Status int
	Error  string
}

// Message is a message as the fake currently holds it.
type Message struct {
	Channel, TS, ThreadTS, User, Text string
	Blocks                            json.RawMessage
	Ephemeral                         bool
	// ToUser is the only viewer of an ephemeral message.
	ToUser                   string
	UnfurlLinks, UnfurlMedia *bool
	// Updated counts chat.update calls applied to the message.
	Updated int
	// FileIDs are the files shared with the message (files.completeUploadExternal).
	FileIDs []string
	// BotID is set on messages the bot posted.
	BotID string
	// Metadata is the message metadata chat.postMessage was given
	// ({"event_type":…,"event_payload":{…}}), nil when none. Slack returns
	// it from conversations.history and conversations.replies only when
	// they are asked with include_all_metadata=true.
	Metadata json.RawMessage
}

// View is one version of a modal: opened by views.open, replaced by
// views.update or by a view_submission ack with response_action update/push.
type View struct {
	ID        string
	TriggerID string
	// UserID is the user the modal is shown to (from the trigger_id).
	UserID string
	// Method is "views.open", "views.update", "views.push", "views.publish"
	// (an App Home), "ack:update" or "ack:push".
	Method string
	// JSON is the full view as Slack returns it (id, hash, state, and the
	// fields the bot sent).
	JSON json.RawMessage
	At   time.Time
}

// File is an uploaded file.
type File struct {
	ID, Name, Title string
	Content         []byte
	// DeclaredLength is the "length" sent to files.getUploadURLExternal.
	DeclaredLength int
	Channel        string
	ThreadTS       string
	InitialComment string
	Completed      bool
	// User, Mimetype and Filetype describe a file a person uploaded
	// (UploadUserFile): who, and what Slack detected it to be.
	User, Mimetype, Filetype string
	Created                  int64
}

// Ack is the client's acknowledgement of one envelope.
type Ack struct {
	EnvelopeID string
	// Type is the envelope type it acknowledged ("" when the envelope id was unknown).
	Type    string
	Payload json.RawMessage
	// Latency is the time from sending the envelope to receiving the ack.
	Latency time.Duration
	// Conn is the connection the envelope was sent on and acked over,
	// numbered from 1 in the order connections opened (as Connections
	// counts them).
	Conn int
}

// ViewSubmissionAck is the decoded payload of a view_submission ack.
type ViewSubmissionAck struct {
	ResponseAction string            `json:"response_action"`
	Errors         map[string]string `json:"errors"`
	View           json.RawMessage   `json:"view"`
}

// ViewSubmission decodes the ack payload of a view_submission. An empty
// payload decodes to a zero ViewSubmissionAck (Slack closes the modal).
func (a Ack) ViewSubmission() (ViewSubmissionAck, error) {
	var v ViewSubmissionAck
	if len(a.Payload) == 0 || string(a.Payload) == "null" {
		return v, nil
	}
	if err := json.Unmarshal(a.Payload, &v); err != nil {
		return v, fmt.Errorf("slackfake: decoding view_submission ack: %w", err)
	}
	return v, nil
}

// Calls returns the recorded Web API calls for a method ("" = all), oldest first.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			c.Params = cloneMap(c.Params)
			out = append(out, c)
		}
	}
	return out
}

// Messages returns the messages of a channel as they are now (after updates
// and deletes), in ts order, ephemeral ones included.
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.messages[channelID]))
	for _, m := range s.messages[channelID] {
		out = append(out, copyMessage(m))
	}
	sort.SliceStable(out, func(i, j int) bool { return tsLess(out[i].TS, out[j].TS) })
	return out
}

// Thread returns the parent message (ts == threadTS) and its replies, in ts order.
func (s *Server) Thread(channelID, threadTS string) []Message {
	var out []Message
	for _, m := range s.Messages(channelID) {
		if m.TS == threadTS || m.ThreadTS == threadTS {
			out = append(out, m)
		}
	}
	return out
}

// Views returns every version of every modal, oldest first.
func (s *Server) Views() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.viewLog...)
}

// Files returns the uploaded files in upload order.
func (s *Server) Files() []File {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]File, 0, len(s.fileOrder))
	for _, id := range s.fileOrder {
		f := *s.files[id]
		f.Content = append([]byte(nil), f.Content...)
		out = append(out, f)
	}
	return out
}

// Acks returns every ack received, in arrival order.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ack(nil), s.acks...)
}

func copyMessage(m *Message) Message {
	c := *m
	c.Blocks = append(json.RawMessage(nil), m.Blocks...)
	c.FileIDs = append([]string(nil), m.FileIDs...)
	c.Metadata = append(json.RawMessage(nil), m.Metadata...)
	if m.Metadata == nil {
		c.Metadata = nil
	}
	return c
}

func cloneMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// tsLess orders Slack timestamps ("seconds.micros") numerically.
func tsLess(a, b string) bool {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	ai, _ := strconv.ParseInt(as, 10, 64)
	bi, _ := strconv.ParseInt(bs, 10, 64)
	if ai != bi {
		return ai < bi
	}
	return af < bf
}
