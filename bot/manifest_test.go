package bot

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scopeOfCall is the bot scope each slack-go Web API call the package makes
// needs ("" for none). A new call must be added here, which makes whoever
// adds it check the manifest.
var scopeOfCall = map[string]string{
	"PostMessageContext":   "chat:write",  // chat.postMessage (also response_url replies, which need none)
	"UpdateMessageContext": "chat:write",  // chat.update
	"PostEphemeralContext": "chat:write",  // chat.postEphemeral
	"UploadFileContext":    "files:write", // files.getUploadURLExternal, files.completeUploadExternal
	"GetUserInfoContext":   "users:read",  // users.info
	"GetBotInfoContext":    "users:read",  // bots.info
	"AuthTestContext":      "",            // auth.test
	"OpenViewContext":      "",            // views.open
	"UpdateViewContext":    "",            // views.update
	"PublishViewContext":   "",            // views.publish (the App Home)
	"GetPermalinkContext":  "",            // chat.getPermalink
}

// scopeOfEvent is the scope a bot event subscription needs.
var scopeOfEvent = map[string]string{
	"message.channels": "channels:history",
	"message.groups":   "groups:history",
	"message.im":       "im:history",
	"message.mpim":     "mpim:history",
}

// TestManifestRequestsExactlyTheScopesTheCodeUses reads every Web API call
// in the package's code and the manifest's scopes and events: each scope
// the code needs is requested, each requested scope is needed by a call, an
// event or the slash command, and each says why in a comment.
func TestManifestRequestsExactlyTheScopesTheCodeUses(t *testing.T) {
	need := map[string]string{}
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			recv, ok := sel.X.(*ast.SelectorExpr)
			if !ok || recv.Sel.Name != "api" {
				return true
			}
			calls++
			scope, known := scopeOfCall[sel.Sel.Name]
			if !known {
				t.Errorf("%s: Web API call %s is not in scopeOfCall: add it with the scope it needs, and to the manifest", fset.Position(call.Pos()), sel.Sel.Name)
			}
			if scope != "" {
				need[scope] = sel.Sel.Name
			}
			return true
		})
	}
	if calls < 10 {
		t.Fatalf("found only %d Web API calls; the scan is broken", calls)
	}
	raw, err := os.ReadFile("../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest := string(raw)
	if strings.Contains(manifest, "slash_commands:") {
		need["commands"] = "the slash command"
	}
	events := regexp.MustCompile(`(?m)^\s+- (message\.[a-z]+)\s*$`).FindAllStringSubmatch(manifest, -1)
	for _, e := range events {
		need[scopeOfEvent[e[1]]] = e[1]
	}
	bot := manifest[strings.Index(manifest, "    bot:\n"):strings.Index(manifest, "settings:")]
	var have []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- ([a-z.:]+)(\s*#\s*\S.*)?$`).FindAllStringSubmatch(bot, -1) {
		have = append(have, m[1])
		if m[2] == "" {
			t.Errorf("scope %s has no comment saying what uses it", m[1])
		}
		if _, ok := need[m[1]]; !ok {
			t.Errorf("the manifest requests %s, but nothing uses it", m[1])
		}
	}
	for scope, by := range need {
		if !slices.Contains(have, scope) {
			t.Errorf("%s needs scope %s, which the manifest does not request", by, scope)
		}
	}
}
