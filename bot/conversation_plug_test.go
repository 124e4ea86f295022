package bot_test

import (
	"slices"
	"testing"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/clarify"
	"github.com/researchbot/researchbot/bot/followups"
	"github.com/researchbot/researchbot/bot/sharedfiles"
	"github.com/researchbot/researchbot/bot/steering"
	"github.com/researchbot/researchbot/pipeline"
)

// plugConversation plugs bot/clarify, bot/steering and bot/followups into
// c, over the real engine e, as the assembly does (internal/app/roles):
// Clarify, Steering and FollowUps, and the follow-ups' "Research this" button in Features. Zero
// limits are the features' defaults; plugging again replaces them (a test's
// edit of startRealStack's Config sets its own limits so).
func plugConversation(t *testing.T, c *bot.Config, e *pipeline.Engine, steerLimit, followUpLimit bot.Limit) {
	t.Helper()
	answers, err := clarify.New(clarify.Config{Engine: e, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	steer, err := steering.New(steering.Config{Engine: e, Budget: c.Budget, Limit: steerLimit, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	fu, err := followups.New(followups.Config{Engine: e, Budget: c.Budget, Limit: followUpLimit, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	c.Features = slices.DeleteFunc(c.Features, func(r bot.Registrar) bool { _, ok := r.(*followups.Feature); return ok })
	c.Clarify, c.Steering, c.FollowUps, c.Features = answers, steer, fu, append(c.Features, fu)
}

// plugSharedFiles plugs bot/sharedfiles into c (Files), over the real
// engine e, as the assembly does.
func plugSharedFiles(t *testing.T, c *bot.Config, e *pipeline.Engine) {
	t.Helper()
	files, err := sharedfiles.New(sharedfiles.Config{Engine: e, Kit: kitOf(c)})
	if err != nil {
		t.Fatal(err)
	}
	c.Files = files
}
