package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/terminal"
)

const checkpointsUsage = `Usage:
  researchbot checkpoints [--json]             list checkpoint definitions
  researchbot checkpoints fields [--json]      the nine field types and the settings each takes
  researchbot checkpoints show ID              one definition as JSON (seed 004's shape)
  researchbot checkpoints validate FILE|-      check a definition document; writes nothing
  researchbot checkpoints create FILE|-        add a definition from a JSON document
  researchbot checkpoints update ID FILE|-     replace a definition (built-ins keep their fields)
  researchbot checkpoints delete ID            disable a custom definition for good (runs keep their record)
  researchbot checkpoints enable ID            offer this checkpoint again
  researchbot checkpoints disable ID           stop offering it (runs go on without it)
  researchbot checkpoints timeout ID DURATION  e.g. 48h; 0 for no timeout
  researchbot checkpoints order ID KEY...      put the fields in this order (every key once; or one comma list)
  researchbot checkpoints reset ID             close a tripped circuit breaker (forget its failures)
  ` + checkpointsSkipUsage

// definitionStore is what the checkpoints commands need of the store.
type definitionStore interface {
	Definitions(ctx context.Context) ([]checkpoints.Definition, error)
	Definition(ctx context.Context, id string) (checkpoints.Definition, error)
	CreateDefinition(ctx context.Context, d checkpoints.Definition) error
	PutDefinition(ctx context.Context, d checkpoints.Definition) error
	ResetBreaker(ctx context.Context, defID string) error
	CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)
}

// checkpointsCmd is one run of `researchbot checkpoints …`.
type checkpointsCmd struct {
	store          definitionStore
	stdin          io.Reader
	stdout, stderr io.Writer
	now            time.Time
}

// checkpointsSubcommands are the words `researchbot checkpoints` takes.
var checkpointsSubcommands = []string{"fields", "show", "validate", "create", "update", "delete", "enable", "disable", "timeout", "order", "reset", "skip", "help"}

// writeCommands change definitions; they refuse to run on the in-process Redis.
var writeCommands = map[string]bool{"create": true, "update": true, "delete": true, "enable": true, "disable": true, "timeout": true, "order": true, "reset": true}

// cmdCheckpoints lets an operator see and change checkpoint definitions,
// which are data in Redis shared by every replica.
//
// Everything it prints may hold stored text (labels, descriptions, options
// written before definitions were bounded, or straight into Redis), so all
// of it goes through the terminal's cleaner, the rule every command that
// prints stored text keeps: no escape sequence, control or bidi character
// reaches the screen.
func cmdCheckpoints(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	stdout = terminal.CleanWriter(stdout)
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "skip":
		return cmdCheckpointsSkip(ctx, args[1:], getenv, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, checkpointsUsage)
		return nil
	case "fields":
		return checkpointFields(args[1:], stdout)
	case "validate":
		if len(args) != 2 {
			return checkpointsUsageError(args)
		}
		c := &checkpointsCmd{stdin: stdin, stdout: stdout, stderr: stderr}
		_, d, err := c.readDocument(args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: valid (%s)\n", d.ID, describeDefinition(d))
		return nil
	case "", "--json", "show", "create", "update", "delete", "enable", "disable", "timeout", "order", "reset":
	default:
		if strings.HasPrefix(sub, "-") {
			return &exitError{code: 2, msg: fmt.Sprintf("researchbot checkpoints: unknown flag %s (the list takes --json)\nRun 'researchbot help checkpoints' for usage.", sub)}
		}
		return &exitError{code: 2, msg: unknownCommandMessage("researchbot checkpoints", sub, checkpointsSubcommands)}
	}
	if writeCommands[sub] && getenv("REDIS_URL") == "" {
		return &exitError{code: 2, msg: fmt.Sprintf("researchbot: checkpoints %s needs REDIS_URL: definitions live in the Redis the bot and workers share; without it the change would go to an empty in-process Redis and vanish", sub)}
	}
	a, err := openStore(ctx, getenv, stderr, "these are the built-in definitions of an empty, in-process Redis")
	if err != nil {
		return err
	}
	defer a.Close()
	c := &checkpointsCmd{store: a.Store, stdin: stdin, stdout: stdout, stderr: stderr, now: time.Now()}
	return c.run(ctx, args)
}

