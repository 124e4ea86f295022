package bot

import (
	"time"

	"github.com/researchbot/researchbot/internal/slackfake"
)

// waitUntil waits for cond on the fake's changes (slackfake's WaitUntil).
func waitUntil(fake *slackfake.Server, limit time.Duration, cond func() bool) bool {
	return fake.WaitUntil(limit, cond)
}
