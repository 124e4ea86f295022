package bot_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/redisstore"
)

// A tripped breaker DMs each admin once, whichever replica sees the
// failures; after a reset, the next trip alerts again.
func TestATrippedBreakerDMsTheAdminsOnce(t *testing.T) {
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{Prefix: "t:"})
	fake := slackfake.New(t)
	admins := []string{"U0ADMIN01", "U0ADMIN02"}
	for _, a := range admins {
		fake.AddUser(a, "admin", "UTC")
	}
	replica := func() *bot.Presenter {
		p, err := bot.NewPresenter(bot.PresenterConfig{BotToken: fake.BotToken(), APIURL: fake.APIURL(), Memory: redisstore.NewSlackMemory(rdb), Admins: admins, Alerts: store})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		return p
	}
	one, two := replica(), replica()
	ctx := context.Background()
	def := checkpoints.Builtins(time.Now())[0]
	for _, p := range []*bot.Presenter{one, two, one} {
		if err := p.BreakerTripped(ctx, def, 5); err != nil {
			t.Fatal(err)
		}
	}
	dms := func(admin string) []slackfake.Message { return fake.Messages(slackfake.DMChannelID(admin)) }
	for _, a := range admins {
		if got := dms(a); len(got) != 1 || !strings.Contains(got[0].Text, "plan_review: circuit breaker tripped") {
			t.Fatalf("%s got %d messages: %+v", a, len(got), got)
		}
	}
	if err := store.ResetBreaker(ctx, def.ID); err != nil {
		t.Fatal(err)
	}
	if err := two.BreakerTripped(ctx, def, 5); err != nil {
		t.Fatal(err)
	}
	if got := dms(admins[0]); len(got) != 2 {
		t.Fatalf("after a reset the next trip must alert again: %d messages", len(got))
	}
}
