package streams

import (
	"strings"
	"testing"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestOneWebAPIClient: the feature given the App's Sender speaks through
// its client and makes none of its own (bot's TestOneWebAPIClient checks
// the App and the Presenter).
func TestOneWebAPIClient(t *testing.T) {
	send := bot.NewSender(bot.SenderConfig{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: "http://127.0.0.1:1/api/"})
	_, rdb := redistest.Start(t)
	svc, err := scheduler.NewService(scheduler.ServiceConfig{Store: redisstore.NewStreams(rdb, "rb:"), Runner: &fakeRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Kit: bot.Kit{Sender: send}, Service: svc, Conversations: redisstore.NewConversations(rdb, "rb:", 0), Model: &scriptModel{}})
	if err != nil {
		t.Fatal(err)
	}
	if s.send != send {
		t.Error("a second Web API client was made")
	}
}

// TestNewNamesWhatIsMissing: New refuses a configuration without its
// required parts and names each.
func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := New(Config{})
	if err == nil {
		t.Fatal("New accepted an empty configuration")
	}
	for _, want := range []string{"a Sender", "the stream service", "a conversation store", "a model"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not name %s", err, want)
		}
	}
}
