package terminal

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/researchbot/researchbot/pipeline"
)

// fakeSteerer records notes and cancels as the engine would.
type fakeSteerer struct {
	mu        sync.Mutex
	notes     []pipeline.SteeringNote
	cancelled []string
	steered   chan string // each note's text, as it is recorded
	finished  bool
}

func (f *fakeSteerer) Steer(_ context.Context, runID, by, text string) (*pipeline.Run, pipeline.SteeringNote, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.finished {
		return nil, pipeline.SteeringNote{}, pipeline.ErrRunFinished
	}
	if len(f.notes) >= pipeline.MaxSteeringNotes {
		return nil, pipeline.SteeringNote{}, pipeline.ErrTooManyNotes
	}
	n := pipeline.SteeringNote{Text: text, By: by, Step: pipeline.StepSearch}
	f.notes = append(f.notes, n)
	if f.steered != nil {
		f.steered <- text
	}
	return &pipeline.Run{ID: runID, Notes: append([]pipeline.SteeringNote(nil), f.notes...)}, n, nil
}

func (f *fakeSteerer) Cancel(_ context.Context, runID, by string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, runID+" by "+by)
	return nil
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAwaitWorkingTakesTypedLinesAsSteeringNotes: a line typed while the
// run works is recorded as a note by the terminal's person and
// acknowledged at once; the next state of the run ends the wait; after
// the input ends, states still come.
func TestAwaitWorkingTakesTypedLinesAsSteeringNotes(t *testing.T) {
	in, typist := io.Pipe()
	var out syncBuffer
	p := NewPrompter(in, &out)
	s := &fakeSteerer{steered: make(chan string, 1)}
	runs := make(chan *pipeline.Run)
	type result struct {
		r   *pipeline.Run
		ok  bool
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, ok, err := p.AwaitWorking(context.Background(), runs, s, "r-1")
		done <- result{r, ok, err}
	}()
	if _, err := io.WriteString(typist, "  focus on   Europe \n"); err != nil {
		t.Fatal(err)
	}
	if got := <-s.steered; got != "focus on   Europe" {
		t.Errorf("note recorded as %q", got)
	}
	runs <- &pipeline.Run{ID: "r-1", Step: pipeline.StepFetch}
	res := <-done
	if res.err != nil || !res.ok || res.r.Step != pipeline.StepFetch {
		t.Fatalf("AwaitWorking = %+v, want the next state", res)
	}
	if want := "noted: focus on Europe — applies from the next step (note 1 of at most 10)\n"; out.String() != want {
		t.Errorf("acknowledgement = %q, want %q", out.String(), want)
	}
	if s.notes[0].By != "terminal" {
		t.Errorf("note by %q, want the terminal's person", s.notes[0].By)
	}

	// The input ends: the wait goes on for states, and nothing is steered.
	_ = typist.Close()
	go func() {
		r, ok, err := p.AwaitWorking(context.Background(), runs, s, "r-1")
		done <- result{r, ok, err}
	}()
	runs <- &pipeline.Run{ID: "r-1", Step: pipeline.StepAnalyze}
	if res := <-done; res.err != nil || !res.ok || res.r.Step != pipeline.StepAnalyze {
		t.Fatalf("after the input ended AwaitWorking = %+v, want the next state", res)
	}
	close(runs)
	if res := <-awaitOK(p, runs, s); res {
		t.Error("a closed watch was reported as a state")
	}
	if len(s.notes) != 1 || len(s.cancelled) != 0 {
		t.Errorf("notes %v, cancels %v: want the one note only", s.notes, s.cancelled)
	}
}

// awaitOK runs AwaitWorking on a closed watch and reports its ok.
func awaitOK(p *Prompter, runs <-chan *pipeline.Run, s Steerer) <-chan bool {
	ch := make(chan bool, 1)
	go func() {
		_, ok, _ := p.AwaitWorking(context.Background(), runs, s, "r-1")
		ch <- ok
	}()
	return ch
}

// TestSteerLineStopAsksBeforeCancelling: "stop" and its like ask for a
// confirmation: no keeps the run going, yes cancels it; "stop including
// vendor blogs" is a note; a note over the bound and one past the count
// are refused with the bound named, and nothing is recorded.
func TestSteerLineStopAsksBeforeCancelling(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	s := &fakeSteerer{}
	p := NewPrompter(strings.NewReader("maybe\nn\nyes\n"), &out)
	if err := p.SteerLine(ctx, s, "r-1", "Stop!"); err != nil {
		t.Fatal(err)
	}
	if len(s.cancelled) != 0 || !strings.Contains(out.String(), "kept running.") {
		t.Fatalf("no to the confirmation: cancels %v, output %q", s.cancelled, out.String())
	}
	if strings.Count(out.String(), "Cancel run r-1?") != 2 {
		t.Errorf("an answer other than yes or no did not ask again: %q", out.String())
	}
	if err := p.SteerLine(ctx, s, "r-1", "please cancel this run"); err != nil {
		t.Fatal(err)
	}
	if len(s.cancelled) != 1 || s.cancelled[0] != "r-1 by terminal" || !strings.Contains(out.String(), "cancelling: the run stops at its next step.") {
		t.Fatalf("yes to the confirmation: cancels %v, output %q", s.cancelled, out.String())
	}

	out.Reset()
	if err := p.SteerLine(ctx, s, "r-1", "stop including vendor blogs"); err != nil {
		t.Fatal(err)
	}
	if len(s.notes) != 1 || !strings.HasPrefix(out.String(), "noted: stop including vendor blogs") {
		t.Errorf("a note starting with stop: notes %v, output %q", s.notes, out.String())
	}

	out.Reset()
	if err := p.SteerLine(ctx, s, "r-1", strings.Repeat("é", pipeline.MaxSteeringNoteRunes+1)); err != nil {
		t.Fatal(err)
	}
	if len(s.notes) != 1 || !strings.Contains(out.String(), "not noted: that note is 501 characters long; a steering note takes at most 500.") {
		t.Errorf("an over-long note: notes %d, output %q", len(s.notes), out.String())
	}
	for len(s.notes) < pipeline.MaxSteeringNotes {
		_ = p.SteerLine(ctx, s, "r-1", "more")
	}
	out.Reset()
	_ = p.SteerLine(ctx, s, "r-1", "one more")
	if !strings.Contains(out.String(), "not noted: this run already has 10 steering notes") {
		t.Errorf("a note past the count: %q", out.String())
	}
	out.Reset()
	if err := p.SteerLine(ctx, s, "r-1", "   "); err != nil || out.Len() != 0 {
		t.Errorf("an empty line: err %v, output %q", err, out.String())
	}
}

// TestProgressLineCountsSteeringNotes: the progress line says how many
// steering notes the run has taken, and nothing when it has none.
func TestProgressLineCountsSteeringNotes(t *testing.T) {
	r := &pipeline.Run{Step: pipeline.StepSearch, Status: pipeline.StatusRunning}
	if got := progressLine(r, 1); strings.Contains(got, "steering") {
		t.Errorf("no notes, yet: %q", got)
	}
	r.Notes = []pipeline.SteeringNote{{Text: "focus on Europe"}}
	if got := progressLine(r, 1); !strings.HasSuffix(got, " · 1 steering note") {
		t.Errorf("one note: %q", got)
	}
	r.Notes = append(r.Notes, pipeline.SteeringNote{Text: "skip vendor blogs"})
	if got := progressLine(r, 1); !strings.HasSuffix(got, " · 2 steering notes") {
		t.Errorf("two notes: %q", got)
	}
}
