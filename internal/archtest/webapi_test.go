package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// noWebAPI lists packages that may use slack-go's Block Kit types but must
// never reach Slack: the import rules cannot say so, since the types and
// the Web API client share one package. Naming slack.Client, slack.New or
// an API option is how a call would begin.
var noWebAPI = map[string]string{
	"bot/blockkit": "rendering is pure: bot decides what to send and sends it through its one Sender",
}

// webAPINames are the slack-go names through which a package would call
// the Web API.
var webAPINames = []string{"Client", "New", "OptionAPIURL", "OptionHTTPClient", "OptionRetry", "OptionRetryConfig"}

func TestRenderingLeafCallsNoWebAPI(t *testing.T) {
	for pkg, why := range noWebAPI {
		out, err := exec.Command("go", "list", "-f", `{{.Dir}}{{range .GoFiles}} {{.}}{{end}}`, module+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		fields := strings.Fields(string(out))
		if len(fields) < 2 {
			t.Fatalf("%s has no Go files", pkg)
		}
		fset := token.NewFileSet()
		for _, name := range fields[1:] {
			f, err := parser.ParseFile(fset, filepath.Join(fields[0], name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			slackName := ""
			for _, imp := range f.Imports {
				if imp.Path.Value == `"github.com/slack-go/slack"` {
					slackName = "slack"
					if imp.Name != nil {
						slackName = imp.Name.Name
					}
				}
			}
			if slackName == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == slackName && slices.Contains(webAPINames, sel.Sel.Name) {
					t.Errorf("%s: %s uses slack.%s: %s", fset.Position(sel.Pos()), pkg, sel.Sel.Name, why)
				}
				return true
			})
		}
	}
}
