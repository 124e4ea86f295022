package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/coder/quartz"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// ErrNoInput is returned when the input ends before the person answered.
var ErrNoInput = errors.New("no more input: the checkpoint is still waiting (resume the run to answer it)")

// ErrSkip is returned by Ask when the person skips an optional checkpoint.
var ErrSkip = errors.New("skipped")

// actionSkip is the answer that skips an optional checkpoint; it is no
// decision, so Ask returns ErrSkip for it.
const actionSkip checkpoints.Action = "skip"

// Prompter asks the person at the terminal for decisions.
type Prompter struct {
	in  *bufio.Reader
	out io.Writer
	// Editor, when set, is run on a YAML form of the field values for Edit
	// (EditorFrom: $VISUAL, then $EDITOR); otherwise fields are asked one
	// by one.
	Editor string
	// By names the decider in the audit trail.
	By string
	// Style wraps and colours the checkpoints shown (the zero Style: plain).
	Style Style
	// Clock is the clock the time left to a checkpoint's deadline is
	// counted by, beside the prompt (nil: the real clock).
	Clock quartz.Clock
	// NeverDomain, when set, lets "never N" at a source review take the
	// site of source N out of the run (pipeline.Engine.NeverDomain).
	NeverDomain NeverDomainFunc

	// lines carries what the reader goroutine read, so that a prompt
	// waiting for a line gives up at once when its context ends (Ctrl-C, or
	// the checkpoint answered elsewhere).
	startReader sync.Once
	lines       chan readLine
	inputEnded  bool // lines answers the input's end forever
	// lastEdit is the form last accepted from the editor: an edit the
	// checkpoint refuses reopens it, not the stored values.
	lastEdit map[string]any
}

type readLine struct {
	s   string
	err error
}

// NewPrompter reads answers from in and writes questions to out.
func NewPrompter(in io.Reader, out io.Writer) *Prompter {
	return &Prompter{in: bufio.NewReader(in), out: out, By: "terminal", lines: make(chan readLine)}
}

// printf writes to the person, cleaned (Clean): field labels, options and
// current values come from checkpoint data, which comes from web pages and
// the model.
func (p *Prompter) printf(format string, args ...any) {
	_, _ = io.WriteString(p.out, Clean(fmt.Sprintf(format, args...)))
}

// line waits for the next line typed, or for ctx to end.
func (p *Prompter) line(ctx context.Context) (string, error) {
	lines := p.input()
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l := <-lines:
		if l.err != nil {
			p.lines = closedInput(l.err)
			p.inputEnded = true
		}
		return l.s, l.err
	}
}

// input returns the channel of the lines typed. The reading itself happens
// in a goroutine that lives as long as the input: a read from a terminal
// cannot be interrupted, but nobody has to wait for it.
func (p *Prompter) input() <-chan readLine {
	p.startReader.Do(func() {
		go func() { // owner: the input; ends at its end (EOF or an error)
			for {
				s, err := p.in.ReadString('\n')
				if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
					if errors.Is(err, io.EOF) {
						err = ErrNoInput
					}
					p.lines <- readLine{err: err}
					return
				}
				p.lines <- readLine{s: strings.TrimRight(s, "\r\n")}
			}
		}()
	})
	return p.lines
}

// closedInput is a channel that answers err forever: the input has ended.
func closedInput(err error) chan readLine {
	ch := make(chan readLine, 1)
	ch <- readLine{err: err}
	close(ch)
	return ch
}

