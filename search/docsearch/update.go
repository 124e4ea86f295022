package docsearch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"github.com/researchbot/researchbot/extract"
)

// Report is what one Update did.
type Report struct {
	// Added, Changed and Removed count files new to the index, read again
	// because their size or modification time changed, and gone from the
	// folders; Unchanged ones were not read.
	Added, Changed, Removed, Unchanged int
	// Skipped counts the files added or changed that could not be read
	// (Status says why).
	Skipped int
	// Read lists the files extracted ("<root>/<rel>"), in order.
	Read []string
	// FolderErrors are the folders that could not be listed; their files
	// are kept as they were.
	FolderErrors []error
	Took         time.Duration
}

// Update brings the index up to date with the folders: files added or
// changed (by size or modification time) are extracted and indexed, files
// removed are dropped, the others are not read. Work is written in batches,
// so an Update ended by ctx keeps what it did.
func (c *Collection) Update(ctx context.Context) (Report, error) {
	c.update.Lock()
	defer c.update.Unlock()
	start := c.clock.Now()
	old := c.manifest()
	files, unlisted := c.walk(ctx) // unlisted: roots whose listing failed, whose files are kept
	rep := Report{}
	for _, r := range c.roots {
		if err := unlisted[r.Name]; err != nil {
			rep.FolderErrors = append(rep.FolderErrors, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	next := &manifest{Version: manifestVersion, Files: maps.Clone(old.Files), Checked: old.Checked, Changed: old.Changed}
	batch := c.index.NewBatch()
	pending, pendingBytes, changed := 0, 0, false
	flush := func(final bool) error {
		if final {
			next.Checked = c.clock.Now()
			if changed {
				next.Changed = next.Checked
			}
		}
		raw, err := json.Marshal(next)
		if err != nil {
			return err
		}
		batch.SetInternal(manifestKey, raw)
		if err := c.index.Batch(batch); err != nil {
			return fmt.Errorf("document index: %w", err)
		}
		published := *next
		published.Files = maps.Clone(next.Files)
		c.mu.Lock()
		c.m = &published
		c.mu.Unlock()
		batch.Reset()
		pending, pendingBytes = 0, 0
		return nil
	}

	for _, key := range slices.Sorted(maps.Keys(old.Files)) {
		e := old.Files[key]
		if files[key] != nil || unlisted[e.Root] != nil {
			continue
		}
		for _, id := range e.partIDs(key) {
			batch.Delete(id)
		}
		delete(next.Files, key)
		rep.Removed++
		changed = true
		pending++
	}
	for _, key := range slices.Sorted(maps.Keys(files)) {
		f := files[key]
		o := old.Files[key]
		if o != nil && o.Size == f.Size && o.ModTime == f.ModTime {
			rep.Unchanged++
			continue
		}
		if err := ctx.Err(); err != nil {
			rep.Took = c.clock.Now().Sub(start)
			return rep, errorsJoin(err, flush(false))
		}
		e, parts := c.read(ctx, f)
		if o != nil {
			for _, id := range o.partIDs(key) {
				batch.Delete(id)
			}
			rep.Changed++
		} else {
			rep.Added++
		}
		if e.Skipped != "" {
			rep.Skipped++
			c.log.Info("document skipped", "root", e.Root, "path", e.Rel, "reason", e.Skipped)
		}
		rep.Read = append(rep.Read, key)
		for i, p := range parts {
			if p.text == "" {
				continue
			}
			if err := batch.Index(partID(key, p.n), map[string]any{fieldText: p.text, fieldTitle: e.Title + " " + e.Rel}); err != nil {
				return rep, fmt.Errorf("document index: %w", err)
			}
			pendingBytes += len(parts[i].text)
		}
		next.Files[key] = e
		changed = true
		if pending++; pending >= batchFiles || pendingBytes >= batchBytes {
			if err := flush(false); err != nil {
				return rep, err
			}
		}
	}
	rep.Took = c.clock.Now().Sub(start)
	if err := flush(true); err != nil {
		return rep, err
	}
	if err := c.writeStatus(); err != nil {
		return rep, fmt.Errorf("document index status: %w", err)
	}
	return rep, nil
}

func errorsJoin(a, b error) error {
	if b == nil {
		return a
	}
	return fmt.Errorf("%w (and saving what was done: %w)", a, b)
}

// part is one index document of a file: page n (from 1) of a paged
// document, or the whole text (n 0).
type part struct {
	n    int
	text string
}

// read extracts the file of f within the collection's bounds. A file that
// cannot be read comes back with Skipped set and no parts.
func (c *Collection) read(ctx context.Context, f *entry) (*entry, []part) {
	e := *f
	if !extract.ReadsByName(e.Rel) {
		e.Skipped = fmt.Sprintf("not a kind of document read (%s); accepted: %s", orUnknown(path.Ext(e.Rel)), extract.Accepted)
		return &e, nil
	}
	if e.Size > MaxFileBytes {
		e.Skipped = fmt.Sprintf("larger than %d MiB", MaxFileBytes>>20)
		return &e, nil
	}
	p, ok := c.path(&e)
	if !ok {
		e.Skipped = "its folder is no longer configured"
		return &e, nil
	}
	body, err := readFile(p)
	if err != nil {
		e.Skipped = "cannot read it: " + err.Error()
		return &e, nil
	}
	ctx, cancel := context.WithTimeout(ctx, fileTimeout)
	defer cancel()
	d, err := extract.Extract(ctx, body, extract.TypeByName(e.Rel), extract.Limits{MaxBytes: MaxFileBytes, MaxRunes: MaxFileRunes})
	if err != nil {
		e.Skipped = err.Error()
		return &e, nil
	}
	e.Kind, e.Title, e.Pages, e.Truncated, e.Note = string(d.Kind), d.Title, d.PageCount, d.Truncated, d.Note
	if len(d.PageStarts) == 0 {
		e.Pages = 0
		e.Parts = 1
		return &e, []part{{n: 0, text: d.Text}}
	}
	parts := make([]part, len(d.PageStarts))
	for i, s := range d.PageStarts {
		end := len(d.Text)
		if i+1 < len(d.PageStarts) {
			end = d.PageStarts[i+1]
		}
		parts[i] = part{n: i + 1, text: d.Text[s:end]}
	}
	e.Parts = len(parts)
	if e.Pages == 0 {
		e.Pages = len(parts)
	}
	return &e, parts
}

// readFile reads at most MaxFileBytes of the regular file at p.
func readFile(p string) ([]byte, error) {
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	body, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d MiB", MaxFileBytes>>20)
	}
	return body, nil
}

func orUnknown(ext string) string {
	if ext == "" {
		return "no suffix"
	}
	return ext
}
