package slackfake

// Scripted answers to Web API calls: rate limits, Slack errors, missing
// scopes, and any reply a test's hook chooses.

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

type failure struct {
	retryAfter int
	slackErr   string
	// needed and provided, with slackErr "missing_scope", are the scope the
	// method needs and those the token has, as Slack reports them.
	needed, provided string
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
