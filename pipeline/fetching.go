package pipeline

// The fetch step: the selected sources read concurrently under the run's
// domain rules, near-duplicates left out, and the pages kept.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
)

// ---- fetch ----

// stepFetch reads the selected sources. It costs no LLM spend, so it runs
// even when the cost budget is spent: the writer needs something to cite.
func (e *Engine) stepFetch(ctx context.Context, r *Run) error {
	now := e.cfg.Clock.Now()
	var todo []int
	for i, s := range r.Sources {
		if s.Selected && !s.Fetched && s.FetchErr == "" && !s.Excluded {
			todo = append(todo, i)
		}
	}
	docs := make([]Document, len(todo))
	errs := make([]error, len(todo))
	var wg sync.WaitGroup
	sem := make(chan struct{}, bound(e.cfg.FetchConcurrency, len(todo)))
	for n, i := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if s := r.Sources[i]; s.Content != "" {
				// Its backend gave its text with the hit: nothing to fetch.
				docs[n] = Document{URL: s.URL, FinalURL: s.URL, Title: s.Title, Author: s.Author, Published: s.Published, Text: s.Content, Kind: s.Kind}
				return
			}
			docs[n], errs[n] = e.fetchSource(ctx, r.Domains, r.Sources[i].URL)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	read, dup := 0, 0
	for n, i := range todo {
		s := &r.Sources[i]
		r.Spend.Fetches++
		if errs[n] != nil {
			s.FetchErr = errs[n].Error()
			r.recordError(now, StepFetch, "fetch", fmt.Sprintf("%s: %v", s.URL, errs[n]))
			continue
		}
		d := docs[n]
		if why := r.Domains.RefusalOfURL(d.FinalURL); d.FinalURL != "" && why != "" {
			s.FetchErr = "redirected to " + d.FinalURL + ": " + why
			continue
		}
		if strings.TrimSpace(d.Text) == "" {
			s.FetchErr = "no readable text"
			continue
		}
		if other, ok := r.nearDuplicate(d.Simhash); ok {
			s.FetchErr = "near-duplicate of " + other
			dup++
			continue
		}
		s.Fetched, s.Content = true, ""
		title := d.Title
		title = cmp.Or(title, s.Title)
		published := d.Published
		if published.IsZero() {
			published = s.Published
		}
		r.Pages = append(r.Pages, Page{
			SourceID: s.ID, URL: s.URL, FinalURL: d.FinalURL, Title: title, Author: d.Author,
			Published: published, Text: d.Text, Truncated: d.Truncated, Simhash: d.Simhash, FetchedAt: now,
			Kind: d.Kind, PageCount: d.PageCount, PageStarts: d.PageStarts,
		})
		if d.Note != "" {
			r.trace(now, StepFetch, "%s: %s", s.URL, d.Note)
		}
		read++
	}
	r.trace(now, StepFetch, "read %d of %d pages (%d near-duplicates left out)", read, len(todo), dup)
	r.Step = StepAnalyze
	return nil
}

// fetchSource reads one source under the run's domain rules: a URL they
// refuse is not fetched, and the Fetcher sees the rules (WithDomainRules)
// to refuse redirects. The rules of the run are checked here and not only
// at search time, as sources marked relevant may predate them.
func (e *Engine) fetchSource(ctx context.Context, rules DomainRules, u string) (Document, error) {
	if why := rules.RefusalOfURL(u); why != "" {
		return Document{}, errors.New(why)
	}
	return e.cfg.Fetcher.Fetch(WithDomainRules(ctx, rules), u)
}

// nearDuplicate reports whether a page with this fingerprint was read already
// in this run, or reported by an earlier digest.
func (r *Run) nearDuplicate(h uint64) (string, bool) {
	if h == 0 {
		return "", false
	}
	for _, p := range r.Pages {
		if p.Simhash != 0 && bits.OnesCount64(p.Simhash^h) <= 3 {
			return p.URL, true
		}
	}
	for _, k := range r.Known.Simhashes {
		if bits.OnesCount64(k^h) <= 3 {
			return "a page reported in an earlier digest", true
		}
	}
	return "", false
}
