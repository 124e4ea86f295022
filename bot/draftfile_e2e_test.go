package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
)

// TestE2EDraftFileReplacedPerRevision runs a guided research with the real
// engine: the draft review attaches draft 1 as a Markdown file in the
// thread; the requester rejects it with a reason; the revision's review
// attaches draft 2 with a one-line summary of what changed and deletes
// draft 1's file, so the thread holds one draft, the one to approve.
func TestE2EDraftFileReplacedPerRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("a whole research run")
	}
	fake, _, ctx, _ := startRealStack(t, &researchtest.Researcher{}, nil)
	const user, channel = "U0REQ0001", "C0RESEARCH"
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	if _, err := fake.SlashCommand(wctx, slackfake.SlashCommand{Command: "/research", Text: "How well do heat pumps work in cold climates?", UserID: user, ChannelID: channel}); err != nil {
		t.Fatal(err)
	}
	click := func(m slackfake.Message, action string) {
		t.Helper()
		if _, err := fake.ClickButton(wctx, user, channel, m.TS, action, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	draftFiles := func() []slackfake.File {
		var out []slackfake.File
		for _, f := range fake.Files() {
			if strings.HasPrefix(f.Name, "draft-") {
				out = append(out, f)
			}
		}
		return out
	}
	click(waitCheckpoint(t, fake, channel, "plan"), blockkit.ActionApprove)
	first := waitCheckpoint(t, fake, channel, "Draft")
	if fs := draftFiles(); len(fs) != 1 || !strings.HasSuffix(fs[0].Name, "-v1.md") || !strings.Contains(string(fs[0].Content), "# ") || fs[0].ThreadTS == "" {
		t.Fatalf("draft files at the first review: %+v", fs)
	}
	v1 := draftFiles()[0].ID

	click(first, blockkit.ActionReject)
	waitFor(t, fake, "the reject form", func() bool { return len(fake.Views()) > 0 })
	reason := map[string]map[string]slack.BlockAction{"reason": {"value": {Value: "Say more about running costs."}}}
	if _, err := fake.SubmitView(wctx, user, fake.Views()[len(fake.Views())-1].SlackView(), reason); err != nil {
		t.Fatal(err)
	}
	second := waitCheckpoint(t, fake, channel, "Draft")
	for second.TS == first.TS {
		second = waitCheckpoint(t, fake, channel, "Draft")
	}
	fs := draftFiles()
	if len(fs) != 1 || fs[0].ID == v1 || !strings.HasSuffix(fs[0].Name, "-v2.md") {
		t.Fatalf("after the revision the thread must hold draft 2 only: %+v", fs)
	}
	if c := fs[0].InitialComment; !strings.Contains(c, "Draft 2 replaces draft 1. Changes: ") {
		t.Errorf("the new draft's file says nothing of what changed: %q", c)
	}
	deleted := false
	for _, c := range fake.Calls("files.delete") {
		deleted = deleted || c.Params["file"] == v1
	}
	if !deleted {
		t.Error("draft 1's file was not deleted through files.delete")
	}
	click(second, blockkit.ActionApprove)
	waitFor(t, fake, "the report file", func() bool {
		for _, f := range fake.Files() {
			if strings.HasPrefix(f.Name, "research-") {
				return true
			}
		}
		return false
	})
}
