package slackfake

import "time"

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
