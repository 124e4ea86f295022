package slackfake

// WithSpread deals envelopes across every open Socket Mode connection in
// turn, as Slack spreads an app's requests over its connections (an app
// may hold up to ten): several processes of one app each get their share,
// and a connection that closes leaves the others serving. Without it,
// every envelope goes to the newest connection, and one that closes makes
// envelopes wait for the client's next connection.
func WithSpread() Option { return func(s *Server) { s.spread = true } }

// pickLocked is the connection the next envelope goes to: the current one,
// or, with WithSpread, the next ready connection in turn. The caller holds
// s.mu.
func (s *Server) pickLocked() *wsConn {
	if !s.spread || s.active == nil {
		return s.active
	}
	var ready []*wsConn
	for _, c := range s.conns {
		if c.ready {
			ready = append(ready, c)
		}
	}
	if len(ready) == 0 {
		return s.active
	}
	s.turn++
	return ready[s.turn%len(ready)]
}

// anotherLocked is the connection that becomes current when the current one
// closes or is asked to leave: with WithSpread, the newest other ready
// connection; otherwise none (envelopes wait for the client to reconnect).
// The caller holds s.mu.
func (s *Server) anotherLocked() *wsConn {
	if !s.spread {
		return nil
	}
	for i := len(s.conns) - 1; i >= 0; i-- {
		if c := s.conns[i]; c.ready && c != s.active {
			return c
		}
	}
	return nil
}

// OpenConnections returns how many Socket Mode connections are open now
// (hello sent, not yet closed or asked to leave).
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.conns {
		if c.ready {
			n++
		}
	}
	return n
}
