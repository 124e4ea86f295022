package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/researchbot/researchbot/terminal"
)

// This file holds the command line's shared rules: how a mistake is named
// (the bad word, what was expected, a "did you mean"), how a table is laid
// out, and how --json output is written.

// didYouMean returns the candidate closest to word when it is close
// enough to be a typo (an edit distance of at most a third of the word,
// and at most 2), or "".
func didYouMean(word string, candidates []string) string {
	best, bestDist := "", 0
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if d == 0 {
			return c
		}
		if limit := min(2, max(1, len([]rune(word))/3)); d <= limit && (best == "" || d < bestDist) {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting an
// adjacent transposition ("shwo" for "show") as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j]: the distance between ra[:i] and rb[:j].
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// suggestion is "; did you mean %q?" for the candidate closest to word,
// or "" when none is close.
func suggestion(word string, candidates []string) string {
	if s := didYouMean(word, candidates); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// unknownCommand reports a word that is not a subcommand of parent
// ("researchbot checkpoints"), with the closest one, on stderr: exit 2.
func unknownCommand(stderr io.Writer, parent, word string, candidates []string) error {
	fmt.Fprintln(stderr, unknownCommandMessage(parent, word, candidates))
	return &exitError{code: 2}
}

// unknownCommandMessage is what unknownCommand prints.
func unknownCommandMessage(parent, word string, candidates []string) string {
	help := "researchbot help"
	if rest := strings.TrimSpace(strings.TrimPrefix(parent, "researchbot")); rest != "" {
		help += " " + rest
	}
	return fmt.Sprintf("researchbot: unknown command %q for %q%s\nRun '%s' for usage.", word, parent, suggestion(word, candidates), help)
}

var (
	flagInvalid = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-(\S+): (.*)$`)
	})
	flagUndefined = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag provided but not defined: -+(\S+)$`) })
	flagNoValue   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^flag needs an argument: -+(\S+)$`) })
)

// flagProblem restates an error of the flag package for a person: the flag
// as it is written (--limit), the value given and what it should have been,
// or the closest flag to an unknown one.
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := flagInvalid().FindStringSubmatch(msg); m != nil {
		f := fs.Lookup(m[2])
		if _, builtin := f.Value.(flag.Getter); f != nil && !builtin {
			// A flag.Func: its own error says what it wants.
			return fmt.Sprintf("invalid value %q for --%s: %s", m[1], m[2], m[3])
		}
		return fmt.Sprintf("invalid value %q for --%s: want %s", m[1], m[2], expected(f))
	}
	if m := flagUndefined().FindStringSubmatch(msg); m != nil {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		if s := didYouMean(m[1], names); s != "" {
			return fmt.Sprintf("unknown flag --%s; did you mean --%s?", m[1], s)
		}
		return fmt.Sprintf("unknown flag --%s", m[1])
	}
	if m := flagNoValue().FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs %s", m[1], expected(fs.Lookup(m[1])))
	}
	return msg
}

// expected says what a flag takes, with its default as an example.
func expected(f *flag.Flag) string {
	if f == nil {
		return "a valid value"
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return "a valid value"
	}
	switch g.Get().(type) {
	case int, int64, uint, uint64:
		return fmt.Sprintf("a whole number, e.g. --%s %s", f.Name, f.DefValue)
	case float64:
		return fmt.Sprintf("a number, e.g. --%s %s", f.Name, f.DefValue)
	case bool:
		return "true or false"
	case time.Duration:
		return fmt.Sprintf("a duration such as 30s or 5m, e.g. --%s %s", f.Name, f.DefValue)
	case string:
		if f.DefValue != "" {
			return fmt.Sprintf("a value, e.g. --%s %s", f.Name, f.DefValue)
		}
	}
	return "a value: " + f.Usage
}

// newTable lays out rows as columns separated by two spaces (end each cell
// with \t and each row with \n, then Flush).
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
}

// writeJSONLines writes each value as one JSON object on its own line (JSON
// Lines), the --json form of every listing: a script reads it line by line.
func writeJSONLines[T any](w io.Writer, values []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, v := range values {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// colorOn reports whether output to w may be coloured, by the rule the
// terminal presenter follows too (terminal.StyleFor: w is a terminal,
// NO_COLOR is unset or empty, and TERM is not "dumb").
func colorOn(w io.Writer, getenv func(string) string) bool {
	return terminal.StyleFor(w, getenv).Color
}

// Every coloured cell carries the same nine invisible bytes (a five-byte
// SGR start, a four-byte reset), so tabwriter, which counts them, still
// aligns the columns.
const (
	sgrBold    = "\x1b[01m"
	sgrGreen   = "\x1b[32m"
	sgrYellow  = "\x1b[33m"
	sgrRed     = "\x1b[31m"
	sgrDefault = "\x1b[39m"
	sgrReset   = "\x1b[0m"
)

// statusColor is the colour a run's status is shown in.
func statusColor(status string) string {
	switch status {
	case "completed":
		return sgrGreen
	case "waiting", "interrupted", "partial":
		return sgrYellow
	case "failed", "cancelled":
		return sgrRed
	}
	return sgrDefault
}

// paint wraps s in sgr when on, else returns s.
func paint(on bool, sgr, s string) string {
	if !on {
		return s
	}
	return sgr + s + sgrReset
}
