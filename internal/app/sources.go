package app

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/search"
)

// SourceCheck is one configured search backend and how its check went.
type SourceCheck struct {
	// Type is "web" (a search service), "mcp" (an MCP server) or
	// "documents" (the document collection of DOCS_DIR).
	Type string
	// Name is the backend's name, as errors and metrics give it.
	Name string
	// Kinds are the query kinds it serves.
	Kinds []string
	// Where is how an MCP server is reached ("stdio: cmd", "http: url").
	Where string
	// Err is why the check failed, nil when it passed; Detail says what
	// the check found.
	Err    error
	Detail string
}

// testQuery is the search a web backend answers to pass its check.
const testQuery = "research"

// CheckSources builds every configured search backend and checks them all
// at once, each within timeout: a web backend answers a one-result search;
// an MCP server is connected, lists its tools and has the configured ones,
// read-only. The checks come back in the order searches use the backends.
func CheckSources(ctx context.Context, cfg config.Config, httpClient *http.Client, timeout time.Duration) []SourceCheck {
	clock := quartz.NewReal() // a one-shot check, before any App exists
	web, mcps := searchBackends(cfg, httpClient, clock)
	checks := make([]SourceCheck, len(web)+len(mcps))
	var wg sync.WaitGroup
	check := func(i int, f func(context.Context) (string, error)) {
		wg.Add(1)
		go func() { // owner: CheckSources, which waits
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			checks[i].Detail, checks[i].Err = f(ctx)
			if checks[i].Err != nil && ctx.Err() != nil {
				checks[i].Err = fmt.Errorf("no answer within %s", timeout)
			}
		}()
	}
	for i, b := range web {
		checks[i] = SourceCheck{Type: "web", Name: b.Name(), Kinds: kindNames(b.Kinds())}
		check(i, func(ctx context.Context) (string, error) {
			res, err := b.Search(ctx, search.Query{Text: testQuery, Kind: b.Kinds()[0], Limit: 1})
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("answered a test search (results: %d)", len(res)), nil
		})
	}
	for j, b := range mcps {
		i := len(web) + j
		checks[i] = SourceCheck{Type: "mcp", Name: b.Name(), Kinds: kindNames(b.Kinds()), Where: b.Server().Transport()}
		check(i, b.Check)
	}
	wg.Wait()
	for _, b := range mcps {
		_ = b.Close() // a stdio server's exit status is its own
	}
	if len(cfg.DocsDirs) > 0 {
		checks = append(checks, checkDocs(cfg, clock.Now()))
	}
	return checks
}

func kindNames(kinds []search.Kind) []string {
	out := make([]string, len(kinds))
	for i, k := range kinds {
		out[i] = string(k)
	}
	return out
}
