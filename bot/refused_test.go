package bot

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestE2ERevokedAppTokenStopsTheBot: when Slack refuses the app-level token
// on a reconnect after a good start, the bot says once which variable to
// fix and how, is no longer ready, and Run returns that error (serve exits
// non-zero with it) instead of reconnecting for ever.
func TestE2ERevokedAppTokenStopsTheBot(t *testing.T) {
	h := newHarness(t, nil)
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
