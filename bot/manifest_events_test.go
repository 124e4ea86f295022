package bot_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/assistant"
	"github.com/researchbot/researchbot/bot/home"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// noRuns and noMemory stand in for the App Home's ports: routing asks
// neither.
type noRuns struct{}

func (noRuns) List(context.Context, pipeline.RunFilter) ([]*pipeline.Run, error) { return nil, nil }

type noMemory struct{}

func (noMemory) HomePublished(context.Context, string) (bool, error) { return false, nil }

func (noMemory) RememberHomePublished(context.Context, string, time.Duration) error { return nil }

// TestManifestSubscribesToTheEventsTheBotRoutes: every Events API event the
// bot routes, with the features the assembly plugs in that route events
// (bot/home: app_home_opened; bot/assistant: the panel's), is subscribed to in the manifest, and
// nothing else is: each subscription is a scope, so one the code does not
// need is a privilege too many.
func TestManifestSubscribesToTheEventsTheBotRoutes(t *testing.T) {
	appHome, err := home.New(home.Config{Runs: noRuns{}, Memory: noMemory{}, Kit: bot.Kit{Sender: bot.NewSender(bot.SenderConfig{BotToken: "xoxb-test"})}})
	if err != nil {
		t.Fatal(err)
	}
	panel, err := assistant.New(assistant.Config{Memory: redisstore.NewSlackMemory(nil), Kit: bot.Kit{Sender: bot.NewSender(bot.SenderConfig{BotToken: "xoxb-test"})}})
	if err != nil {
		t.Fatal(err)
	}
	routed := map[string]bool{}
	for _, typ := range bot.RoutedEvents(bot.Config{Home: appHome, Assistant: panel}) {
		routed[typ] = true
	}
	raw, err := os.ReadFile("../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := string(raw)
	events := manifest[strings.Index(manifest, "bot_events:"):]
	subscribed := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+- ([a-z_.]+)\s*(?:#.*)?$`).FindAllStringSubmatch(events, -1) {
		typ, _, _ := strings.Cut(m[1], ".") // message.im is a "message" event
		subscribed[typ] = true
	}
	for typ := range routed {
		if !subscribed[typ] {
			t.Errorf("the bot routes %s events, but the manifest does not subscribe to them", typ)
		}
	}
	for typ := range subscribed {
		if !routed[typ] {
			t.Errorf("the manifest subscribes to %s events, which the bot does not route", typ)
		}
	}
	if len(routed) == 0 {
		t.Error("the bot routes no events; the scan is broken")
	}
}