// Ask shows the checkpoint and returns the person's decision. errs are the
// field errors of a previous, refused edit (shown before asking again).
func (p *Prompter) Ask(ctx context.Context, inst checkpoints.Instance, errs []checkpoints.FieldError) (checkpoints.Decision, error) {
	if len(errs) == 0 {
		_, _ = io.WriteString(p.out, p.Style.Checkpoint(inst)) // cleaned by RenderCheckpoint
	} else {
		_, _ = io.WriteString(p.out, p.Style.Error("That answer was not accepted:")+"\n")
		var problems []string
		for _, e := range errs {
			p.printf("  - %s: %s\n", fieldName(inst.Fields, e.Key), e.Message)
			problems = append(problems, e.Key+": "+e.Message)
		}
		if p.Editor != "" && p.lastEdit != nil {
			// The form comes back as it was saved, with the reasons on top.
			vals, err := p.editInEditor(inst, p.lastEdit, problems)
			if err != nil {
				return checkpoints.Decision{}, err
			}
			return checkpoints.Decision{Action: checkpoints.Edit, By: p.By, Values: vals}, nil
		}
	}
	allowed := inst.Actions
	if len(allowed) == 0 {
		allowed = []checkpoints.Action{checkpoints.Approve, checkpoints.Edit, checkpoints.Reject}
	}
	if !inst.Required {
		allowed = append(slices.Clone(allowed), actionSkip)
	}
	for {
		if err := ctx.Err(); err != nil {
			return checkpoints.Decision{}, err
		}
		if c := p.countdown(inst); c != "" {
			_, _ = io.WriteString(p.out, p.Style.Text(c)+"\n") // c is made of the deadline and numbers only
		}
		prompt := choices(allowed)
		if inst.ControlType == checkpoints.Clarify {
			prompt = clarifyChoices
		}
		if p.offersNever(inst) {
			prompt += " / never N"
		}
		p.printf("%s? ", prompt)
		ans, err := p.line(ctx)
		if err != nil {
			return checkpoints.Decision{}, err
		}
		if arg, ok := neverCommand(ans); ok && p.offersNever(inst) {
			p.never(ctx, &inst, arg)
			continue
		}
		a, ok := parseAction(strings.TrimSpace(ans), allowed)
		if !ok && inst.ControlType == checkpoints.Clarify {
			a, ok = parseClarifyAction(ans)
		}
		if !ok {
			p.printf("Please answer %s.\n", prompt)
			continue
		}
		if a == actionSkip {
			return checkpoints.Decision{}, ErrSkip
		}
		d := checkpoints.Decision{Action: a, By: p.By}
		switch a {
		case checkpoints.Edit:
			vals, err := p.edit(ctx, inst)
			if err != nil {
				return checkpoints.Decision{}, err
			}
			d.Values = vals
		case checkpoints.Reject:
			if pipeline.Choices(&inst) != nil {
				p.printf("Why stop? (the partial report says so) ")
			} else {
				p.printf("Why? (this becomes feedback for the next attempt) ")
			}
			note, err := p.line(ctx)
			if err != nil {
				return checkpoints.Decision{}, err
			}
			d.Note = strings.TrimSpace(note)
		}
		return d, nil
	}
}

func choices(allowed []checkpoints.Action) string {
	var parts []string
	for _, a := range allowed {
		parts = append(parts, "["+string(a[0])+"]"+string(a[1:]))
	}
	return strings.Join(parts, " / ")
}

func parseAction(s string, allowed []checkpoints.Action) (checkpoints.Action, bool) {
	s = strings.ToLower(s)
	for _, a := range allowed {
		if s != "" && (s == string(a) || s == string(a[0])) {
			return a, true
		}
	}
	return "", false
}

// edit collects new field values, in $EDITOR or field by field.
func (p *Prompter) edit(ctx context.Context, inst checkpoints.Instance) (map[string]any, error) {
	if p.Editor != "" {
		return p.editInEditor(inst, nil, nil)
	}
	vals := map[string]any{}
	if inst.ControlType == checkpoints.Clarify {
		p.printf("Answer each question; an empty answer keeps the plan's assumption.\n")
	} else {
		p.printf("Edit each field; press Enter to keep the current value.\n")
	}
	for _, f := range inst.Fields {
		cur := inst.Values[f.Key]
		p.printf("\n%s", f.Label)
		if f.Help != "" {
			p.printf(" — %s", f.Help)
		}
		p.printf("\n")
		for i, o := range f.Options {
			p.printf("  %s) %s\n", optionNumber(f, i), optionText(f, o))
		}
		switch f.Type {
		case checkpoints.FieldTextarea:
			if s, _ := cur.(string); s != "" {
				p.printf("current:\n%s\n", indent(s))
			}
			p.printf("new text, ending with a line holding only \".\" (just \".\" keeps it):\n")
			var ls []string
			for {
				l, err := p.line(ctx)
				if err != nil {
					return nil, err
				}
				if l == "." {
					break
				}
				ls = append(ls, l)
			}
			if bad := queryLineProblems(f, ls); len(bad) > 0 {
				for _, b := range bad {
					p.printf("  - %s\n", b)
				}
				p.printf("(kept the current value; choose edit again to retry)\n")
				continue
			}
			if len(ls) > 0 {
				vals[f.Key] = strings.Join(ls, "\n")
			}
		default:
			p.printf("current: %v\n> ", display(cur))
			l, err := p.line(ctx)
			if err != nil {
				return nil, err
			}
			if l = strings.TrimSpace(l); l != "" {
				vals[f.Key] = parseInput(f, l)
			}
		}
	}
	return vals, nil
}

