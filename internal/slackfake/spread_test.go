package slackfake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// connectBot runs slack-go's socketmode client against fake, acknowledging
// every request, until stop is called (or the test ends). It waits until
// the fake has seen n connections.
func connectBot(t *testing.T, fake *Server, n int) (stop func()) {
	t.Helper()
	api := slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.AppToken()), slack.OptionAPIURL(fake.APIURL()))
	client := socketmode.New(api)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = client.RunContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-client.Events:
				ackAll(evt, client)
			}
		}
	})
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	if err := fake.WaitConnections(testCtx(t), n); err != nil {
		t.Fatalf("bot %d did not connect: %v", n, err)
	}
	return stop
}

// TestSpreadDealsEnvelopesAcrossConnections: with WithSpread, two
// connected clients each get envelopes, and when the newest goes away the
// other gets the next one at once (without it, that one would wait for a
// reconnection that never comes).
func TestSpreadDealsEnvelopesAcrossConnections(t *testing.T) {
	fake := New(t, WithSpread())
	fake.AddChannel("C1", "research", true)
	connectBot(t, fake, 1)
	stopSecond := connectBot(t, fake, 2)
	got := map[int]int{}
	for range 4 {
		ack, err := fake.SlashCommand(testCtx(t), SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"})
		if err != nil {
			t.Fatal(err)
		}
		got[ack.Conn]++
	}
	if got[1] != 2 || got[2] != 2 {
		t.Errorf("envelopes per connection = %v, want 2 on each of connections 1 and 2", got)
	}
	stopSecond()
	if !fake.WaitUntil(5*time.Second, func() bool { return fake.OpenConnections() == 1 }) {
		t.Fatalf("%d connections open after the second client left, want 1", fake.OpenConnections())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	ack, err := fake.SlashCommand(ctx, SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"})
	if err != nil || ack.Conn != 1 {
		t.Fatalf("after the second client left: ack %+v, %v; want one over connection 1", ack, err)
	}
}

// TestWithoutSpreadTheNewestConnectionGetsEverything is the default: the
// newest connection gets every envelope.
func TestWithoutSpreadTheNewestConnectionGetsEverything(t *testing.T) {
	fake := New(t)
	fake.AddChannel("C1", "research", true)
	connectBot(t, fake, 1)
	connectBot(t, fake, 2)
	for range 3 {
		ack, err := fake.SlashCommand(testCtx(t), SlashCommand{Command: "/research", UserID: "U1", ChannelID: "C1"})
		if err != nil || ack.Conn != 2 {
			t.Fatalf("ack %+v, %v; want it over connection 2", ack, err)
		}
	}
}
