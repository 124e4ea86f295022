package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
)

// Files shared while a run waits for its plan: a file shared with the bot
// in a run's thread before the plan is approved joins the run's files and
// is read first, like a file given when it started.

// MaxFilesBytes bounds the files of one run together (their sizes as
// downloaded or read, before extraction): four times the largest document
// read (extract's byte limit, 5 MiB).
const MaxFilesBytes = 4 * 5 << 20

// Errors of Engine.AttachFiles; on each of them nothing was recorded.
var (
	// ErrFilesClosed: the run has searched already (its plan was approved,
	// or it runs without one); files shared now would not be read first.
	ErrFilesClosed = errors.New("the run has started searching; files can no longer be added")
	// ErrTooManyFiles: the run would have more than MaxFiles files, or
	// more than MaxFilesBytes of them.
	ErrTooManyFiles = errors.New("the run has as many files as it reads")
	// ErrRunBusy: a worker is making the run's plan right now; files can
	// be added once the plan is shown.
	ErrRunBusy = errors.New("the run is making its plan right now")
)

// FileOrigin says where a file cited by the report came from: "shared by
// @U123" for a file shared in Slack, "file given to this run" otherwise.
func (r Reference) FileOrigin() string {
	if r.SharedBy != "" {
		return "shared by @" + flatLine(r.SharedBy)
	}
	return "file given to this run"
}

// FilesOpen reports whether r still takes files: it has not finished and
// has not searched yet: it is queued or planning, or waits for its plan
// to be approved (a decided plan checkpoint is no longer waited on, even
// before a worker takes the decision).
func FilesOpen(r *Run) bool {
	if r.Status.Final() || r.Report != nil {
		return false
	}
	for _, q := range r.Queries {
		if q.Status != "pending" {
			return false
		}
	}
	if r.Step == StepPlan {
		return true
	}
	c := r.Current()
	return r.Step == StepSearch && r.Status == StatusWaiting && c != nil && c.Decision == nil
}

// FilesRoom says how many more files, and bytes of them, r takes.
func FilesRoom(r *Run) (files int, bytes int64) {
	bytes = MaxFilesBytes
	for _, f := range r.Files {
		bytes -= f.Bytes
	}
	return max(MaxFiles-len(r.Files), 0), max(bytes, 0)
}

// AttachFiles adds files shared in the run's conversation to a run that has
// not searched yet (compare-and-set) and returns the run as stored: they
// become its first sources at once, read, and are cited by name and by
// who shared them. Each file must have been shared in the run's own
// conversation (invariant 12) and have text; the run takes at most
// MaxFiles files and MaxFilesBytes of them (ErrTooManyFiles); a run that
// has searched already refuses them (ErrFilesClosed), and so does one a
// worker is planning (ErrRunBusy: its save would lose to this one). Who may add files is
// the caller's rule (the bot's: who may steer the run).
func (e *Engine) AttachFiles(ctx context.Context, runID string, files []File) (*Run, error) {
	if len(files) == 0 {
		return nil, errors.New("no files to attach")
	}
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, err
	}
	if p := validateFiles(files); len(p) > 0 {
		return r, &InvalidRequestError{Problems: p}
	}
	var refused error
	err = e.update(ctx, r, func(r *Run) bool {
		n, room := FilesRoom(r)
		var size int64
		for _, f := range files {
			size += f.Bytes
		}
		switch {
		case !FilesOpen(r):
			refused = ErrFilesClosed
			return false
		case r.Status == StatusRunning:
			refused = ErrRunBusy
			return false
		case len(files) > n || size > room:
			refused = ErrTooManyFiles
			return false
		}
		now := e.cfg.Clock.Now()
		for _, f := range files {
			r.Files = append(r.Files, f)
			r.trace(now, r.Step, "file %s shared by %s", clipText(flatLine(f.Name), 120), flatLine(f.SharedBy))
		}
		if r.Step != StepPlan {
			r.attachFiles(now) // the plan step attached the others already
		}
		return true
	})
	err = cmp.Or(err, refused)
	if err != nil && !errors.Is(err, ErrFilesClosed) && !errors.Is(err, ErrTooManyFiles) && !errors.Is(err, ErrRunBusy) {
		return r, fmt.Errorf("attach files to run %s: %w", runID, err)
	}
	return r, err
}
