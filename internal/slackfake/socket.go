package slackfake

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// wsConn is one Socket Mode WebSocket connection.
type wsConn struct {
	id      int
	conn    *websocket.Conn
	ready   bool // its hello was sent (under Server.mu)
	writeMu sync.Mutex
	done    chan struct{} // closed when the connection's read loop ends

	pongMu sync.Mutex
	pongs  map[string]chan struct{}
}

func (c *wsConn) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	return c.conn.WriteMessage(websocket.TextMessage, b)
}

// Envelope is a Socket Mode request the server sends to the client.
type Envelope struct {
	// Type is "slash_commands", "interactive" or "events_api".
	Type string
	// EnvelopeID is generated when empty; reuse one to simulate a redelivery.
	EnvelopeID             string
	Payload                any
	AcceptsResponsePayload bool
	RetryAttempt           int
	RetryReason            string
}

type pendingEnvelope struct {
	typ    string
	conn   *wsConn
	sentAt time.Time
	ch     chan Ack
	extra  func(Ack) // post-processing of the ack (ephemeral reply, view replacement), under s.mu
}

// handleLink serves the WebSocket URL returned by apps.connections.open.
func (s *Server) handleLink(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket] && !s.closed
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{conn: conn, done: make(chan struct{}), pongs: map[string]chan struct{}{}}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	s.connCount++
	c.id = s.connCount
	s.conns = append(s.conns, c)
	s.wg.Add(1)
	defer s.wg.Done()

	conn.SetPongHandler(func(data string) error {
		c.pongMu.Lock()
		defer c.pongMu.Unlock()
		if ch, ok := c.pongs[data]; ok {
			close(ch)
			delete(c.pongs, data)
		}
		return nil
	})

	hello := map[string]any{
		"type":            "hello",
		"num_connections": len(s.conns),
		"debug_info": map[string]any{
			"host": "applink-fake", "build_number": 1, "approximate_connection_time": 18060,
		},
		"connection_info": map[string]any{"app_id": AppID},
	}
	s.mu.Unlock()
	if err := c.writeJSON(hello); err != nil {
		s.dropConn(c)
		return
	}
	s.mu.Lock()
	c.ready = true
	s.active = c
	s.notifyConnChange()
	s.mu.Unlock()

	pingStop := make(chan struct{})
	var pingWG sync.WaitGroup
	pingWG.Go(func() { s.pingLoop(c, pingStop) })

	s.readLoop(c)

	close(pingStop)
	pingWG.Wait()
	s.dropConn(c)
}

// pingLoop sends WebSocket pings until stop closes.
func (s *Server) pingLoop(c *wsConn, stop chan struct{}) {
	t := time.NewTicker(s.pingInterval)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-stop:
			return
		case <-s.stop:
			return
		case <-t.C:
			_ = c.conn.WriteControl(websocket.PingMessage, []byte("ping-"+strconv.Itoa(n)), time.Now().Add(5*time.Second))
		}
	}
}

