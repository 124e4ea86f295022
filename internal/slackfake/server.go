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

// The Server: its identifiers and errors, options, state, start and close,
// the workspace a test sets up (channels, users), and the ids and
// timestamps it hands out.

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
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
