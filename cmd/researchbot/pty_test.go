//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/researchbot/researchbot/internal/researchtest"
	"github.com/researchbot/researchbot/llm/llmtest"
)

// ptyChild is a researchbot process whose terminal is a pseudo-terminal.
type ptyChild struct {
	cmd  *exec.Cmd
	tty  *os.File // the pty's master side: what the person types and sees
	mu   sync.Mutex
	seen strings.Builder
	done chan error
}

// startInPTY runs researchbot with args in a pseudo-terminal, as a person
// at a terminal would.
func (w *world) startInPTY(t *testing.T, env []string, args ...string) *ptyChild {
	t.Helper()
	// Colour and width depend on the test alone, not on the environment
	// the tests run in.
	cmd := w.command(args, append([]string{"TERM=xterm", "NO_COLOR=", "COLUMNS="}, env...))
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatalf("start in a pseudo-terminal: %v", err)
	}
	c := &ptyChild{cmd: cmd, tty: tty, done: make(chan error, 1)}
	go func() { // owner: this child; ends when the pty closes
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			c.mu.Lock()
			c.seen.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				c.done <- cmd.Wait()
				return
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = tty.Close()
	})
	return c
}

func (c *ptyChild) screen() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen.String()
}

// waitFor waits until the terminal shows text matching re.
func (c *ptyChild) waitFor(t *testing.T, re *regexp.Regexp) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); !re.MatchString(c.screen()); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed %q:\n%q", re, c.screen())
		}
	}
}

// exit waits for the process and returns its exit code.
func (c *ptyChild) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case err := <-c.done:
		return childExitCode(t, err)
	case <-time.After(within):
		t.Fatalf("still running after %v:\n%q", within, c.screen())
	}
	return -1
}

var promptRe = regexp.MustCompile(`\[a\]pprove / \[e\]dit / \[r\]eject\? $`)

// TestTerminalProgressInPlaceAndCtrlCAtAPrompt: in a terminal the progress
// is one line redrawn in place, the stage while the run waits names the
// checkpoint, and Ctrl-C at a prompt stops at once with the resume command.
func TestTerminalProgressInPlaceAndCtrlCAtAPrompt(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.startInPTY(t, []string{"RESEARCHBOT_NO_EDITOR=1"}, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	c.waitFor(t, promptRe)
	shown := c.screen()
	if !strings.Contains(shown, "\r\x1b[2K\x1b[36m[") {
		t.Errorf("progress was not redrawn in place, in colour:\n%q", shown)
	}
	if !strings.Contains(shown, "\x1b[1;36m━━ Research plan ━━\x1b[0m") {
		t.Errorf("the checkpoint's title is not in colour on a colour terminal:\n%q", shown)
	}
	if !strings.Contains(shown, "waiting for you: Research plan") {
		t.Errorf("the stage while the plan waits does not say so:\n%q", shown)
	}
	if !regexp.MustCompile(`Time left: [0-9][^\r\n]* — a reminder is due at [0-9:\- ]+\r\n\[a\]pprove`).MatchString(shown) {
		t.Errorf("the prompt does not show the time left to the deadline:\n%q", shown)
	}
	if regexp.MustCompile(`\n\[[█░]+\] `).MatchString(shown) {
		t.Errorf("a progress line was printed as a line of its own:\n%q", shown)
	}
	start := time.Now()
	if _, err := c.tty.Write([]byte{3}); err != nil { // Ctrl-C, through the terminal's line discipline
		t.Fatal(err)
	}
	if code := c.exit(t, 10*time.Second); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130:\n%q", code, c.screen())
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Ctrl-C at the prompt took %v to stop the program", took)
	}
	if !regexp.MustCompile(`researchbot run --resume r-[a-z0-9]+`).MatchString(c.screen()) {
		t.Errorf("no resume command after Ctrl-C:\n%q", c.screen())
	}
}

