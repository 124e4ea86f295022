package blockkit

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/internal/goldentest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden compares v's JSON with testdata/golden/name.json (or rewrites it).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	goldentest.JSON(t, filepath.Join("testdata", "golden", name+".json"), v, *update)
}

// msg wraps blocks like a chat.postMessage body.
func msg(blocks []slack.Block) map[string]any { return map[string]any{"blocks": blocks} }
