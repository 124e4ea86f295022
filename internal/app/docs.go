package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/config"
	"github.com/researchbot/researchbot/dedup"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/search"
	"github.com/researchbot/researchbot/search/docsearch"
)

// docsSlot holds the document collection of DOCS_DIR once a worker opened
// it: only processes that run research open the index (one process at a
// time may), not the commands that only read the store.
type docsSlot struct {
	c atomic.Pointer[docsearch.Collection]
}

// errDocsNotOpen is the answer of the collection in a process that does
// not hold its index.
var errDocsNotOpen = errors.New("the document collection is not open in this process (its index is in use by another process, or no worker started)")

// docsBackend is the collection as a search backend, answering once the
// collection is open.
type docsBackend struct{ slot *docsSlot }

func (b docsBackend) Name() string { return docsearch.BackendName }

func (b docsBackend) Kinds() []search.Kind { return docsearch.NewBackend(nil).Kinds() }

func (b docsBackend) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	c := b.slot.c.Load()
	if c == nil {
		return nil, &search.BackendError{Backend: docsearch.BackendName, Err: errDocsNotOpen}
	}
	return docsearch.NewBackend(c).Search(ctx, q)
}

// openDocs opens the document collection of DOCS_DIR. A collection whose
// index another process holds (a `run` in a terminal beside `serve` on
// one machine) is left out of this process, with a warning: its runs
// search the web without it. clock is the collection's (docsearch.Config).
func openDocs(cfg config.Config, log *slog.Logger, clock quartz.Clock) (*docsearch.Collection, error) {
	c, err := docsearch.Open(docsearch.Config{Dirs: cfg.DocsDirs, IndexDir: cfg.DocsIndexDir, Logger: log, Clock: clock})
	if errors.Is(err, docsearch.ErrInUse) {
		log.Warn("document collection not searched by this process: another process keeps its index", "dir", cfg.DocsIndexDir)
		return nil, nil
	}
	return c, err
}

// readDocument reads a document of the collection from the index's stored
// text: the file is not opened and nothing goes over the network, so the
// web fetcher's rules are not involved.
func (f *sourceFetcher) readDocument(ctx context.Context, u string) (pipeline.Document, error) {
	if f.docs == nil {
		return pipeline.Document{}, errors.New("no document collection is configured (DOCS_DIR)")
	}
	c := f.docs.c.Load()
	if c == nil {
		return pipeline.Document{}, errDocsNotOpen
	}
	start := f.clock.Now()
	d, err := c.Read(ctx, u)
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	f.calls.Fetch(outcome, len(d.Text), f.clock.Now().Sub(start))
	if err != nil {
		return pipeline.Document{}, err
	}
	return pipeline.Document{
		URL: u, FinalURL: u, Title: d.Title, Text: d.Text, Truncated: d.Truncated, Simhash: dedup.Simhash(d.Text),
		Kind: pdfOnly(d.Kind), PageCount: d.PageCount, PageStarts: d.PageStarts, Note: d.Note,
	}, nil
}

// pdfOnly keeps a PDF's kind; the run describes other documents as it does
// web pages.
func pdfOnly(kind string) string {
	if kind == pipeline.KindPDF {
		return kind
	}
	return ""
}

// watchDocs opens the collection (once) and keeps its index up to date in
// the background until the returned stop is called; nothing without a
// collection.
func (a *App) watchDocs() (stop func(), err error) {
	if a.docs == nil {
		return func() {}, nil
	}
	c := a.docs.c.Load()
	if c == nil {
		if c, err = openDocs(a.Config, a.log, a.opts.Clock); err != nil || c == nil {
			return func() {}, err
		}
		a.docs.c.Store(c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // owner: App.StartWorker's stop
		defer close(done)
		c.Watch(ctx, a.opts.Clock, a.Config.DocsCheckInterval)
	}()
	return func() {
		cancel()
		<-done
	}, nil
}

// closeDocs releases the collection's index.
func (a *App) closeDocs() {
	if a.docs == nil {
		return
	}
	if c := a.docs.c.Swap(nil); c != nil {
		if err := c.Close(); err != nil {
			a.log.Warn("document index closed with an error", "err", err)
		}
	}
}

// checkDocs is the collection's line of `researchbot sources`: its
// document count and the age of its index, read from the status the last
// check left (the index itself may be held by serve or worker).
func checkDocs(cfg config.Config, now time.Time) SourceCheck {
	roots := docsearch.Roots(cfg.DocsDirs)
	names := make([]string, len(roots))
	for i, r := range roots {
		names[i] = r.Name
	}
	c := SourceCheck{
		Type: "documents", Name: docsearch.BackendName, Kinds: kindNames(docsearch.NewBackend(nil).Kinds()),
		Where: "folders: " + strings.Join(names, ", "),
	}
	st, err := docsearch.ReadStatus(cfg.DocsIndexDir)
	if errors.Is(err, docsearch.ErrNeverIndexed) {
		c.Err = errors.New("not indexed yet: run `researchbot docs index`, or start serve or worker, which index it")
		return c
	}
	if err != nil {
		c.Err = err
		return c
	}
	c.Detail = fmt.Sprintf("%d documents (%d pages), %d skipped; index checked %s ago", st.Documents, st.Pages, len(st.Skipped), Age(now, st.Checked))
	return c
}

// Age is how long ago t was, rounded for people ("4m", "2h", "3d").
func Age(now, t time.Time) string {
	d := max(now.Sub(t), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
