package bot

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

// TestE2ERevokedAppTokenStopsTheBot: when Slack refuses the app-level token
// on a reconnect after a good start, the bot says once which variable to
// fix and how, is no longer ready, and Run returns that error (serve exits
// non-zero with it) instead of reconnecting for ever.
func TestE2ERevokedAppTokenStopsTheBot(t *testing.T) {
	h := newHarness(t, nil)
	// The first connection is made and logged before Slack revokes the
	// token (dropping it earlier raced the log the harness checks for).
	h.waitFor("the first connection", func() bool { return strings.Contains(h.logs.String(), "connected to Slack") })
	h.fake.FailWith("apps.connections.open", 1, "token_revoked")
	h.fake.DropConnection()
	h.waitFor("the refusal logged", func() bool { return strings.Contains(h.logs.String(), "Slack refused a token") })

	rec := httptest.NewRecorder()
	h.app.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	if rec.Code == http.StatusOK {
		t.Errorf("/readyz = %d after the token was refused; want not ready", rec.Code)
	}

	h.wantRunErr = true
	h.stop()
	if h.runErr == nil {
		t.Fatal("Run returned nil after Slack refused the app-level token")
	}
	for _, want := range []string{"SLACK_APP_TOKEN", `"token_revoked"`, "api.slack.com/apps", "reinstall the app"} {
		if !strings.Contains(h.runErr.Error(), want) {
			t.Errorf("Run error %q lacks %q", h.runErr, want)
		}
	}
	logs := h.logs.String()
	if n := strings.Count(logs, "Slack refused a token"); n != 1 {
		t.Errorf("refusal logged %d times, want once", n)
	}
	if strings.Contains(logs, "reconnecting") {
		t.Error("the bot went on reconnecting with a refused token")
	}
	if n := len(h.fake.Calls("apps.connections.open")); n != 2 {
		t.Errorf("apps.connections.open called %d times, want 2 (the good start, the refusal)", n)
	}
}

// TestRefusedCode: only Slack's answers meaning a token no longer works stop
// the bot; anything else is reconnected after.
func TestRefusedCode(t *testing.T) {
	for err, want := range map[error]string{
		errString("token_revoked"):                     "token_revoked",
		errString("invalid_auth"):                      "invalid_auth",
		errString("account_inactive"):                  "account_inactive",
		errString("internal_error"):                    "",
		&identifyError{err: errString("invalid_auth")}: "invalid_auth",
	} {
		if got := refusedCode(err); got != want {
			t.Errorf("refusedCode(%v) = %q, want %q", err, got, want)
		}
	}
	if refusedCode(nil) != "" {
		t.Error("refusedCode(nil) is not empty")
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// startBare builds an App on fake, whose failures the caller scripted
// before, and runs it; run's error arrives on the returned channel. The
// caller cancels with the returned func.
func startBare(t *testing.T, fake *slackfake.Server) (*lockedBuffer, <-chan error, context.CancelFunc) {
	t.Helper()
	_, rdb := redistest.Start(t)
	logs := &lockedBuffer{}
	app, err := New(Config{AppToken: fake.AppToken(), BotToken: fake.BotToken(), APIURL: fake.APIURL(), Engine: newFakeEngine(nil),
		Memory: redisstore.NewSlackMemory(rdb), Budget: redisstore.NewRateLimiter(rdb, "slack"), Metrics: NewMetrics(),
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Workers: 1, Queue: 4})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done, returned := make(chan error, 1), make(chan struct{})
	go func() {
		done <- app.Run(ctx)
		close(returned)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return logs, done, cancel
}

// TestE2EMissingScopeStopsTheBot: an installation from an older manifest
// lacks users:read, so bots.info answers missing_scope; the bot stops at
// once, saying which scope to add and to reinstall the app, instead of
// reconnecting for ever.
func TestE2EMissingScopeStopsTheBot(t *testing.T) {
	fake := slackfake.New(t)
	fake.FailMissingScope("bots.info", 1, "users:read", "commands,chat:write")
	logs, done, _ := startBare(t, fake)
	var err error
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("Run still going 10 s after bots.info answered missing_scope; logs:\n%s", logs.String())
	}
	if err == nil {
		t.Fatal("Run returned nil")
	}
	for _, want := range []string{"SLACK_BOT_TOKEN", `"missing_scope" to bots.info`, "lacks the users:read scope", "has: commands,chat:write", "reinstall the app", "api.slack.com/apps"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run error %q lacks %q", err, want)
		}
	}
	if strings.Contains(logs.String(), "reconnecting") {
		t.Error("the bot went on reconnecting after a refusal")
	}
	if n := len(fake.Calls("bots.info")); n != 1 {
		t.Errorf("bots.info called %d times, want 1", n)
	}
	if n := len(fake.Calls("apps.connections.open")); n != 0 {
		t.Errorf("apps.connections.open called %d times before the installation was known", n)
	}
}

// TestE2ETransientBotsInfoFailureIsRetried: an HTTP 503 from bots.info is
// asked again, and the bot connects.
func TestE2ETransientBotsInfoFailureIsRetried(t *testing.T) {
	fake := slackfake.New(t)
	var failed atomic.Bool
	fake.OnCall(func(c slackfake.Call) *slackfake.Reply {
		if c.Method == "bots.info" && failed.CompareAndSwap(false, true) {
			return &slackfake.Reply{Status: http.StatusServiceUnavailable}
		}
		return nil
	})
	logs, _, _ := startBare(t, fake)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatalf("not connected after a 503 from bots.info: %v; logs:\n%s", err, logs.String())
	}
	if n := len(fake.Calls("bots.info")); n != 2 {
		t.Errorf("bots.info called %d times, want 2", n)
	}
}

// TestIdentifyRefusal: every answer of auth.test or bots.info that asking
// again cannot change is a refusal with its cause and fix; no answer, 5xx,
// 429 and Slack's transient codes are not.
func TestIdentifyRefusal(t *testing.T) {
	refused := map[string]string{
		"missing_scope":           "lacks a scope",
		"not_allowed_token_type":  "not a bot token",
		"invalid_auth":            "Bot User OAuth Token",
		"account_inactive":        "reinstall the app",
		"token_revoked":           "reinstall the app",
		"team_access_not_granted": "not granted access to this workspace",
		"no_permission":           "reinstall the app",
	}
	for code, want := range refused {
		err := (&identifyError{method: "bots.info", err: slack.SlackErrorResponse{Err: code}}).refusal()
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "SLACK_BOT_TOKEN") {
			t.Errorf("%s: refusal %v; want one saying %q", code, err, want)
		}
	}
	for _, err := range []error{
		slack.SlackErrorResponse{Err: "internal_error"},
		slack.SlackErrorResponse{Err: "ratelimited"},
		&slack.RateLimitedError{RetryAfter: time.Second},
		slack.StatusCodeError{Code: http.StatusBadGateway, Status: "502 Bad Gateway"},
		errString("dial tcp: connection refused"),
	} {
		if r := (&identifyError{method: "auth.test", err: err}).refusal(); r != nil {
			t.Errorf("%v: refusal %v; want it asked again", err, r)
		}
	}
	if r := (&identifyError{method: "auth.test", wrong: true, err: errString("auth.test named no bot")}).refusal(); r == nil {
		t.Error("a token that is not a bot's is asked again")
	}
}
