// Package archtest checks that dependencies point inward, as
// ARCHITECTURE.md's package table says: the domain never imports Slack,
// Redis or an LLM SDK, and adapters never import each other.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/researchbot/researchbot/"

// allowed lists, per package, the non-standard-library imports it may have
// (module-relative for our own packages, full paths for others). A package
// not listed may import anything (cmd, internal/app, tests' fakes).
var allowed = map[string][]string{
	"checkpoints": {},
	"config":      {},
	"pipeline":    {"checkpoints", "textmatch"},
	"textmatch":   {"golang.org/x/text"},
	"dedup":       {},
	"llm":         {"github.com/sashabaranov/go-openai", "github.com/invopop/jsonschema", "github.com/santhosh-tekuri/jsonschema/v6", "github.com/cenkalti/backoff/v4", "github.com/redis/go-redis/v9", "github.com/go-redis/redis_rate/v10"},
	"search":      {"dedup", "github.com/redis/go-redis/v9", "github.com/go-redis/redis_rate/v10", "golang.org/x/sync/errgroup"},
	"fetch":       {"code.dny.dev/ssrf", "github.com/markusmobius/go-trafilatura", "github.com/JohannesKaufmann/html-to-markdown/v2", "github.com/temoto/robotstxt", "github.com/redis/go-redis/v9", "golang.org/x/net/html", "golang.org/x/net/html/charset", "golang.org/x/text/encoding", "golang.org/x/text/transform"},
	"scheduler":   {"pipeline", "checkpoints", "dedup", "github.com/robfig/cron/v3"},
	"terminal":    {"pipeline", "checkpoints", "github.com/charmbracelet/x/ansi"},
	"redisstore":  {"pipeline", "checkpoints", "scheduler", "dedup", "github.com/redis/go-redis/v9", "github.com/hibiken/asynq", "github.com/alicebob/miniredis/v2"},
}

// forbiddenEverywhere may appear only in the packages that adapt them.
var forbidden = map[string][]string{
	"github.com/slack-go/slack":         {"bot", "internal/slackfake", "cmd/researchbot"},
	"github.com/sashabaranov/go-openai": {"llm"},
	"github.com/hibiken/asynq":          {"redisstore"},
}

func TestDependenciesPointInward(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, imp := range fields[1:] {
			if !strings.Contains(strings.Split(imp, "/")[0], ".") {
				continue // standard library
			}
			name := strings.TrimPrefix(imp, module)
			if allow, ok := allowed[pkg]; ok && !permitted(allow, name) && !strings.HasPrefix(name, pkg+"/") {
				t.Errorf("%s imports %s, which ARCHITECTURE.md does not allow", pkg, name)
			}
			for lib, users := range forbidden {
				if strings.HasPrefix(imp, lib) && !contains(users, pkg) && !strings.HasPrefix(pkg, "bot/") {
					t.Errorf("%s imports %s; only %v may", pkg, imp, users)
				}
			}
		}
	}
}

// permitted reports whether name is in allow, or a package inside one of
// the allowed third-party modules.
func permitted(allow []string, name string) bool {
	for _, a := range allow {
		if name == a || (strings.Contains(a, ".") && strings.HasPrefix(name, a+"/")) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
