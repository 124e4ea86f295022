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
	"PostMessageContext":   "chat:write", // chat.postMessage (also response_url replies, which need none)
	"UpdateMessageContext": "chat:write", // chat.update
	// chat.startStream, chat.appendStream, chat.stopStream: the streamed plan
	// (presenter_stream.go); Slack's method pages name chat:write.
	"StartStreamContext":   "chat:write",
	"AppendStreamContext":  "chat:write",
	"StopStreamContext":    "chat:write",
	"PostEphemeralContext": "chat:write",  // chat.postEphemeral
	"UploadFileContext":    "files:write", // files.getUploadURLExternal, files.completeUploadExternal
	"DeleteFileContext":    "files:write", // files.delete: a draft's file replaced by the next draft's
	"GetFileInfoContext":   "files:read",  // files.info: a shared file Slack describes only by id
	"GetUserInfoContext":   "users:read",  // users.info
	"GetBotInfoContext":    "users:read",  // bots.info
	"AuthTestContext":      "",            // auth.test
	"OpenViewContext":      "",            // views.open
	"UpdateViewContext":    "",            // views.update
	"PublishViewContext":   "",            // views.publish (the App Home)
	"GetPermalinkContext":  "",            // chat.getPermalink
	// apps.connections.open (Sender.OpenConnection, the start-up check of
	// SLACK_APP_TOKEN): the app-level token's connections:write, not a bot
	// scope of the manifest.
	"StartSocketModeContext": "",

	// conversations.replies and conversations.history (postonce.go): only
	// after a takeover finds a post of a run that may have been made, in
	// the run's own thread or conversation; the conversation's kind decides
	// which scope Slack checks, so each is needed (im:history is requested
	// for message.im already).
	"GetConversationRepliesContext": "channels:history groups:history mpim:history im:history",
	"GetConversationHistoryContext": "channels:history groups:history mpim:history im:history",

	"SetAssistantThreadsStatusContext":           "chat:write",      // assistant.threads.setStatus (chat:write or assistant:write)
	"SetAssistantThreadsTitleContext":            "assistant:write", // assistant.threads.setTitle
	"SetAssistantThreadsSuggestedPromptsContext": "assistant:write", // assistant.threads.setSuggestedPrompts

	// assistant.search.context (workspacesearch): one search of public
	// channels, one of private channels, group DMs and DMs; messages and files.
	"SearchAssistantContextContext": "search:read.public search:read.private search:read.mpim search:read.im search:read.files",
}

// scopeOfEvent is the scope a bot event subscription needs ("" for none).
var scopeOfEvent = map[string]string{
	"app_home_opened": "",
	// The assistant panel's events need no scope of their own.
	"assistant_thread_started":         "",
	"assistant_thread_context_changed": "",
	"app_mention":                      "app_mentions:read",
	"message.channels":                 "channels:history",
	"message.groups":                   "groups:history",
	"message.im":                       "im:history",
	"message.mpim":                     "mpim:history",
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
	// The packages under bot that call the Web API.
	sub, err := filepath.Glob("workspacesearch/*.go")
	if err != nil || len(sub) == 0 {
		t.Fatalf("no workspacesearch sources (%v): the scan is broken", err)
	}
	names = append(names, sub...)
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
			for _, sc := range strings.Fields(scope) {
				need[sc] = sel.Sel.Name
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
	events := regexp.MustCompile(`(?m)^\s+- ((?:message\.|app_|assistant_)[a-z_]+)\s*(?:#.*)?$`).FindAllStringSubmatch(manifest, -1)
	if len(events) == 0 {
		t.Fatal("found no event subscriptions; the scan is broken")
	}
	for _, e := range events {
		scope, known := scopeOfEvent[e[1]]
		if !known {
			t.Errorf("event %s is not in scopeOfEvent: add it with the scope it needs", e[1])
		}
		if scope != "" {
			need[scope] = e[1]
		}
	}
	bot := manifest[strings.Index(manifest, "    bot:\n"):strings.Index(manifest, "settings:")]
	var have []string
	for _, m := range regexp.MustCompile(`(?m)^\s+- ([a-z._:]+)(\s*#\s*\S.*)?$`).FindAllStringSubmatch(bot, -1) {
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
