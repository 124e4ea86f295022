package terminal

import (
	"io"
	"os"
	"sync"

	"github.com/mattn/go-isatty"
)

// Screen is the terminal's stderr as a run's views share it. On a terminal
// the progress line is one line redrawn in place, and anything else
// printed clears it first (it is drawn again with the next progress); on a
// pipe or a file every progress line is a plain line of its own.
type Screen struct {
	mu      sync.Mutex
	out     io.Writer
	tty     bool
	showing bool // a progress line is on the screen, without a newline
}

// clearLine returns the cursor to the start of the line and erases it.
const clearLine = "\r\x1b[2K"

// NewScreen writes to out; tty says whether out is a terminal.
func NewScreen(out io.Writer, tty bool) *Screen { return &Screen{out: out, tty: tty} }

// IsTerminal reports whether w is a terminal (a character device such as a
// TTY or a pseudo-terminal).
func IsTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// TTY reports whether the screen is a terminal.
func (s *Screen) TTY() bool { return s.tty }

// Write prints p below (in place of) the progress line.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.showing {
		_, _ = io.WriteString(s.out, clearLine)
		s.showing = false
	}
	return s.out.Write(p)
}

// Progress shows line as the run's progress: in place on a terminal, as a
// line of its own otherwise.
func (s *Screen) Progress(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tty {
		_, _ = io.WriteString(s.out, line+"\n")
		return
	}
	_, _ = io.WriteString(s.out, clearLine+line)
	s.showing = true
}

// Done ends the progress line, so what follows starts on a line of its own.
func (s *Screen) Done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.showing {
		_, _ = io.WriteString(s.out, "\n")
		s.showing = false
	}
}
