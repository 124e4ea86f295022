package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// clockNames are the functions of package time that read the machine's
// clock or wait on it. Product code reads the time and waits on the one
// quartz.Clock the assembly (internal/app, cmd/researchbot) hands it, so
// that a test can drive every time-dependent path with a mock instead of
// sleeping.
var clockNames = []string{"Now", "Since", "Until", "Sleep", "After", "AfterFunc", "Tick", "NewTimer", "NewTicker"}

// testSupport lists the packages that exist only for tests (never imported
// by product code, see the inward table) and may use the real clock: they
// stand in for the outside world, in its time.
var testSupport = map[string]string{
	"internal/slackfake":    "the fake Slack has real connections: write deadlines, pings, acks' latency",
	"internal/redistest":    "starting a real redis-server (and Sentinel) is waited for in real time",
	"internal/researchtest": "the fake web's latencies, and Clock itself, a settable quartz.Clock whose timers run in real time",
	"internal/mcpfake":      "a fake MCP server",
	"internal/faults":       "the fault suite, tests only",
	"internal/goldentest":   "test helper",
	"bot/bottest":           "waits for the App it runs to stop and for the fake Slack, in real time, as the fake's acks are timed; its Engine stamps the runs people start",
	"internal/archtest":     "this test",
	"llm/llmtest":           "the fake OpenAI server's reply delays and response stamps",
}

// realClock lists the product files (module-relative) that may still call
// package time's clock directly, each with its reason. Everything else
// reads the injected quartz.Clock.
var realClock = map[string]string{
	// One-shot commands read the wall clock once, as the entry point that
	// creates the process's clock may.
	"cmd/researchbot/cmd_status.go":      "`status` shows ages as of the moment it is run",
	"cmd/researchbot/runs_list.go":       "`runs` shows ages as of the moment it is run",
	"cmd/researchbot/cmd_prune.go":       "`prune` cuts off at the moment it is run",
	"cmd/researchbot/cmd_docs.go":        "`docs` reports the collection as of the moment it is run",
	"cmd/researchbot/cmd_checkpoints.go": "`checkpoints` stamps an admin's edit at the moment it is run",
	"cmd/researchbot/cmd_eval.go":        "`eval` reports each question's wall time",
	// Spans are stamped by OpenTelemetry on the wall clock; a decision's
	// span starts on the same clock as the library ends it.
	// The Redis adapter's own timing, in real time where Redis or the
	// operating system measures it so.
	"redisstore/lock.go":         "a lease's validity is measured from before its command was sent, against Redis's own expiry of the key: both real time",
	"redisstore/createdlease.go": "a lease taken by a create is adopted by its age measured as lock.go measures a lease's (from before the create was sent, against Redis's own expiry of the key): real time",
	"redisstore/worker.go":       "the worker's shutdown bound: a process given SIGTERM is killed after a real grace period, whatever clock its runs read (its passes, deadline timer and retries read the injected clock)",
	"redisstore/quietlog.go":     "the rate of repeated warnings of go-redis's logger: log timing, like the log's timestamps",
}

// clockCall is a use of one of package time's clock functions.
type clockCall struct {
	pos  token.Position
	name string
}

// clockCalls returns every use (a call or a function value) of package
// time's clock functions in file.
func clockCalls(fset *token.FileSet, file string) ([]clockCall, error) {
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var local string
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			local = "time"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" || local == "_" {
		return nil, nil
	}
	var calls []clockCall
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == local && slices.Contains(clockNames, sel.Sel.Name) {
			calls = append(calls, clockCall{fset.Position(sel.Pos()), sel.Sel.Name})
		}
		return true
	})
	return calls, nil
}

// productFiles returns the non-test Go files of every package of the
// module, whatever their build tags, by module-relative package.
func productFiles(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}}{{range .GoFiles}} {{.}}{{end}}{{range .IgnoredGoFiles}} {{.}}{{end}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	files := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		for _, name := range fields[2:] {
			if !strings.HasSuffix(name, "_test.go") {
				files[pkg] = append(files[pkg], filepath.Join(fields[1], name))
			}
		}
	}
	return files
}

// TestOneClock: product code reads the time and waits only on the
// quartz.Clock it is handed, outside the reasoned exceptions above.
func TestOneClock(t *testing.T) {
	fset := token.NewFileSet()
	used := map[string]bool{}
	for pkg, files := range productFiles(t) {
		if _, ok := testSupport[pkg]; ok {
			continue
		}
		for _, file := range files {
			rel := pkg + "/" + filepath.Base(file)
			calls, err := clockCalls(fset, file)
			if err != nil {
				t.Fatal(err)
			}
			if len(calls) == 0 {
				continue
			}
			if _, ok := realClock[rel]; ok {
				used[rel] = true
				continue
			}
			for _, c := range calls {
				t.Errorf("%s:%d: time.%s: read the time and wait on the injected quartz.Clock (the assembly creates the one clock), or add the file to archtest's realClock with its reason", rel, c.pos.Line, c.name)
			}
		}
	}
	for rel := range realClock {
		if !used[rel] {
			t.Errorf("archtest's realClock allows %s, which no longer uses package time's clock: remove its row", rel)
		}
	}
}

// TestClockCallsAreFound keeps TestOneClock honest: a call, a function
// value and a renamed import are all found.
func TestClockCallsAreFound(t *testing.T) {
	dir := t.TempDir()
	src := `package p

import tm "time"

var now = tm.Now

func f() { tm.Sleep(tm.Since(now())) }
`
	file := filepath.Join(dir, "p.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	calls, err := clockCalls(token.NewFileSet(), file)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range calls {
		got = append(got, fmt.Sprintf("%d:%s", c.pos.Line, c.name))
	}
	if want := []string{"5:Now", "7:Sleep", "7:Since"}; !slices.Equal(got, want) {
		t.Errorf("found %v, want %v", got, want)
	}
}
