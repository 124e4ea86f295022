package bot

import (
	"testing"

	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/pipeline"
)

func TestAudienceOf(t *testing.T) {
	private := pipeline.Visibility{Conversation: "C_PRIV", Reader: "U1"}
	for _, c := range []struct {
		channel, user string
		want          pipeline.Audience
		readsPrivate  bool // may read U1's private-channel message
	}{
		{"C_PUB", "U1", pipeline.Audience{Conversation: "C_PUB"}, false},
		{"C_PRIV", "U1", pipeline.Audience{Conversation: "C_PRIV"}, true},
		{"G_MPIM", "U1", pipeline.Audience{Conversation: "G_MPIM"}, false},
		{"D_BOT", "U1", pipeline.Audience{Conversation: "D_BOT", Person: "U1"}, true},
		{"D_BOT", "", pipeline.Audience{Conversation: "D_BOT"}, false},
	} {
		got := audienceOf(c.channel, c.user)
		if got != c.want {
			t.Errorf("audienceOf(%s, %s) = %+v, want %+v", c.channel, c.user, got, c.want)
		}
		if got.Permits(private) != c.readsPrivate {
			t.Errorf("a report in %s may use U1's private-channel message: %v, want %v", c.channel, !c.readsPrivate, c.readsPrivate)
		}
	}
}

// TestPersonTokenOnlyWithWorkspaceSearch: the action token of the message
// that started a run is kept with it only when workspace search is on;
// Slack's "assistant_thread" token is read before the top-level one.
func TestPersonTokenOnlyWithWorkspaceSearch(t *testing.T) {
	req := &Request{ActionToken: actionTokenOf("top", &slackevents.AssistantThreadActionToken{ActionToken: "thread"})}
	if req.ActionToken != "thread" || actionTokenOf("top", nil) != "top" {
		t.Errorf("action tokens read: %q, %q", req.ActionToken, actionTokenOf("top", nil))
	}
	if got := (&App{}).personToken(req); got != "" {
		t.Errorf("workspace search off keeps the token")
	}
	if got := (&App{cfg: Config{Start: StartConfig{WorkspaceSearch: true}}}).personToken(req); got.Reveal() != "thread" {
		t.Errorf("workspace search on keeps %q, want the token", got.Reveal())
	}
}
