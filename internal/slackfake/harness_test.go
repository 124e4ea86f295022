package slackfake

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

// handler is a tiny bot: it gets every socket mode event and must ack the
// requests it cares about.
type handler func(evt socketmode.Event, client *socketmode.Client)

// ackAll acknowledges every request with an empty payload.
func ackAll(evt socketmode.Event, client *socketmode.Client) {
	if evt.Request != nil && evt.Request.EnvelopeID != "" {
		_ = client.Ack(*evt.Request)
	}
}

// startBot runs slack-go's real socketmode client against fake until the test
// ends, dispatching events to h. It waits for the first connection.
func startBot(t *testing.T, fake *Server, h handler, opts ...socketmode.Option) *slack.Client {
	t.Helper()
	api := slack.New(fake.BotToken(), slack.OptionAppLevelToken(fake.AppToken()), slack.OptionAPIURL(fake.APIURL()))
	client := socketmode.New(api, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = client.RunContext(ctx) })
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case evt := <-client.Events:
				h(evt, client)
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := fake.WaitConnected(wctx); err != nil {
		t.Fatalf("bot did not connect: %v", err)
	}
	return api
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recv waits for one value from ch.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting for the bot")
		var zero T
		return zero
	}
}