// TestTerminalWrapsAtColumnsWithoutColourUnderNO_COLOR: with NO_COLOR
// set nothing is coloured (the only escape is the one that redraws the
// progress line), and with COLUMNS=40 no line is wider than 40 columns
// except one word too long to fit (the progress line is cut to fit).
func TestTerminalWrapsAtColumnsWithoutColourUnderNO_COLOR(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	c := w.startInPTY(t, []string{"RESEARCHBOT_NO_EDITOR=1", "NO_COLOR=1", "COLUMNS=40"}, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	c.waitFor(t, promptRe)
	shown := c.screen()
	if rest := strings.ReplaceAll(shown, "\r\x1b[2K", ""); strings.Contains(rest, "\x1b") {
		t.Errorf("escape sequences under NO_COLOR:\n%q", shown)
	}
	if !strings.Contains(shown, "Research plan") {
		t.Fatalf("no checkpoint shown:\n%q", shown)
	}
	// The progress lines and the checkpoint (the command's own one-line
	// notes before them are not the presenter's).
	checkpoint := false
	for _, l := range strings.Split(strings.ReplaceAll(shown, "\r\x1b[2K", "\r\n"), "\r\n") {
		checkpoint = checkpoint || strings.HasPrefix(l, "━━")
		if !checkpoint && !strings.HasPrefix(l, "[") {
			continue
		}
		if n := utf8.RuneCountInString(l); n > 40 && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("a line of %d columns at COLUMNS=40: %q", n, l)
		}
	}
	if _, err := c.tty.Write([]byte{3}); err != nil {
		t.Fatal(err)
	}
	if code := c.exit(t, 10*time.Second); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130:\n%q", code, c.screen())
	}
}

// TestTerminalEditorFormWithVISUAL: Edit opens $VISUAL (not $EDITOR) on a
// YAML form that says what each field takes; a query type that does not
// exist is explained and the form reopened; the corrected form is the
// decision.
func TestTerminalEditorFormWithVISUAL(t *testing.T) {
	w := newWorld(t, &researchtest.Researcher{})
	dir := t.TempDir()
	visual := filepath.Join(dir, "visual.sh")
	// The first time: keep a copy of the form, and save a query with an
	// unknown type; the second time: the same query as a web query.
	script := `#!/bin/sh
set -e
dir=$(dirname "$0")
if [ ! -f "$dir/round1" ]; then
  cp "$1" "$dir/round1"
  kind=blog
else
  cp "$1" "$dir/round2"
  kind=web
fi
cat > "$1" <<EOF
sub_questions: |
  How efficient are heat pumps below -15 °C?
queries: |
  $kind: heat pump reviews cold climate
depth: quick
EOF
`
	if err := os.WriteFile(visual, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	c := w.startInPTY(t, []string{"VISUAL=" + visual, "EDITOR=/bin/false"}, "run", "--mode", "guided", "How well do heat pumps work in cold climates?")
	c.waitFor(t, promptRe)
	if _, err := c.tty.Write([]byte("e\r")); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, regexp.MustCompile(`✓ Research plan: edit`))
	c.waitFor(t, regexp.MustCompile(`━━ Draft`))
	c.waitFor(t, promptRe)
	if _, err := c.tty.Write([]byte("a\r")); err != nil {
		t.Fatal(err)
	}
	if code := c.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d:\n%q", code, c.screen())
	}
	shown := c.screen()
	if !strings.Contains(shown, `"blog" is not a query type: use web, academic, news`) || !strings.Contains(shown, "reopening it") {
		t.Errorf("the unknown query type was not explained before reopening:\n%q", shown)
	}
	form, err := os.ReadFile(filepath.Join(dir, "round1"))
	if err != nil {
		t.Fatalf("$VISUAL was not run: %v", err)
	}
	for _, want := range []string{"# Depth\n# One of the values below (optional).\n# Allowed values:\n#   quick  (Quick)", "depth: standard", "queries: |", "One query per line as `type: query`"} {
		if !strings.Contains(string(form), want) {
			t.Errorf("the form lacks %q:\n%s", want, form)
		}
	}
	if strings.Contains(string(form), `\u003c`) || strings.Contains(string(form), "null") {
		t.Errorf("the form has escapes or nulls:\n%s", form)
	}
	if testing.Verbose() {
		t.Logf("the form:\n%s", form)
	}
	again, err := os.ReadFile(filepath.Join(dir, "round2"))
	if err != nil || !strings.Contains(string(again), "NOT ACCEPTED") || !strings.Contains(string(again), "blog") {
		t.Errorf("the reopened form does not say why (%v):\n%s", err, again)
	}
}

