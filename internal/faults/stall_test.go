//go:build faults

package faults

import (
	"bytes"
	"context"
	"net"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// stallReplyOf withholds the reply of the first command named cmd written
// to a connection while armed: just before the command's bytes go out on
// an established connection, it adds a "timeout" toxic to the proxy's
// downstream (Redis → client), so the command reaches Redis and commits
// but its reply never comes back (until the test removes the toxic).
//
// It watches the bytes written, not the commands go-redis processes: a
// command that go-redis sends on a connection it must dial first would
// otherwise meet the stall at the connection's HELLO and never be sent.
// Only connections dialed after the hook is added are watched; install
// cuts the older ones.
type stallReplyOf struct {
	cmd   string
	armed *atomic.Bool
	px    *proxy
}

// install adds the hook to c and cuts c's connections through the proxy,
// so every later command goes on a connection the hook watches.
func (s stallReplyOf) install(c *redis.Client) {
	c.AddHook(s)
	s.px.down()
	s.px.up()
}

func (s stallReplyOf) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallingConn{Conn: c, s: s}, nil
	}
}

func (s stallReplyOf) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (s stallReplyOf) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// stallingConn is a connection through the proxy whose writes s watches.
type stallingConn struct {
	net.Conn
	s stallReplyOf
}

// Write stalls the proxy's downstream before writing b if b carries the
// armed command (in RESP, its name is a bulk string: "$7\r\nevalsha\r\n").
func (c *stallingConn) Write(b []byte) (int, error) {
	if c.carries(b) && c.s.armed.CompareAndSwap(true, false) {
		c.s.px.add("stall", "timeout", "downstream", map[string]any{"timeout": 0})
	}
	return c.Conn.Write(b)
}

// carries reports whether b holds the command named s.cmd; "script" names
// a script's run, sent as EVALSHA or (the first time on a client) EVAL.
func (c *stallingConn) carries(b []byte) bool {
	names := []string{c.s.cmd}
	if c.s.cmd == "script" {
		names = []string{"eval", "evalsha"}
	}
	for _, n := range names {
		if bytes.Contains(bytes.ToLower(b), []byte("\r\n"+n+"\r\n")) {
			return true
		}
	}
	return false
}