func indent(s string) string { return "    " + strings.ReplaceAll(s, "\n", "\n    ") }

func display(v any) string {
	switch x := v.(type) {
	case nil:
		return "(empty)"
	case []string:
		return strings.Join(x, ", ")
	}
	return fmt.Sprint(v)
}

// parseInput turns a typed answer into a value of the field's type: option
// numbers or values, comma-separated for multi-valued fields.
func parseInput(f checkpoints.Field, s string) any {
	pick := func(tok string) string {
		tok = strings.TrimSpace(tok)
		if numbered(f) {
			return tok // the numbers shown are the options' own (source [4] is 4)
		}
		if n, err := strconv.Atoi(tok); err == nil && n >= 1 && n <= len(f.Options) {
			return f.Options[n-1].Value
		}
		return tok
	}
	switch f.Type {
	case checkpoints.FieldMultiSelect, checkpoints.FieldChips:
		var out []string
		for _, t := range choiceTokens(s) {
			if t = pick(t); t != "" {
				out = append(out, t)
			}
		}
		return out
	case checkpoints.FieldCheckbox:
		if len(f.Options) == 0 {
			return s // yes/no: the checkpoint reads it
		}
		var out []string
		for _, t := range choiceTokens(s) {
			if t = pick(t); t != "" {
				out = append(out, t)
			}
		}
		return out
	case checkpoints.FieldSelect, checkpoints.FieldRadio:
		return pick(s)
	case checkpoints.FieldNumber, checkpoints.FieldRange:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

// choiceTokens splits a typed list of choices at commas; a part made only
// of numbers separated by spaces ("1 3 4") is split at the spaces too, as
// people type option and source numbers either way.
func choiceTokens(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		words := strings.Fields(part)
		allNumbers := len(words) > 1
		for _, w := range words {
			if _, err := strconv.Atoi(w); err != nil {
				allNumbers = false
			}
		}
		if allNumbers {
			out = append(out, words...)
			continue
		}
		out = append(out, part)
	}
	return out
}

// numbered reports whether every option of f is a number (the sources of
// the source review): those options are typed by their own numbers, so
// what is shown as [4] is chosen by typing 4.
func numbered(f checkpoints.Field) bool {
	if len(f.Options) == 0 {
		return false
	}
	for _, o := range f.Options {
		if _, err := strconv.Atoi(o.Value); err != nil {
			return false
		}
	}
	return true
}

// optionNumber is what the person types to choose option i of f.
func optionNumber(f checkpoints.Field, i int) string {
	if numbered(f) {
		return f.Options[i].Value
	}
	return strconv.Itoa(i + 1)
}

// optionText is an option's label without the number a numbered option's
// label starts with ("4. Title" is shown as "4) Title").
func optionText(f checkpoints.Field, o checkpoints.Option) string {
	if numbered(f) {
		return strings.TrimPrefix(o.Label, o.Value+". ")
	}
	return o.Label
}

// queryLineProblems checks the lines typed for the plan's queries: a
// query type that does not exist is an error, not a web query.
func queryLineProblems(f checkpoints.Field, lines []string) []string {
	if f.Key != checkpoints.KeyQueries {
		return nil
	}
	var bad []string
	for i, l := range lines {
		if err := pipeline.CheckQueryLine(l); err != nil {
			bad = append(bad, fmt.Sprintf("line %d: %v", i+1, err))
		}
	}
	return bad
}

// fieldName names the field key of fields for people: its label and key.
func fieldName(fields []checkpoints.Field, key string) string {
	for _, f := range fields {
		if f.Key == key && f.Label != "" && f.Label != key {
			return f.Label + " (" + key + ")"
		}
	}
	return key
}
