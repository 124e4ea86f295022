package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// luaScript is a Lua script of the store. Run sends EVALSHA and, when the
// server does not have the script, EVAL (go-redis's redis.Script); on a
// client made by Connect the first run of each script sends it whole with
// EVAL at once (firstEval), so a fresh server or a short-lived process does
// not pay a failed EVALSHA per script.
type luaScript struct {
	*redis.Script
	src scriptSource
}

// scriptSource is a script's hash and text, carried in the context of its
// run for firstEval.
type scriptSource struct{ sha, src string }

type scriptSourceKey struct{}

// newScript returns the script of src.
func newScript(src string) *luaScript {
	s := redis.NewScript(src)
	return &luaScript{Script: s, src: scriptSource{sha: s.Hash(), src: src}}
}

// Run runs the script (EVALSHA, or EVAL when the server or the client has
// not seen it yet).
func (s *luaScript) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	return s.Script.Run(context.WithValue(ctx, scriptSourceKey{}, s.src), c, keys, args...)
}

// firstEval is a client hook that turns the first EVALSHA of each of the
// store's scripts on its client into an EVAL of the script's text: the one
// command loads and runs the script, where EVALSHA would fail (NOSCRIPT) on
// a server that has not seen it and be sent again as EVAL. Later runs are
// EVALSHA; one that meets a server that lost its scripts (a restart, a
// failover, SCRIPT FLUSH) falls back to EVAL as before.
type firstEval struct {
	mu   sync.Mutex
	sent map[string]bool // hashes whose EVAL the server answered
}

func newFirstEval() *firstEval { return &firstEval{sent: map[string]bool{}} }

// DialHook is the next hook: firstEval changes no dialling.
func (h *firstEval) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook is the next hook: the store sends no script in a pipeline.
func (h *firstEval) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook sends a script's first EVALSHA on this client as EVAL.
func (h *firstEval) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		src, ok := ctx.Value(scriptSourceKey{}).(scriptSource)
		args := cmd.Args()
		if !ok || len(args) < 2 || !strings.EqualFold(cmd.Name(), "evalsha") || args[1] != src.sha {
			return next(ctx, cmd)
		}
		h.mu.Lock()
		sent := h.sent[src.sha]
		h.mu.Unlock()
		if sent {
			return next(ctx, cmd)
		}
		args[0], args[1] = "eval", src.src
		err := next(ctx, cmd)
		// The server read the script when it answered at all: a Lua error
		// or a nil reply is still an answer; a network error is not.
		var rerr redis.Error
		if err == nil || errors.As(err, &rerr) {
			h.mu.Lock()
			h.sent[src.sha] = true
			h.mu.Unlock()
		}
		return err
	}
}

// codeAndStrings splits the reply of a script that answers either a code
// alone or the code followed by want strings (a field Redis did not have
// is ""); rest is nil for a code alone.
func codeAndStrings(cmd *redis.Cmd, want int) (code int64, rest []string, err error) {
	v, err := cmd.Result()
	if err != nil {
		return 0, nil, err
	}
	switch v := v.(type) {
	case int64:
		return v, nil, nil
	case []any:
		if len(v) != want+1 {
			break
		}
		code, ok := v[0].(int64)
		if !ok {
			break
		}
		rest = make([]string, want)
		for i, f := range v[1:] {
			if rest[i], ok = f.(string); !ok && f != nil {
				return 0, nil, fmt.Errorf("unexpected reply %v", v)
			}
		}
		return code, rest, nil
	}
	return 0, nil, fmt.Errorf("unexpected reply %v", v)
}
