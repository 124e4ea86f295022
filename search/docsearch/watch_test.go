package docsearch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/search"
)

func TestWatchChecksAtOnceThenEveryInterval(t *testing.T) {
	dir := folder(t)
	c := open(t, dir)
	clock := quartz.NewMock(t)
	trap := clock.Trap().TickerFunc("docsearch", "watch")
	defer trap.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Watch(ctx, clock, 5*time.Minute)
	}()
	call := trap.MustWait(ctx) // the first check is done once the ticker is set
	call.MustRelease(ctx)
	if st := c.Status(); st.Documents != 5 {
		t.Fatalf("after the first check: %d documents", st.Documents)
	}
	writeFile(t, filepath.Join(dir, "added.md"), "A memo about the zeppelin hangar.\n")
	clock.Advance(5 * time.Minute).MustWait(ctx)
	if hits, _ := c.Search(ctx, "zeppelin hangar", 1); len(hits) != 1 || hits[0].Rel != "added.md" {
		t.Errorf("after a tick: %+v", hits)
	}
	cancel()
	<-done
}

func TestBackendResultsAreInternalDocumentsCitedByPathAndPage(t *testing.T) {
	c := open(t, folder(t))
	update(t, c)
	b := NewBackend(c)
	if b.Name() != "documents" {
		t.Errorf("name %q", b.Name())
	}
	res, err := b.Search(context.Background(), search.Query{Text: "Powered by TCPDF", Kind: search.KindWeb, Limit: 2})
	if err != nil || len(res) == 0 {
		t.Fatalf("results %+v, %v", res, err)
	}
	r := res[0]
	if r.URL != "docs://handbook/manual/toc.pdf#page=16" || r.Title != "manual/toc.pdf, p. 16" || r.Backend != "documents" || r.Kind != search.KindWeb {
		t.Errorf("result = %+v", r)
	}
	m := search.NewMulti([]search.Backend{b}, search.Options{})
	out := m.Search(context.Background(), search.Query{Text: "Powered by TCPDF"})
	if len(out.Results) == 0 || out.Results[0].URL != r.URL {
		t.Errorf("Multi drops or changes document results: %+v", out)
	}
}