// dropConn forgets a closed connection and fails its pending envelopes.
func (s *Server) dropConn(c *wsConn) {
	_ = c.conn.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	for i, x := range s.conns {
		if x == c {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	if s.active == c {
		s.active = s.anotherLocked()
	}
	s.notifyConnChange()
}

type wireAck struct {
	EnvelopeID string          `json:"envelope_id"`
	Payload    json.RawMessage `json:"payload"`
}

func (s *Server) readLoop(c *wsConn) {
	for {
		_, data, err := c.conn.ReadMessage()
		if err != nil {
			return
		}
		var a wireAck
		if err := json.Unmarshal(data, &a); err != nil || a.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		ack := Ack{EnvelopeID: a.EnvelopeID, Payload: a.Payload, Conn: c.id}
		p, ok := s.pending[a.EnvelopeID]
		if ok {
			delete(s.pending, a.EnvelopeID)
			ack.Type = p.typ
			ack.Latency = time.Since(p.sentAt)
			if p.extra != nil {
				p.extra(ack)
			}
		}
		s.acks = append(s.acks, ack)
		s.notifyLocked()
		s.mu.Unlock()
		if ok {
			p.ch <- ack
		}
	}
}

// Connections returns how many Socket Mode connections were opened so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connCount
}

// WaitConnected waits until a Socket Mode connection is open and has been
// sent its hello (and is not being asked to disconnect).
func (s *Server) WaitConnected(ctx context.Context) error {
	return s.waitFor(ctx, func() bool { return s.active != nil })
}

// WaitConnections waits until at least n connections have been opened and
// one of them is current.
func (s *Server) WaitConnections(ctx context.Context, n int) error {
	return s.waitFor(ctx, func() bool { return s.connCount >= n && s.active != nil })
}

// Disconnect sends {"type":"disconnect","reason":reason} on the current
// connection, as Slack does before rotating it (reason "refresh_requested",
// "warning", "link_disabled"). New envelopes wait for the client's new
// connection. slack-go answers by closing the socket and reconnecting through
// apps.connections.open.
func (s *Server) Disconnect(reason string) {
	s.mu.Lock()
	c := s.active
	if c != nil {
		c.ready = false // asked to leave: no more envelopes on it
	}
	s.active = s.anotherLocked()
	s.notifyConnChange()
	s.mu.Unlock()
	if c == nil {
		return
	}
	_ = c.writeJSON(map[string]any{
		"type": "disconnect", "reason": reason,
		"debug_info": map[string]any{"host": "applink-fake"},
	})
}

// DropConnection closes the current connection abruptly (no disconnect
// message), like a network failure.
func (s *Server) DropConnection() {
	s.mu.Lock()
	c := s.active
	s.mu.Unlock()
	if c != nil {
		_ = c.conn.Close()
	}
}

// Ping sends a WebSocket ping on the current connection and waits for the
// client's pong with the same payload. It returns the round-trip time.
func (s *Server) Ping(ctx context.Context) (time.Duration, error) {
	if err := s.WaitConnected(ctx); err != nil {
		return 0, err
	}
	s.mu.Lock()
	c := s.active
	data := s.nextID("manual-ping-")
	s.mu.Unlock()
	if c == nil {
		return 0, ErrConnectionLost
	}
	ch := make(chan struct{})
	c.pongMu.Lock()
	c.pongs[data] = ch
	c.pongMu.Unlock()
	start := time.Now()
	if err := c.conn.WriteControl(websocket.PingMessage, []byte(data), time.Now().Add(5*time.Second)); err != nil {
		return 0, fmt.Errorf("slackfake: writing ping: %w", err)
	}
	select {
	case <-ch:
		return time.Since(start), nil
	case <-c.done:
		return 0, ErrConnectionLost
	case <-ctx.Done():
		return 0, fmt.Errorf("slackfake: no pong: %w", ctx.Err())
	}
}

// Send delivers an envelope on the current connection (waiting for one if
// the client is reconnecting) and waits for its ack.
func (s *Server) Send(ctx context.Context, e Envelope) (Ack, error) {
	return s.send(ctx, e, nil)
}

func (s *Server) send(ctx context.Context, e Envelope, extra func(Ack)) (Ack, error) {
	if err := s.WaitConnected(ctx); err != nil {
		return Ack{}, fmt.Errorf("slackfake: waiting for a socket mode connection: %w", err)
	}
	s.mu.Lock()
	c := s.pickLocked()
	if c == nil {
		s.mu.Unlock()
		return s.send(ctx, e, extra)
	}
	if e.EnvelopeID == "" {
		s.seq++
		e.EnvelopeID = fmt.Sprintf("%08x-fake-4e00-8000-%012x", s.seq, s.seq)
	}
	if m, ok := e.Payload.(map[string]any); ok && s.rewrite != nil {
		s.rewrite(e.Type, m)
	}
	payload, err := json.Marshal(e.Payload)
	if err != nil {
		s.mu.Unlock()
		return Ack{}, fmt.Errorf("slackfake: encoding payload: %w", err)
	}
	p := &pendingEnvelope{typ: e.Type, conn: c, sentAt: time.Now(), ch: make(chan Ack, 1), extra: extra}
	s.pending[e.EnvelopeID] = p
	s.sent = append(s.sent, SentEnvelope{EnvelopeID: e.EnvelopeID, Type: e.Type, Payload: payload,
		AcceptsResponsePayload: e.AcceptsResponsePayload, RetryAttempt: e.RetryAttempt, extra: extra})
	s.mu.Unlock()

	msg := map[string]any{
		"envelope_id":              e.EnvelopeID,
		"type":                     e.Type,
		"payload":                  json.RawMessage(payload),
		"accepts_response_payload": e.AcceptsResponsePayload,
	}
	if e.Type == "events_api" {
		msg["retry_attempt"] = e.RetryAttempt
		msg["retry_reason"] = e.RetryReason
	}
	if err := c.writeJSON(msg); err != nil {
		s.forget(e.EnvelopeID)
		return Ack{}, fmt.Errorf("slackfake: writing envelope: %w", errors.Join(ErrConnectionLost, err))
	}
	select {
	case a := <-p.ch:
		return a, nil
	case <-c.done:
		s.forget(e.EnvelopeID)
		select { // the ack may have raced the close
		case a := <-p.ch:
			return a, nil
		default:
		}
		return Ack{}, fmt.Errorf("slackfake: envelope %s: %w", e.EnvelopeID, ErrConnectionLost)
	case <-ctx.Done():
		s.forget(e.EnvelopeID)
		return Ack{}, fmt.Errorf("slackfake: no ack for %s envelope %s: %w", e.Type, e.EnvelopeID, ctx.Err())
	}
}

func (s *Server) forget(envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, envelopeID)
}
