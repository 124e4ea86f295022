package bot

import (
	"context"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/internal/slackfake"
)

func TestLearnInstallationFromTheBotToken(t *testing.T) {
	fake := slackfake.New(t)
	a := &App{send: NewSender(SenderConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL()})}
	in, err := a.learnInstallation(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if in != (installation{TeamID: slackfake.TeamID, AppID: slackfake.AppID, BotUserID: slackfake.BotUserID}) {
		t.Errorf("installation = %+v", in)
	}
	fake.FailWith("bots.info", 1, "missing_scope")
	if _, err := a.learnInstallation(context.Background()); err == nil || !strings.Contains(err.Error(), "bots.info: missing_scope") {
		t.Errorf("err = %v, want bots.info's error", err)
	}
	bad := &App{send: NewSender(SenderConfig{BotToken: "xoxb-wrong", APIURL: fake.APIURL()})}
	if _, err := bad.learnInstallation(context.Background()); err == nil || !strings.Contains(err.Error(), "auth.test: invalid_auth") {
		t.Errorf("err = %v, want auth.test's error", err)
	}
}

func TestForeignRequests(t *testing.T) {
	in := &installation{TeamID: "T1", AppID: "A1"}
	cases := []struct {
		o    requestOrigin
		want string
	}{
		{requestOrigin{team: "T1", app: "A1"}, ""},
		{requestOrigin{team: "T2", app: "A1"}, "another workspace"},
		{requestOrigin{team: "T1", app: "A2"}, "another app"},
		{requestOrigin{team: "T1"}, "another app"},
		{requestOrigin{app: "A1"}, "another workspace"},
	}
	for _, c := range cases {
		if got := in.foreign(c.o); got != c.want {
			t.Errorf("foreign(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	if got := (*installation)(nil).foreign(requestOrigin{team: "T1", app: "A1"}); got == "" {
		t.Error("an unknown installation accepted a request")
	}
}

func TestRefusalsOnlyPostToSlack(t *testing.T) {
	cases := []struct {
		url, api string
		want     bool
	}{
		{"https://hooks.slack.com/actions/T1/1/abc", "", true},
		{"https://hooks.slack.com/commands/T1/1/abc", "https://slack.com/api/", true},
		{"http://hooks.slack.com/actions/x", "", false},
		{"https://evil.example/hooks", "", false},
		{"https://slack.com.evil.example/x", "", false},
		{"http://127.0.0.1:5000/hooks/actions/1", "http://127.0.0.1:5000/api/", true},
		{"http://127.0.0.1:6000/hooks/actions/1", "http://127.0.0.1:5000/api/", false},
		{"", "", false},
	}
	for _, c := range cases {
		if got := slackHosted(c.url, c.api); got != c.want {
			t.Errorf("slackHosted(%q, %q) = %v, want %v", c.url, c.api, got, c.want)
		}
	}
}