// TestTerminalSteeringNoteWhileItRuns: in a terminal, a line typed while
// the run analyses is a steering note, acknowledged at once; the writer's
// prompt carries it and the report lists it. "stop" asks before it
// cancels, and yes cancels the run.
func TestTerminalSteeringNoteWhileItRuns(t *testing.T) {
	analysing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	var draftPrompts []string
	res := &researchtest.Researcher{Seen: func(c llmtest.Call) {
		switch c.SchemaName {
		case "analysis":
			once.Do(func() { close(analysing) })
			<-release
		case "research_draft":
			mu.Lock()
			draftPrompts = append(draftPrompts, c.System+"\n"+c.User)
			mu.Unlock()
		}
	}}
	w := newWorld(t, res)
	c := w.startInPTY(t, []string{"RESEARCHBOT_NO_EDITOR=1"}, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	c.waitFor(t, regexp.MustCompile(`type a note and press Enter to steer it`))
	<-analysing
	if _, err := c.tty.Write([]byte("focus on Europe\r")); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, regexp.MustCompile(`noted: focus on Europe — applies from the next step \(note 1 of at most 10\)`))
	close(release)
	if code := c.exit(t, 60*time.Second); code != 0 {
		t.Fatalf("exit %d, want 0:\n%q", code, c.screen())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(draftPrompts) == 0 || !strings.Contains(draftPrompts[0], "<requester_note n=\"1\" given_during=\"analyze\">\nfocus on Europe\n</requester_note>") {
		t.Errorf("the writer's prompt does not carry the note:\n%v", draftPrompts)
	}
	if !strings.Contains(c.screen(), "· 1 steering note") {
		t.Errorf("the progress does not show the note:\n%q", c.screen())
	}
	if !strings.Contains(c.screen(), "Steering notes given while it ran") || !strings.Contains(c.screen(), "focus on Europe (by terminal during analyze") {
		t.Errorf("the report does not list the note:\n%q", c.screen())
	}
}

// TestTerminalStopWhileItRunsCancelsAfterConfirming: "stop" typed while
// the run works asks first; yes cancels the run, which ends saying so.
func TestTerminalStopWhileItRunsCancelsAfterConfirming(t *testing.T) {
	analysing, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	res := &researchtest.Researcher{Seen: func(c llmtest.Call) {
		if c.SchemaName == "analysis" {
			once.Do(func() { close(analysing) })
			<-release
		}
	}}
	w := newWorld(t, res)
	c := w.startInPTY(t, []string{"RESEARCHBOT_NO_EDITOR=1"}, "run", "--mode", "auto", "How well do heat pumps work in cold climates?")
	<-analysing
	if _, err := c.tty.Write([]byte("stop\r")); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, regexp.MustCompile(`Cancel run r-[a-z0-9]+\? .*\[y\]es / \[n\]o\? $`))
	if _, err := c.tty.Write([]byte("y\r")); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, regexp.MustCompile(`cancelling: the run stops at its next step`))
	close(release)
	if code := c.exit(t, 60*time.Second); code != 1 {
		t.Fatalf("exit %d, want 1:\n%q", code, c.screen())
	}
	if !regexp.MustCompile(`run r-[a-z0-9]+ was cancelled by terminal`).MatchString(c.screen()) {
		t.Errorf("the end does not say the run was cancelled:\n%q", c.screen())
	}
}
