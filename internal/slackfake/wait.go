package slackfake

// Waiting on the fake: the change notifications every recorded change sends,
// and the waits built on them.

import (
	"context"
	"errors"
	"time"
)

// recheck bounds how long a condition on state that no Slack call follows
// (an engine's decision, a run's verdicts) goes unnoticed by WaitUntil.
const recheck = 100 * time.Millisecond

// WaitUntil is the tests' one way to wait on what a bot does: it checks
// cond whenever the fake records a change (a Web API call and so a message,
// view or file, an ack, a connection) and at least every 100 ms, until cond
// holds (true) or limit passes (false; the caller says what it waited for).
func (s *Server) WaitUntil(limit time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	for {
		changed := s.Changed() // taken before the check: no change is missed
		if cond() {
			return true
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-deadline.C:
			return cond()
		}
	}
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
