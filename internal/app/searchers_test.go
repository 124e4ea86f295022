package app

import (
	"context"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

type stubSearcher pipeline.SearchOutcome

func (s stubSearcher) Search(context.Context, pipeline.SearchRequest) pipeline.SearchOutcome {
	return pipeline.SearchOutcome(s)
}

// TestJoinSearchers: the outcomes of every searcher are joined; one that
// failed or skipped keeps its error or note beside the others' hits.
func TestJoinSearchers(t *testing.T) {
	web := stubSearcher{Hits: []pipeline.Hit{{URL: "https://example.org/a"}}, Errors: []string{"search backend brave: HTTP 500"}}
	if got, ok := joinSearchers(web, nil).(stubSearcher); !ok || len(got.Hits) != 1 {
		t.Errorf("one searcher is wrapped: %T", got)
	}
	workspace := stubSearcher{Notes: []string{"Workspace search skipped: no permission token from the person who asked"}}
	failing := stubSearcher{Errors: []string{"search backend slack-workspace: rate limited by Slack (retry after 7s)"}}
	out := joinSearchers(web, []pipeline.Searcher{workspace, failing}).Search(context.Background(), pipeline.SearchRequest{Text: "q"})
	if len(out.Hits) != 1 || len(out.Errors) != 2 || len(out.Notes) != 1 {
		t.Errorf("joined outcome %+v, want the web's hit, both errors and the note", out)
	}
}

// kindsSearcher is a searcher that says which kinds it serves.
type kindsSearcher []string

func (k kindsSearcher) Kinds() []string { return k }
func (kindsSearcher) Search(context.Context, pipeline.SearchRequest) pipeline.SearchOutcome {
	return pipeline.SearchOutcome{}
}

// TestJoinedSearchersServeTheUnionOfTheirKinds: the kinds a poor search may
// be retried with are those some searcher serves; one that does not say adds
// none.
func TestJoinedSearchersServeTheUnionOfTheirKinds(t *testing.T) {
	joined := joinSearchers(kindsSearcher{"web", "news"}, []pipeline.Searcher{stubSearcher{}, kindsSearcher{"academic", "web"}})
	ks, ok := joined.(pipeline.KindsServer)
	if !ok {
		t.Fatalf("%T does not say which kinds it serves", joined)
	}
	if got := strings.Join(ks.Kinds(), ","); got != "web,news,academic" {
		t.Errorf("kinds %s, want web,news,academic", got)
	}
}
