package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/researchbot/researchbot/checkpoints"
)

// maxDocument bounds a definition document read from a file or stdin.
const maxDocument = 1 << 20

// checkpointFields prints the nine field types and what each takes.
func checkpointFields(args []string, stdout io.Writer) error {
	specs := checkpoints.FieldTypeSpecs()
	switch {
	case len(args) == 1 && args[0] == "--json":
		return writeJSON(stdout, specs)
	case len(args) > 0:
		return checkpointsUsageError(append([]string{"fields"}, args...))
	}
	fmt.Fprintln(stdout, "Every field has key (a slug), type, label; optionally help, required, default.")
	for _, s := range specs {
		fmt.Fprintf(stdout, "\n%s\n    %s\n    options: %s\n    min/max: %s\n", s.Type, s.Summary, s.Options, s.Bounds)
		if len(s.Settings) > 0 {
			fmt.Fprintf(stdout, "    also: %s\n", strings.Join(s.Settings, ", "))
		}
	}
	return nil
}

// readDocument reads and checks a definition document from a file, or from
// stdin for "-". Every problem is reported at once (exit 1).
func (c *checkpointsCmd) readDocument(name string) (checkpoints.Document, checkpoints.Definition, error) {
	r := c.stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return checkpoints.Document{}, checkpoints.Definition{}, &exitError{code: 1, msg: "researchbot: " + err.Error()}
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxDocument+1))
	if err != nil {
		return checkpoints.Document{}, checkpoints.Definition{}, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > maxDocument {
		return checkpoints.Document{}, checkpoints.Definition{}, &exitError{code: 1, msg: fmt.Sprintf("researchbot: %s is larger than %d bytes", name, maxDocument)}
	}
	doc, d, err := checkpoints.ParseDocument(data)
	var de *checkpoints.DocumentError
	if errors.As(err, &de) {
		return doc, d, problemsError(name, de.Problems)
	}
	return doc, d, err
}

// problemsError lists a document's problems, one per line, as exit 1.
func problemsError(name string, ps []checkpoints.Problem) error {
	if name == "-" {
		name = "stdin"
	}
	noun := "problems"
	if len(ps) == 1 {
		noun = "problem"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "researchbot: %s: %d %s, nothing was written:", name, len(ps), noun)
	for _, p := range ps {
		b.WriteString("\n  " + p.String())
	}
	return &exitError{code: 1, msg: b.String()}
}

// create adds a new definition.
func (c *checkpointsCmd) create(ctx context.Context, name string) error {
	_, d, err := c.readDocument(name)
	if err != nil {
		return err
	}
	if checkpoints.IsBuiltin(d.ID) {
		return problemsError(name, []checkpoints.Problem{{Path: "id", Message: fmt.Sprintf("%q is a built-in's id; use update", d.ID)}})
	}
	d.CreatedAt, d.UpdatedAt = c.now, c.now
	err = c.store.CreateDefinition(ctx, d)
	if errors.Is(err, checkpoints.ErrDefinitionExists) {
		return &exitError{code: 1, msg: fmt.Sprintf("researchbot: %s exists; nothing was written ('researchbot checkpoints update %s FILE' replaces it)", d.ID, d.ID)}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: created (%s)\n", d.ID, describeDefinition(d))
	return nil
}

// update replaces a definition; the document's id, if it has one, must be
// ID. Without "enabled" the definition keeps its enabled state.
func (c *checkpointsCmd) update(ctx context.Context, id, name string) error {
	old, err := c.find(ctx, id)
	if err != nil {
		return err
	}
	doc, next, err := c.readDocument(name)
	if err != nil {
		return err
	}
	if doc.ID == "" {
		next.ID = id
	}
	if ps := checkpoints.ChangeProblems(old, next); len(ps) > 0 {
		return problemsError(name, ps)
	}
	next = checkpoints.Edited(old, next, doc.Enabled == nil, c.now)
	if err := c.store.PutDefinition(ctx, next); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "%s: updated (%s; applies to checkpoints offered from now on)\n", next.ID, describeDefinition(next))
	return nil
}

// order puts def's fields in the order args names their keys (separate
// words, or comma lists); every key once, or nothing is written.
func (c *checkpointsCmd) order(ctx context.Context, def checkpoints.Definition, args []string) error {
	var keys []string
	for _, a := range args {
		for k := range strings.SplitSeq(a, ",") {
			if k = strings.TrimSpace(k); k != "" {
				keys = append(keys, k)
			}
		}
	}
	fields, ps := checkpoints.ReorderFields(def.Fields, keys)
	if len(ps) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "researchbot: %s: the order was not changed:", def.ID)
		for _, p := range ps {
			b.WriteString("\n  " + p.Message)
		}
		fmt.Fprintf(&b, "\nIts fields now: %s", strings.Join(fieldKeys(def.Fields), ", "))
		return &exitError{code: 1, msg: b.String()}
	}
	def.Fields, def.UpdatedAt = fields, c.now
	if err := c.store.PutDefinition(ctx, def); err != nil {
		return fmt.Errorf("researchbot: %w", err)
	}
	fmt.Fprintf(c.stdout, "%s: fields in order %s (applies to checkpoints offered from now on)\n", def.ID, strings.Join(fieldKeys(fields), ", "))
	return nil
}

// fieldKeys are the keys of fields, in order.
func fieldKeys(fields []checkpoints.Field) []string {
	keys := make([]string, 0, len(fields))
	for _, f := range fields {
		keys = append(keys, f.Key)
	}
	return keys
}

// reset closes a definition's breaker.
func (c *checkpointsCmd) reset(ctx context.Context, d checkpoints.Definition) error {
	fails, err := c.store.CheckpointFailures(ctx, d.ID, c.now, d.BreakerWindow)
	if err != nil {
		return err
	}
	tripped := checkpoints.BreakerTripped(d, fails, c.now)
	if err := c.store.ResetBreaker(ctx, d.ID); err != nil {
		return err
	}
	was := "was closed"
	if tripped {
		was = "was tripped"
	}
	fmt.Fprintf(c.stdout, "%s: breaker reset (it %s; %d recent failures forgotten)\n", d.ID, was, len(fails))
	return nil
}

// describeDefinition summarises a definition on one line.
func describeDefinition(d checkpoints.Definition) string {
	req := "optional"
	if d.Required {
		req = "required"
	}
	en := "enabled"
	if !d.Enabled {
		en = "disabled"
	}
	return fmt.Sprintf("%s, %s, at %s, sort order %d, modes %s, %d fields", en, req, d.Position, d.SortOrder, strings.Join(d.Modes, ","), len(d.Fields))
}

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