// checkpointsUsageError is a checkpoints subcommand given the wrong
// arguments: what it got, and its usage line, on stderr; exit 2.
func checkpointsUsageError(args []string) error {
	line := ""
	for l := range strings.Lines(checkpointsUsage) {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "researchbot" && f[2] == args[0] {
			line = strings.TrimSpace(l)
			break
		}
	}
	got := "no arguments"
	if n := len(args) - 1; n > 0 {
		got = fmt.Sprintf("%d: %q", n, args[1:])
	}
	return &exitError{code: 2, msg: fmt.Sprintf("researchbot checkpoints %s: wrong arguments (got %s)\nUsage: %s", args[0], got, line)}
}

// run dispatches a subcommand that uses the store.
func (c *checkpointsCmd) run(ctx context.Context, args []string) error {
	if len(args) == 0 || len(args) == 1 && args[0] == "--json" {
		return c.list(ctx, len(args) == 1)
	}
	switch {
	case args[0] == "create" && len(args) == 2:
		return c.create(ctx, args[1])
	case args[0] == "update" && len(args) == 3:
		return c.update(ctx, args[1], args[2])
	case len(args) < 2:
		return checkpointsUsageError(args)
	}
	def, err := c.find(ctx, args[1])
	if err != nil {
		return err
	}
	switch {
	case args[0] == "show" && len(args) == 2:
		return writeJSON(c.stdout, checkpoints.DocumentOf(def))
	case args[0] == "reset" && len(args) == 2:
		return c.reset(ctx, def)
	case args[0] == "order" && len(args) >= 3:
		return c.order(ctx, def, args[2:])
	case args[0] == "delete" && len(args) == 2:
		if checkpoints.IsBuiltin(def.ID) {
			return &exitError{code: 1, msg: fmt.Sprintf("researchbot: %s is built in and cannot be deleted; 'researchbot checkpoints disable %s' stops offering it", def.ID, def.ID)}
		}
		def.Enabled = false
	case args[0] == "enable" && len(args) == 2:
		def.Enabled = true
	case args[0] == "disable" && len(args) == 2:
		def.Enabled = false
	case args[0] == "timeout" && len(args) == 3:
		d, err := time.ParseDuration(args[2])
		if err != nil || d < 0 {
			return &exitError{code: 2, msg: fmt.Sprintf("researchbot: %q is not a duration such as 48h or 30m", args[2])}
		}
		def.Timeout = d
	default:
		return checkpointsUsageError(args)
	}
	def.UpdatedAt = c.now
	if err := c.store.PutDefinition(ctx, def); err != nil {
		return fmt.Errorf("researchbot: %w", err)
	}
	if args[0] == "delete" {
		fmt.Fprintf(c.stdout, "%s: deleted (disabled; runs that used it keep their record; 'researchbot checkpoints enable %s' brings it back)\n", def.ID, def.ID)
		return nil
	}
	fmt.Fprintf(c.stdout, "%s: enabled %v, timeout %s (applies to checkpoints offered from now on)\n", def.ID, def.Enabled, def.Timeout)
	return nil
}

// find returns the definition with that id, or a usage error naming the
// ids there are.
func (c *checkpointsCmd) find(ctx context.Context, id string) (checkpoints.Definition, error) {
	def, err := c.store.Definition(ctx, id)
	if !errors.Is(err, checkpoints.ErrNoDefinition) {
		return def, err
	}
	defs, err := c.store.Definitions(ctx)
	if err != nil {
		return def, err
	}
	var ids []string
	for _, d := range defs {
		ids = append(ids, d.ID)
	}
	sort.Strings(ids)
	return def, &exitError{code: 2, msg: fmt.Sprintf("researchbot: no checkpoint %q (there are: %s)", id, terminal.Clean(strings.Join(ids, ", ")))}
}

// definitionJSON is one line of `researchbot checkpoints --json`.
type definitionJSON struct {
	ID               string   `json:"id"`
	Label            string   `json:"label"`
	Enabled          bool     `json:"enabled"`
	Required         bool     `json:"required"`
	Modes            []string `json:"modes"`
	TimeoutSeconds   float64  `json:"timeout_seconds"` // 0: no timeout
	BreakerFailures  int      `json:"breaker_failures"`
	BreakerThreshold int      `json:"breaker_threshold"`
	BreakerTripped   bool     `json:"breaker_tripped"`
	// Reminders is its reminder policy, the default when it states none;
	// it applies to a required checkpoint with a timeout.
	Reminders remindersJSON `json:"reminders"`
}

