// Package slackfake is an in-test fake of Slack that speaks the real wire
// protocols: the Web API over HTTP (form-encoded and JSON bodies, bearer or
// form tokens, HTTP 429 with Retry-After) and Socket Mode over a WebSocket
// (hello, envelopes, acks, pings, disconnect and reconnect).
//
// The bot's production code — slack-go's real slack.Client and
// socketmode.Client — runs unchanged against it:
//
//	fake := slackfake.New(t)
//	api := slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.AppToken()),
//		slack.OptionAPIURL(fake.APIURL()))
//	client := socketmode.New(api)
//
// Tests then act as users (SlashCommand, ClickButton, SubmitView,
// PostUserMessage) and read what the bot did (Calls, Messages, Thread, Views,
// Files, Acks). They can also act as Slack misbehaving or under attack:
// Redeliver sends an envelope again as a retry, RewriteEnvelopes changes
// payloads before they are sent (another workspace, another app, a tampered
// button value).
package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Identifiers of the fake workspace and of the bot installed in it.
const (
	TeamID     = "T0FAKE001"
	TeamDomain = "fake-team"
	AppID      = "A0FAKE001"
	BotID      = "B0FAKE001"
	BotUserID  = "U0FAKEBOT"
)

// Errors returned by the user-side actions of Server. Callers branch on them
// with errors.Is.
var (
	// ErrConnectionLost means the Socket Mode connection an envelope was sent
	// on closed before the client acknowledged it.
	ErrConnectionLost = errors.New("slackfake: socket mode connection closed before ack")
	// ErrNoSuchMessage means a test acted on a message the fake does not hold.
	ErrNoSuchMessage = errors.New("slackfake: no such message")
	// ErrNoSuchAction means a clicked action_id is not on the message.
	ErrNoSuchAction = errors.New("slackfake: no such action on message")
	// ErrViewClosed means a test submitted or closed a view that is no longer open.
	ErrViewClosed = errors.New("slackfake: view is closed")
)

// Option configures a Server.
type Option func(*Server)

// WithNow sets the clock used for message timestamps, call times and trigger
// expiry. The default is time.Now.
func WithNow(now func() time.Time) Option { return func(s *Server) { s.now = now } }

// WithPingInterval sets how often the server sends WebSocket pings on each
// Socket Mode connection (default 1s). slack-go reconnects when it sees no
// ping for its own ping interval (30s by default).
func WithPingInterval(d time.Duration) Option { return func(s *Server) { s.pingInterval = d } }

// WithTokens sets the bot (xoxb-) and app-level (xapp-) tokens the fake
// accepts. Defaults: "xoxb-fake-bot-token" and "xapp-fake-app-token".
func WithTokens(bot, app string) Option {
	return func(s *Server) { s.botToken, s.appToken = bot, app }
}

// WithTriggerTTL sets how long a trigger_id stays usable for views.open
// (default 3s, like Slack).
func WithTriggerTTL(d time.Duration) Option { return func(s *Server) { s.triggerTTL = d } }

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

// Reply is a scripted answer to a Web API call, returned by a hook set with OnCall.
type Reply struct {
	// Status is the HTTP status (default 200).
	Status int
	// RetryAfter, when > 0, sets the Retry-After header (seconds).
	RetryAfter int
	// Error, when set, answers {"ok":false,"error":Error}.
	Error string
	// Body, when set (and Error is empty), is sent as the JSON body.
	Body any
	// Lost handles the call as usual (a message is posted) and then loses
	// its answer: the caller gets HTTP 502 instead, as when the answer
	// never reaches a process killed or cut off meanwhile. Other fields
	// are ignored.
	Lost bool
}

type channel struct {
	id, name string
	member   bool
	im       bool
}

type user struct {
	id, name, tz string
	admin        bool // a workspace admin (users.info is_admin)
}

type viewState struct {
	id         string
	doc        map[string]any
	hash       string
	externalID string
	userID     string
	closed     bool
}

type trigger struct {
	issued time.Time
	used   bool
	userID string
}

type failure struct {
	retryAfter int
	slackErr   string
	// needed and provided, with slackErr "missing_scope", are the scope the
	// method needs and those the token has, as Slack reports them.
	needed, provided string
}

// Server is a fake Slack: Web API and Socket Mode on one loopback HTTP server.
type Server struct {
	httpSrv      *httptest.Server
	now          func() time.Time
	pingInterval time.Duration
	triggerTTL   time.Duration
	botToken     string
	appToken     string
	upgrader     websocket.Upgrader

	wg   sync.WaitGroup // socket goroutines
	stop chan struct{}  // closed on shutdown

	mu          sync.Mutex
	closed      bool
	seq         int
	lastTS      int64
	channels    map[string]*channel
	users       map[string]user
	messages    map[string][]*Message
	calls       []Call
	failures    map[string][]failure
	hook        func(Call) *Reply
	views       map[string]*viewState
	homes       map[string]string // user id → their App Home view id
	viewLog     []View
	files       map[string]*File
	fileOrder   []string
	triggers    map[string]*trigger
	tickets     map[string]bool
	conns       []*wsConn
	active      *wsConn
	spread      bool // deal envelopes across connections (WithSpread)
	turn        int  // the connection the next envelope goes to, when spread
	connCount   int
	connChanged chan struct{}
	changed     chan struct{} // closed and replaced on every recorded change
	acks        []Ack
	sent        []SentEnvelope
	rewrite     func(typ string, payload map[string]any)
	pending     map[string]*pendingEnvelope
	responseURL map[string]responseTarget
	ai          assistantState // the assistant panel (assistant.go)
	downloads   fileDownloads  // url_private_download (files_share.go)
	streams     streamState    // streamed messages (stream.go)
	rts         searchState    // Real-time Search (search_context.go)
}

