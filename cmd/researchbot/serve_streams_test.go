package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/internal/slackfake"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
	"github.com/researchbot/researchbot/scheduler"
)

// TestServeWiresResearchStreams runs `researchbot serve` against the fake
// Slack and checks the stream wiring: "/research stream new" opens a
// conversation thread, and "/research stream run NAME" runs a digest through
// the serve process's worker and digest presenter, posted as a new message
// in the stream's channel.
func TestServeWiresResearchStreams(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	fake := slackfake.New(t)
	fake.AddChannel("C0RESEARCH", "research", true)
	fake.AddUser("U1", "ana", "Europe/Oslo")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	opt, err := redis.ParseURL(w.redisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	svc, err := scheduler.NewService(scheduler.ServiceConfig{Store: redisstore.NewStreams(rdb, "rb:"), Runner: noRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	spec := scheduler.Spec{
		Channel: "C0RESEARCH", Purpose: "Follow heat pumps", BusinessGoals: []string{"Plan"}, ExpectedOutcomes: "Decisions",
		Name: "Pumps", Type: scheduler.TypeMarket, FocusAreas: []string{"Cold climates"}, Keywords: []string{"heat pump"},
		Frequency: scheduler.Weekly, TimeOfDay: "09:00", TimeZone: "UTC", Weekday: time.Monday, MonthDay: 1,
	}
	if _, err := svc.Create(ctx, spec, "U1"); err != nil {
		t.Fatal(err)
	}

	c := w.startWith(t, serveEnv(fake), "serve")
	if err := fake.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "stream new", UserID: "U1", ChannelID: "C0RESEARCH"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fake.SlashCommand(ctx, slackfake.SlashCommand{Command: "/research", Text: "stream run Pumps", UserID: "U1", ChannelID: "C0RESEARCH"}); err != nil {
		t.Fatal(err)
	}
	var root, digest bool
	if !fake.WaitUntil(90*time.Second, func() bool {
		for _, m := range fake.Messages("C0RESEARCH") {
			if m.Ephemeral || m.ThreadTS != "" {
				continue
			}
			root = root || m.Text == "New research stream"
			digest = digest || strings.HasPrefix(m.Text, "Research ")
		}
		return root && digest
	}) {
		t.Fatalf("root %v, digest %v; log:\n%s", root, digest, c.log())
	}
	var firstTurn bool
	for _, m := range fake.Messages("C0RESEARCH") {
		firstTurn = firstTurn || (m.ThreadTS != "" && strings.Contains(string(m.Blocks), "keep an eye on"))
	}
	if !firstTurn {
		t.Error("no first turn in the conversation thread")
	}
	c.kill(t)
}

// noRunner is the Runner of a Service used here only to create streams.
type noRunner struct{}

func (noRunner) Start(context.Context, pipeline.Request) (*pipeline.Run, error) {
	return nil, errors.New("not used")
}

func (noRunner) Load(context.Context, string) (*pipeline.Run, error) {
	return nil, pipeline.ErrNotFound
}

func (noRunner) Cancel(context.Context, string, string) error { return nil }