// remindersJSON is a reminder policy in `checkpoints --json`, with the keys
// of a definition document's "reminders" (`checkpoints show`).
type remindersJSON struct {
	Count              int    `json:"count"`
	BackoffFactor      int    `json:"backoff_factor"`
	MaxIntervalSeconds int64  `json:"max_interval_seconds"` // 0: no cap
	Escalate           string `json:"escalate"`             // admins, requester or none
}

// remindersOf is d's reminder policy as `checkpoints --json` writes it, and
// why it never applies to d, if it does not.
func remindersOf(d checkpoints.Definition) (remindersJSON, string) {
	p := d.ReminderPolicy()
	j := remindersJSON{Count: p.Count, BackoffFactor: p.Factor, MaxIntervalSeconds: int64(p.MaxInterval / time.Second), Escalate: string(p.Escalate)}
	switch {
	case d.Timeout <= 0:
		return j, "none (no timeout)"
	case !d.Required:
		return j, "none (optional: skipped at its deadline)"
	case d.OnTimeout == checkpoints.TimeoutApprove:
		return j, "none (approves itself at its deadline)"
	}
	return j, ""
}

// remindersText is a policy in a table cell: "3, ×2, max 24h, then admins".
func remindersText(r remindersJSON) string {
	gap := "no max"
	if r.MaxIntervalSeconds > 0 {
		gap = "max " + shortDuration(time.Duration(r.MaxIntervalSeconds)*time.Second)
	}
	then := map[string]string{string(checkpoints.EscalateAdmins): "then admins", string(checkpoints.EscalateRequester): "then the requester", string(checkpoints.EscalateNone): "then stop"}[r.Escalate]
	if then == "" {
		then = "then " + r.Escalate
	}
	if r.Count == 0 {
		return "none, " + then
	}
	return fmt.Sprintf("%d, ×%d, %s, %s", r.Count, r.BackoffFactor, gap, then)
}

// shortDuration is d without its zero minutes and seconds: 24h, 1h30m.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// list prints every definition in the order a run meets them: a table, or
// with asJSON one JSON object a line.
func (c *checkpointsCmd) list(ctx context.Context, asJSON bool) error {
	defs, err := c.store.Definitions(ctx)
	if err != nil {
		return err
	}
	checkpoints.SortByPipeline(defs)
	rows := make([]definitionJSON, 0, len(defs))
	// notes say why a row's reminder policy never applies ("" when it
	// does); the table shows the note instead of the policy.
	notes := make([]string, 0, len(defs))
	for _, d := range defs {
		fails, _ := c.store.CheckpointFailures(ctx, d.ID, c.now, d.BreakerWindow)
		reminders, note := remindersOf(d)
		rows = append(rows, definitionJSON{
			ID: d.ID, Label: d.Label, Enabled: d.Enabled, Required: d.Required, Modes: d.Modes,
			TimeoutSeconds: d.Timeout.Seconds(), BreakerFailures: len(fails), BreakerThreshold: d.BreakerThreshold,
			BreakerTripped: checkpoints.BreakerTripped(d, fails, c.now), Reminders: reminders,
		})
		notes = append(notes, note)
	}
	if asJSON {
		return writeJSONLines(c.stdout, rows)
	}
	tw := newTable(c.stdout)
	fmt.Fprint(tw, "ID\tENABLED\tREQUIRED\tMODES\tTIMEOUT\tBREAKER\tREMINDERS\tLABEL\n")
	for i, r := range rows {
		breaker := fmt.Sprintf("%d/%d", r.BreakerFailures, r.BreakerThreshold)
		if r.BreakerTripped {
			breaker = "TRIPPED"
		}
		timeout := "none"
		if r.TimeoutSeconds > 0 {
			timeout = time.Duration(r.TimeoutSeconds * float64(time.Second)).String()
		}
		reminders := notes[i]
		if reminders == "" {
			reminders = remindersText(r.Reminders)
		}
		fmt.Fprintf(tw, "%s\t%v\t%v\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Enabled, r.Required, strings.Join(r.Modes, ","), timeout, breaker, reminders, r.Label)
	}
	return tw.Flush()
}
