package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Steering a run while it runs: a person who may decide a run's checkpoints
// (its requester, an approver) adds a short note while it searches, reads,
// analyses or writes ("focus on Europe", "skip vendor blogs"). The note is
// stored with the run by a compare-and-set save, like every other edit of a
// run, and every later planner, ranker, reformulator, analyst, writer and
// reviewer prompt carries the run's notes in a section of their own: the
// requester's instructions about the research content, bounded, never above
// the prompt's rules or output format. A step that is running when the
// note arrives does not see it; the next one does.

// Bounds of steering (invariant 7).
const (
	// MaxSteeringNotes is how many notes one run takes.
	MaxSteeringNotes = 10
	// MaxSteeringNoteRunes is the longest note taken, in characters.
	MaxSteeringNoteRunes = 500
)

// Errors of Engine.Steer; on each of them nothing was recorded.
var (
	// ErrTooManyNotes: the run already has MaxSteeringNotes notes.
	ErrTooManyNotes = errors.New("the run has as many steering notes as allowed")
	// ErrNoteTooLong: the note is longer than MaxSteeringNoteRunes.
	ErrNoteTooLong = errors.New("the steering note is too long")
	// ErrEmptyNote: the note has no text.
	ErrEmptyNote = errors.New("the steering note is empty")
)

// SteeringNote is one note a person gave a run while it ran.
type SteeringNote struct {
	Text string    `json:"text"`
	By   string    `json:"by"`
	At   time.Time `json:"at"`
	// Step is the step the run was at when the note came: the note applies
	// from the step after it.
	Step Step `json:"step"`
}

// Steer records a steering note on a running run (compare-and-set) and
// returns the run as stored. The run must not be finished (ErrRunFinished);
// the note is trimmed, must not be empty (ErrEmptyNote) or longer than
// MaxSteeringNoteRunes (ErrNoteTooLong), and the run takes at most
// MaxSteeringNotes (ErrTooManyNotes). Who may steer is the caller's rule
// (the bot's: the requester and approvers), as for decisions.
func (e *Engine) Steer(ctx context.Context, runID, by, text string) (*Run, SteeringNote, error) {
	text = strings.TrimSpace(strings.ToValidUTF8(text, "\uFFFD"))
	switch {
	case text == "":
		return nil, SteeringNote{}, ErrEmptyNote
	case utf8.RuneCountInString(text) > MaxSteeringNoteRunes:
		return nil, SteeringNote{}, ErrNoteTooLong
	case by == "":
		return nil, SteeringNote{}, errors.New("a steering note needs the person who gave it")
	}
	r, err := e.cfg.Store.Load(ctx, runID)
	if err != nil {
		return nil, SteeringNote{}, err
	}
	var note SteeringNote
	var refused error
	err = e.update(ctx, r, func(r *Run) bool {
		switch {
		case r.Status.Final():
			refused = ErrRunFinished
			return false
		case len(r.Notes) >= MaxSteeringNotes:
			refused = ErrTooManyNotes
			return false
		}
		now := e.cfg.Clock.Now()
		note = SteeringNote{Text: text, By: by, At: now, Step: r.Step}
		r.Notes = append(r.Notes, note)
		r.trace(now, r.Step, "steering note from %s: %s", by, clipText(flatLine(text), 120))
		return true
	})
	err = cmp.Or(err, refused)
	return r, note, err
}

// rebaseNotes lets a save that lost its compare-and-set to steering notes
// go on: when every save since r.Version added exactly one note (the only
// edit Steer makes), r takes those notes and the stored version, and
// reports true; otherwise it reports false and r is unchanged. A worker
// whose step ran while a note came keeps its step's work this way.
func (e *Engine) rebaseNotes(ctx context.Context, r *Run) bool {
	fresh, err := e.cfg.Store.Load(ctx, r.ID)
	if err != nil || fresh.Version <= r.Version {
		return false
	}
	added := len(fresh.Notes) - len(r.Notes)
	if added <= 0 || int64(added) != fresh.Version-r.Version {
		return false
	}
	for i, n := range r.Notes {
		if fresh.Notes[i].At != n.At || fresh.Notes[i].By != n.By {
			return false
		}
	}
	for _, n := range fresh.Notes[len(r.Notes):] {
		r.Notes = append(r.Notes, n)
		r.trace(n.At, n.Step, "steering note from %s: %s", n.By, clipText(flatLine(n.Text), 120))
	}
	r.Version, r.SaveNonce, r.SaveProbe = fresh.Version, fresh.SaveNonce, nil
	return true
}

// steeringBlocks is noteBlocks of r's notes.
func steeringBlocks(r *Run) []string { return noteBlocks(r.Notes) }

// noteBlocks wraps each note in its own <requester_note> block, oldest
// first: the requester's instruction, set apart from the untrusted data.
// Any delimiter inside a note is neutralised, so a note can neither close
// its block nor open another; its text is one line, as a person typed it
// into one message.
func noteBlocks(notes []SteeringNote) []string {
	out := make([]string, 0, len(notes))
	for i, n := range notes {
		text := neutralise(clipText(flatLine(n.Text), MaxSteeringNoteRunes))
		out = append(out, fmt.Sprintf("<requester_note n=\"%d\" given_during=\"%s\">\n%s\n</requester_note>", i+1, attrSafe(string(n.Step)), text))
	}
	return out
}

// steeringProvenance lists r's notes for the report.
func steeringProvenance(r *Run) []string {
	out := make([]string, 0, len(r.Notes))
	for _, n := range r.Notes {
		out = append(out, fmt.Sprintf("%s (by %s during %s, %s)", clipText(flatLine(n.Text), MaxSteeringNoteRunes), n.By, n.Step, n.At.UTC().Format("2006-01-02 15:04 MST")))
	}
	return out
}

// stopRequest matches a message that asks to stop the run rather than
// steer it: "stop", "please cancel this run", "abort!" — a stop word with
// at most a few filler words, so "stop including vendor blogs" stays a note.
var stopRequest = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:please\s+)?(?:stop|cancel|abort|halt|terminate|kill)(?:\s+(?:it|this|that|the|now|run|research|search|searching|everything|please|right|away))*$`)
})

// IsStopRequest reports whether a steering message asks to stop the run
// (cancel it, with a confirmation) rather than steer it. Slack and the
// terminal read steering messages alike.
func IsStopRequest(text string) bool {
	t := strings.ToLower(strings.Join(strings.FieldsFunc(text, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '\'')
	}), " "))
	return stopRequest().MatchString(t)
}
