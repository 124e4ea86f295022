package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/redisstore"
)

// fileModel is the scripted model whose writer cites the file (source 1)
// with a quote from its second page.
type fileModel struct{ *scripted }

const fileQuote = "Our field units kept a coefficient of performance of 2.1 at minus 20 degrees."

func (m fileModel) Generate(ctx context.Context, p pipeline.Prompt, out any) (pipeline.Usage, error) {
	if p.Name != "research_draft" {
		return m.scripted.Generate(ctx, p, out)
	}
	s := "Field units stay efficient at minus 20 degrees [1]."
	v := pipeline.DraftOutput{Title: "Heat pumps in the cold", Abstract: "They work.", Conclusion: "Yes.",
		Sections: []pipeline.SectionOutput{{Title: "Efficiency", Content: s}},
		Claims:   []pipeline.ClaimOutput{{Sentence: s, SourceID: 1, Quote: fileQuote}}}
	b, _ := json.Marshal(v)
	return pipeline.Usage{Calls: 1}, json.Unmarshal(b, out)
}

// fileWeb is the scripted web; each search loads the run to see whether
// the file was a read source before it.
type fileWeb struct {
	web
	store *redisstore.Store
	mu    sync.Mutex
	seen  []int // the run's page count at each search
}

func (w *fileWeb) Search(ctx context.Context, q pipeline.SearchRequest) pipeline.SearchOutcome {
	if r, err := w.store.Load(ctx, "r-1"); err == nil {
		w.mu.Lock()
		w.seen = append(w.seen, len(r.Pages))
		w.mu.Unlock()
	}
	return w.web.Search(ctx, q)
}

// TestFilesAreReadFirstAndCitedByName: a file given to a run is a read
// source before the first search, is cited by its name with its page, and
// is listed under how the report was made.
func TestFilesAreReadFirstAndCitedByName(t *testing.T) {
	ctx := context.Background()
	_, rdb := redistest.Start(t)
	store := redisstore.NewStoreWithOptions(rdb, redisstore.StoreOptions{})
	w := &fileWeb{store: store}
	pres := &presenter{}
	eng, err := pipeline.New(pipeline.Config{
		Store: store, Queue: &queue{}, Locker: redisstore.NewLocker(rdb, "", 5*time.Second),
		Model: fileModel{&scripted{reviews: []pipeline.CritiqueOutput{passes}}}, Searcher: w, Fetcher: w,
		Presenters: map[string]pipeline.Presenter{"test": pres}, Clock: researchtest.NewClock(t0),
		NewID: func() string { return "r-1" },
	})
	if err != nil {
		t.Fatal(err)
	}
	page1 := "Heat pump field trial, winter 2024.\n"
	text := page1 + fileQuote
	req := pipeline.Request{
		Question: "How well do heat pumps work in cold climates?", Mode: checkpoints.ModeAuto, RequestedBy: "U1",
		Origin: pipeline.Origin{Kind: "test", Queue: "runs"},
		Files: []pipeline.File{
			{Name: "trial.pdf", Kind: pipeline.KindPDF, Bytes: 900, Text: text, PageCount: 2, PageStarts: []int{0, len(page1)}},
			{Name: "notes.md", Kind: "markdown", Bytes: 40, Text: "Installers note that defrost cycles cost energy."},
		},
	}
	if _, err := eng.Start(ctx, req); err != nil {
		t.Fatal(err)
	}
	if err := eng.Advance(ctx, "r-1"); err != nil {
		t.Fatal(err)
	}
	r, err := store.Load(ctx, "r-1")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != pipeline.StatusCompleted || r.Report == nil {
		t.Fatalf("run %s at %s (%s), want completed with a report", r.Status, r.Step, r.FallbackReason)
	}
	if len(w.seen) == 0 || w.seen[0] != 2 {
		t.Errorf("pages read at each search %v, want the 2 files read before the first", w.seen)
	}
	for i, name := range []string{"trial.pdf", "notes.md"} {
		s := r.Sources[i]
		if s.Kind != pipeline.KindFile || s.Title != name || !s.Fetched || s.URL != "" {
			t.Errorf("source %d = %+v, want the file %s, read", i+1, s, name)
		}
		if p := r.Pages[i]; p.File != name || p.Text == "" {
			t.Errorf("page %d = file %q with %d bytes of text, want %s with its text (loaded from the store)", i+1, p.File, len(p.Text), name)
		}
		if r.Files[i].Text != "" {
			t.Errorf("file %s keeps its text in the run; it belongs to the page", name)
		}
	}
	md := r.Report.Markdown
	for _, want := range []string{
		"[1] trial.pdf — file given to this run, PDF, 2 pages\n",
		"[1, p. 2]",
		"- 2 files given: trial.pdf (PDF, 2 pages), notes.md\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report does not say %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<>") {
		t.Errorf("the report links a file to an empty address:\n%s", md)
	}
}

func TestValidateRequestFiles(t *testing.T) {
	q := "How well do heat pumps work in cold climates?"
	for _, c := range []struct {
		files []pipeline.File
		want  string
	}{
		{[]pipeline.File{{Name: "/tmp/a.md", Text: "x"}}, `file name "/tmp/a.md" must be a base name`},
		{[]pipeline.File{{Name: "a.md", Text: " \n"}}, "file a.md has no readable text"},
		{make([]pipeline.File, pipeline.MaxFiles+1), "21 files given; a run reads at most 20"},
	} {
		err := pipeline.ValidateRequest(pipeline.Request{Question: q, Files: c.files})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateRequest: %v, want %q", err, c.want)
		}
	}
	if got := pipeline.FilesAttached(2); got != "2 files attached; they will be read first" {
		t.Errorf("FilesAttached(2) = %q", got)
	}
}
