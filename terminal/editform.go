package terminal

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// EditorFrom is the editor a person chose: $VISUAL, then $EDITOR ("" when
// neither is set, or when RESEARCHBOT_NO_EDITOR is: fields are then asked
// one by one).
func EditorFrom(getenv func(string) string) string {
	if getenv("RESEARCHBOT_NO_EDITOR") != "" {
		return ""
	}
	if v := strings.TrimSpace(getenv("VISUAL")); v != "" {
		return v
	}
	return strings.TrimSpace(getenv("EDITOR"))
}

// maxEditorRounds bounds how often an edit that is not accepted reopens
// the editor before the edit is given up.
const maxEditorRounds = 5

// editForm renders the checkpoint's fields as a YAML document to edit: one
// key per field with its current value, and above it a comment saying what
// the field takes and its allowed values. problems, when any, head the
// document (why the previous version was not accepted).
func editForm(inst checkpoints.Instance, vals map[string]any, problems []string) ([]byte, error) {
	var head strings.Builder
	fmt.Fprintf(&head, "%s: edit the values below, save and close the editor.\nLines starting with # are ignored. Close without saving to keep everything.", inst.Label)
	if len(problems) > 0 {
		head.WriteString("\n\nNOT ACCEPTED — fix these and save again:")
		for _, p := range problems {
			head.WriteString("\n  - " + p)
		}
	}
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range inst.Fields {
		key := &yaml.Node{Kind: yaml.ScalarNode, Value: f.Key, HeadComment: fieldComment(f)}
		val, err := valueNode(f, vals[f.Key])
		if err != nil {
			return nil, err
		}
		m.Content = append(m.Content, key, val)
	}
	doc := &yaml.Node{Kind: yaml.DocumentNode, HeadComment: Clean(head.String()), Content: []*yaml.Node{m}}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// valueNode is the YAML of a field's value: text as text (several lines as
// a block), lists as lists, nothing as an empty value of the field's kind.
func valueNode(f checkpoints.Field, v any) (*yaml.Node, error) {
	if v == nil {
		switch {
		case f.Type == checkpoints.FieldNumber || f.Type == checkpoints.FieldRange:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}, nil
		case multiValuedField(f):
			return &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}, nil
		default:
			v = ""
		}
	}
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	if s, ok := v.(string); ok && strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n, nil
}

// multiValuedField reports whether f takes a list.
func multiValuedField(f checkpoints.Field) bool {
	switch f.Type {
	case checkpoints.FieldMultiSelect, checkpoints.FieldChips:
		return true
	case checkpoints.FieldCheckbox:
		return len(f.Options) > 0 || f.RuntimeOptions
	}
	return false
}

// fieldComment says what a field takes: its label and help, its kind,
// whether it is required, and its allowed values or bounds.
func fieldComment(f checkpoints.Field) string {
	var b strings.Builder
	b.WriteString(f.Label)
	if f.Help != "" {
		b.WriteString(" — " + f.Help)
	}
	b.WriteString("\n")
	need := "optional"
	if f.Required {
		need = "required"
	}
	switch f.Type {
	case checkpoints.FieldText:
		fmt.Fprintf(&b, "Text, one line (%s).", need)
	case checkpoints.FieldTextarea:
		fmt.Fprintf(&b, "Text, several lines after `|` (%s).", need)
	case checkpoints.FieldSelect, checkpoints.FieldRadio:
		fmt.Fprintf(&b, "One of the values below (%s).", need)
	case checkpoints.FieldMultiSelect, checkpoints.FieldChips, checkpoints.FieldCheckbox:
		if multiValuedField(f) {
			fmt.Fprintf(&b, "A list, e.g. [a, b] (%s).", need)
			if f.Type == checkpoints.FieldChips && len(f.Options) == 0 {
				b.WriteString(" Any tags.")
			}
		} else {
			fmt.Fprintf(&b, "true or false (%s).", need)
		}
	case checkpoints.FieldNumber, checkpoints.FieldRange:
		fmt.Fprintf(&b, "A number (%s).", need)
	}
	if f.Min != nil || f.Max != nil {
		lo, hi := "any", "any"
		if f.Min != nil {
			lo = strconv.FormatFloat(*f.Min, 'f', -1, 64)
		}
		if f.Max != nil {
			hi = strconv.FormatFloat(*f.Max, 'f', -1, 64)
		}
		if multiValuedField(f) {
			fmt.Fprintf(&b, " Choose from %s to %s.", lo, hi)
		} else {
			fmt.Fprintf(&b, " From %s to %s.", lo, hi)
		}
	}
	if len(f.Options) > 0 {
		b.WriteString("\nAllowed values:")
		for _, o := range f.Options {
			if o.Label != "" && o.Label != o.Value {
				fmt.Fprintf(&b, "\n  %s  (%s)", o.Value, o.Label)
			} else {
				fmt.Fprintf(&b, "\n  %s", o.Value)
			}
		}
	}
	if f.Key == checkpoints.KeyQueries {
		fmt.Fprintf(&b, "\nOne query per line as `type: query`; types: %s (no type: web).", strings.Join(pipeline.QueryKinds, ", "))
	}
	return Clean(b.String())
}