// New starts a fake Slack on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{
		now:          time.Now,
		pingInterval: time.Second,
		triggerTTL:   3 * time.Second,
		botToken:     "xoxb-fake-bot-token",
		appToken:     "xapp-fake-app-token",
		upgrader:     websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		stop:         make(chan struct{}),
		channels:     map[string]*channel{},
		users:        map[string]user{},
		messages:     map[string][]*Message{},
		failures:     map[string][]failure{},
		views:        map[string]*viewState{},
		homes:        map[string]string{},
		files:        map[string]*File{},
		triggers:     map[string]*trigger{},
		tickets:      map[string]bool{},
		connChanged:  make(chan struct{}),
		changed:      make(chan struct{}),
		pending:      map[string]*pendingEnvelope{},
		responseURL:  map[string]responseTarget{},
	}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.handleAPI)
	mux.HandleFunc("/link/", s.handleLink)
	mux.HandleFunc("/upload/", s.handleUpload)
	mux.HandleFunc("/hooks/", s.handleResponseURL)
	mux.HandleFunc("/files-pri/", s.handleFileDownload)
	s.httpSrv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// Close stops the server: it closes every Socket Mode connection, waits for
// the goroutines serving them and shuts the HTTP server down. It is called
// automatically at the end of the test; calling it twice is harmless.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.conn.Close()
	}
	s.wg.Wait()
	s.httpSrv.Close()
}

// URL is the base URL of the server (http://127.0.0.1:port).
func (s *Server) URL() string { return s.httpSrv.URL }

// APIURL is the Web API base URL for slack.OptionAPIURL; it ends with "/api/".
func (s *Server) APIURL() string { return s.httpSrv.URL + "/api/" }

// BotToken is the bot token the fake accepts for Web API calls.
func (s *Server) BotToken() string { return s.botToken }

// AppToken is the app-level token the fake accepts for apps.connections.open.
func (s *Server) AppToken() string { return s.appToken }

// AddChannel registers a channel. When botIsMember is false, posting to it
// answers not_in_channel until the bot calls conversations.join.
func (s *Server) AddChannel(id, name string, botIsMember bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels[id] = &channel{id: id, name: name, member: botIsMember}
}

// AddUser registers a user with an IANA time zone (e.g. "Europe/Berlin"),
// and the bot's DM channel with them (see DMChannelID).
func (s *Server) AddUser(id, name, tz string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = user{id: id, name: name, tz: tz, admin: s.users[id].admin}
	dm := DMChannelID(id)
	if _, ok := s.channels[dm]; !ok {
		s.channels[dm] = &channel{id: dm, name: id, member: true, im: true}
	}
}

// DMChannelID is the id of the bot's direct-message channel with a user
// registered with AddUser. Posting to the user id posts there, like Slack.
func DMChannelID(userID string) string { return "D" + strings.TrimPrefix(userID, "U") }

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

// FailNext makes the next n calls of method answer HTTP 429 with
// Retry-After: retryAfter seconds and {"ok":false,"error":"ratelimited"}.
func (s *Server) FailNext(method string, n int, retryAfter int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{retryAfter: retryAfter})
	}
}

// FailWith makes the next n calls of method answer {"ok":false,"error":slackErr}.
func (s *Server) FailWith(method string, n int, slackErr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{slackErr: slackErr})
	}
}

// FailMissingScope makes the next n calls of method answer as Slack does
// when the token lacks a scope the method needs (HTTP 200):
// {"ok":false,"error":"missing_scope","needed":needed,"provided":provided},
// provided being the token's scopes, comma-separated.
func (s *Server) FailMissingScope(method string, n int, needed, provided string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[method] = append(s.failures[method], failure{slackErr: "missing_scope", needed: needed, provided: provided})
	}
}

// OnCall installs a hook consulted for every Web API call after FailNext and
// FailWith. It returns nil to let the fake answer normally, or a Reply to
// script any answer. A nil fn removes the hook.
func (s *Server) OnCall(fn func(Call) *Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = fn
}

// nextID returns a fresh identifier with the given prefix.
func (s *Server) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%07d", prefix, s.seq)
}

// nextTS returns a Slack timestamp strictly greater than every earlier one.
// The caller holds s.mu.
func (s *Server) nextTS() string {
	micro := s.now().UnixMicro()
	if micro <= s.lastTS {
		micro = s.lastTS + 1
	}
	s.lastTS = micro
	return fmt.Sprintf("%d.%06d", micro/1e6, micro%1e6)
}

// issueTrigger records a fresh (or given) trigger_id. The caller holds s.mu.
func (s *Server) issueTrigger(id, userID string) string {
	if id == "" {
		s.seq++
		id = fmt.Sprintf("%d.%d.fake%06x", s.now().Unix(), s.seq, s.seq)
	}
	s.triggers[id] = &trigger{issued: s.now(), userID: userID}
	return id
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

// waitFor blocks until cond (evaluated under s.mu) holds or ctx ends.
func (s *Server) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.connChanged
		closed := s.closed
		s.mu.Unlock()
		if ok {
			return nil
		}
		if closed {
			return errors.New("slackfake: server closed")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// notifyConnChange wakes waiters. The caller holds s.mu.
func (s *Server) notifyConnChange() {
	close(s.connChanged)
	s.connChanged = make(chan struct{})
	s.notifyLocked()
}

// Changed returns a channel closed at the next change the fake records: a
// Web API or response_url call (and so a message, view or file), an ack, a
// connection coming or going. A test waiting for a condition on the fake
// checks it, and waits on Changed taken before the check.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// notifyLocked wakes the waiters on Changed. The caller holds s.mu.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}
