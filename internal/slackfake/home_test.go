package slackfake

import (
	"strings"
	"testing"

	"github.com/slack-go/slack"
)

func TestViewsPublishKeepsOneHomePerUser(t *testing.T) {
	fake := New(t)
	fake.AddUser("U1", "ada", "UTC")
	fake.SetAdmin("U1", true)
	api := newAPI(fake)
	ctx := testCtx(t)
	home := func(text string) slack.HomeTabViewRequest {
		return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: []slack.Block{
			slack.NewSectionBlock(slack.NewTextBlockObject("mrkdwn", text, false, false), nil, nil)}}}
	}
	first, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home("one")})
	if err != nil {
		t.Fatal(err)
	}
	stale := first.Hash
	second, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home("two"), Hash: &first.Hash})
	if err != nil || second.ID != first.ID {
		t.Fatalf("republish: %v, id %s then %s", err, first.ID, second.ID)
	}
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: home("three"), Hash: &stale}); err == nil || !strings.Contains(err.Error(), "hash_conflict") {
		t.Fatalf("a stale hash: %v", err)
	}
	if v, ok := fake.Home("U1"); !ok || !strings.Contains(string(v.JSON), `"two"`) || v.Method != "views.publish" {
		t.Fatalf("Home(U1) = %s, %v", v.JSON, ok)
	}
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U9", View: home("x")}); err == nil || !strings.Contains(err.Error(), "user_not_found") {
		t.Fatalf("an unknown user: %v", err)
	}
	modal := home("m")
	modal.Type = slack.VTModal
	if _, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{UserID: "U1", View: modal}); err == nil || !strings.Contains(err.Error(), "invalid_arguments") {
		t.Fatalf("a modal published as a home: %v", err)
	}
	u, err := api.GetUserInfoContext(ctx, "U1")
	if err != nil || !u.IsAdmin {
		t.Fatalf("users.info: %+v %v", u, err)
	}
}