// parseForm reads an edited form back: field values, lists as []string,
// whole numbers as float64. It reports what is wrong with it, a line each.
func parseForm(inst checkpoints.Instance, raw []byte) (map[string]any, []string) {
	var vals map[string]any
	if err := yaml.Unmarshal(raw, &vals); err != nil {
		return nil, []string{"not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	var problems []string
	out := make(map[string]any, len(vals))
	for _, f := range inst.Fields {
		v, ok := vals[f.Key]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case []any:
			list := make([]string, 0, len(x))
			for _, e := range x {
				list = append(list, fmt.Sprint(e))
			}
			v = list
		case int:
			v = float64(x)
		}
		if s, ok := v.(string); ok {
			for _, b := range queryLineProblems(f, strings.Split(s, "\n")) {
				problems = append(problems, f.Key+", "+b)
			}
		}
		out[f.Key] = v
	}
	for k := range vals {
		if _, known := fieldOf(inst, k); !known {
			problems = append(problems, fmt.Sprintf("%s: there is no such field (the fields are the keys given)", k))
		}
	}
	return out, problems
}

func fieldOf(inst checkpoints.Instance, key string) (checkpoints.Field, bool) {
	for _, f := range inst.Fields {
		if f.Key == key {
			return f, true
		}
	}
	return checkpoints.Field{}, false
}

// errEditAbandoned is returned when the person closes the editor without
// changing a form that was not accepted.
var errEditAbandoned = errors.New("the edit was not accepted and the form was closed unchanged; nothing was changed")

// editInEditor writes the form, runs the editor on it and reads it back,
// reopening it with the problems at its head until it is accepted.
// problems are those of a previous round (the checkpoint's own validation).
func (p *Prompter) editInEditor(inst checkpoints.Instance, vals map[string]any, problems []string) (map[string]any, error) {
	if vals == nil {
		vals = map[string]any{}
		for _, f := range inst.Fields {
			vals[f.Key] = inst.Values[f.Key]
		}
	}
	for range maxEditorRounds {
		form, err := editForm(inst, vals, problems)
		if err != nil {
			return nil, err
		}
		edited, err := p.runEditor(form)
		if err != nil {
			return nil, err
		}
		if len(problems) > 0 && bytes.Equal(edited, form) {
			return nil, errEditAbandoned
		}
		got, bad := parseForm(inst, edited)
		if len(bad) == 0 {
			p.lastEdit = got
			return got, nil
		}
		p.printf("That form was not accepted; reopening it:\n")
		for _, b := range bad {
			p.printf("  - %s\n", b)
		}
		if got != nil {
			vals = got
		}
		problems = bad
	}
	return nil, fmt.Errorf("the form was not accepted after %d tries; nothing was changed", maxEditorRounds)
}

// runEditor runs the editor on a temporary copy of form and returns what
// was saved.
func (p *Prompter) runEditor(form []byte) ([]byte, error) {
	f, err := os.CreateTemp("", "researchbot-edit-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(form); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	fields := strings.Fields(p.Editor)
	cmd := exec.Command(fields[0], append(fields[1:], f.Name())...)
	// The editor talks to the terminal, never to stdout: stdout may be the
	// report's file (researchbot run q > report.md).
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		defer tty.Close()
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	}
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("editor %q: %w", p.Editor, err)
	}
	return os.ReadFile(f.Name())
}
