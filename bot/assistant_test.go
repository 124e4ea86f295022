package bot

import (
	"log/slog"
	"testing"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

// TestAssistantPanelRemembersOnlyFeatureErrors: a feature error switches
// the workspace's assistant calls off (for every replica: it is in the
// memory); any other failure is only logged and the next call is made.
func TestAssistantPanelRemembersOnlyFeatureErrors(t *testing.T) {
	_, rdb := redistest.Start(t)
	fake := slackfake.New(t)
	fake.AddUser(requester, "ada", "UTC")
	send := NewSender(SenderConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL()})
	mem := redisstore.NewSlackMemory(rdb)
	p := NewAssistantPanel(send, mem, slog.New(slog.DiscardHandler))
	ctx := t.Context()
	dm := slackfake.DMChannelID(requester)

	// Not an assistant thread of the channel: logged, not remembered.
	p.Title(ctx, slackfake.TeamID, dm, "1.000001", "t")
	if _, off, _ := mem.AssistantOff(ctx, slackfake.TeamID); off {
		t.Fatal("invalid_thread_ts switched the panel off")
	}
	fake.FailWith("assistant.threads.setTitle", 1, "internal_error")
	p.Title(ctx, slackfake.TeamID, dm, "1.000001", "t")
	if _, off, _ := mem.AssistantOff(ctx, slackfake.TeamID); off {
		t.Fatal("internal_error switched the panel off")
	}
	before := len(fake.Calls("assistant.threads.setTitle"))
	for _, code := range []string{"not_allowed", "feature_not_enabled"} {
		fake.DisableAssistant(code)
		other := "T0OTHER" + code
		p.Status(ctx, other, dm, "1.000001", "is researching…", nil)
		if v, off, _ := mem.AssistantOff(ctx, other); !off || v != code {
			t.Errorf("%s: remembered %q, %v", code, v, off)
		}
		n := len(fake.Calls("assistant.threads.setStatus"))
		p.Status(ctx, other, dm, "1.000001", "is researching…", nil)
		if len(fake.Calls("assistant.threads.setStatus")) != n {
			t.Errorf("%s: the call was made again", code)
		}
	}
	if len(fake.Calls("assistant.threads.setTitle")) != before {
		t.Error("calls were made for no reason")
	}
}
