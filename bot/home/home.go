// Package home is the App Home, a feature of the bot: the tab a person
// opens beside their messages with the app lists the checkpoints waiting on
// their decision (with the thread's buttons), their latest runs and their
// research streams; for admins (SLACK_ADMINS, workspace admins and owners)
// it adds the checkpoint definitions with their counts and breakers, and
// the buttons and form that manage them (enable, disable, reset a breaker,
// edit, create). The definitions' admin lives here because the Home is its
// only door: its buttons are on the tab and its form refreshes it.
//
// It plugs into the transport (package bot) as bot.Config.Home
// (bot.Home): the App registers its routes and tells it when a click on
// the tab may have changed a person's Home; the checkpoints' forms
// (bot/decisions) tell it of a decision made in a form (Decided, their
// port decisions.Home, which the assembly plugs it into). What waits on
// whom is the App's rule, asked through the Request
// (bot.Request.WaitingOn, bot.Request.ApprovesAnywhere). It renders with
// bot/blockkit; bot does not import it: the assembly (internal/app/roles)
// builds a Feature.
package home

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// Runs lists runs (*pipeline.Engine).
type Runs interface {
	List(ctx context.Context, f pipeline.RunFilter) ([]*pipeline.Run, error)
}

// Memory remembers, for every replica, whose App Home was published, so a
// decision made in a form refreshes it (redisstore.SlackMemory).
type Memory interface {
	HomePublished(ctx context.Context, user string) (bool, error)
	RememberHomePublished(ctx context.Context, user string, ttl time.Duration) error
}

// Definitions is what the admin section needs to show and manage checkpoint
// definitions (*redisstore.Store).
type Definitions interface {
	Definitions(ctx context.Context) ([]checkpoints.Definition, error)
	Definition(ctx context.Context, id string) (checkpoints.Definition, error)
	CreateDefinition(ctx context.Context, d checkpoints.Definition) error
	PutDefinition(ctx context.Context, d checkpoints.Definition) error
	ResetBreaker(ctx context.Context, defID string) error
	CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)
}

// Streams lists research streams (*scheduler.Service).
type Streams interface {
	List(ctx context.Context) ([]*scheduler.Stream, error)
}

// Config configures a Feature. Runs, Memory and the Kit's Sender are
// required.
type Config struct {
	Runs   Runs
	Memory Memory
	// Definitions lets admins manage checkpoint definitions from the Home;
	// nil shows no admin section.
	Definitions Definitions
	// Admins (SLACK_ADMINS) manage checkpoint definitions, as do workspace
	// admins and owners.
	Admins []string
	// Streams lists the streams the Home shows (a person's own); nil shows
	// none.
	Streams Streams
	// Kit is the transport's Sender, metrics, logger and clock (it dates
	// the Home and the definitions changed).
	bot.Kit
}

// Bounds of the runs the App Home reads.
const (
	// seenTTL is how long people whose App Home was published are
	// remembered (Memory.HomePublished), so a decision made in a form
	// refreshes it.
	seenTTL = 30 * 24 * time.Hour

	myRuns  = 20  // the person's own runs
	allRuns = 200 // everyone's, for approvers' decisions and admins' counts
)

// Feature is the App Home.
type Feature struct {
	runs    Runs
	mem     Memory
	defs    Definitions
	admins  []string
	streams Streams
	send    *bot.Sender
	log     *slog.Logger
	clock   quartz.Clock
}

var _ bot.Home = (*Feature)(nil)

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: the App Home needs",
		bot.Need{Name: "the runs", Present: cfg.Runs != nil},
		bot.Need{Name: "a memory", Present: cfg.Memory != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{runs: cfg.Runs, mem: cfg.Memory, defs: cfg.Definitions, admins: slices.Clone(cfg.Admins), streams: cfg.Streams,
		send: kit.Sender, log: kit.Logger, clock: kit.Clock}, nil
}

// adminActions are the admin buttons of the App Home.
func adminActions() []string {
	return []string{blockkit.ActionHomeEnable, blockkit.ActionHomeDisable, blockkit.ActionHomeReset, blockkit.ActionHomeEdit, blockkit.ActionHomeCreate}
}

// Register routes the App Home: the tab, its admin buttons and the
// definition form.
func (f *Feature) Register(r *bot.Routes) {
	r.Event(string(slackevents.AppHomeOpened), func(ctx context.Context, req *bot.Request) error {
		return f.publish(ctx, req, req.Log)
	})
	for _, id := range adminActions() {
		r.Action(id, f.onAdmin)
	}
	r.View(blockkit.CallbackDefinition, f.onDefinitionSubmit)
}

// Clicked publishes the clicker's App Home again after a click on a
// checkpoint's button there (the admin buttons publish it themselves).
func (f *Feature) Clicked(ctx context.Context, req *bot.Request) {
	if req.Action != nil && slices.Contains(adminActions(), req.Action.ActionID) {
		return
	}
	if err := f.publish(ctx, req, f.log); err != nil {
		f.log.Warn("bot: refreshing the App Home failed", "user", req.UserID, "err", err)
	}
}

// Decided publishes the person's App Home again after they decided in a
// form, if they have one: the form may have been opened from it, and a tab
// open underneath is not told. bot/decisions tells it (decisions.Home).
func (f *Feature) Decided(ctx context.Context, req *bot.Request) {
	if seen, err := f.mem.HomePublished(ctx, req.UserID); err != nil || !seen {
		return
	}
	if err := f.publish(ctx, req, req.Log); err != nil {
		req.Log.Warn("bot: refreshing the App Home failed", "err", err)
	}
}

// isAdmin reports whether user manages checkpoints: listed in SLACK_ADMINS,
// or a workspace admin or owner.
func (f *Feature) isAdmin(ctx context.Context, user string) bool {
	return user != "" && (slices.Contains(f.admins, user) || bot.IsWorkspaceAdmin(ctx, f.send, f.log, user))
}

// publish renders and publishes the App Home of the person who made req.
func (f *Feature) publish(ctx context.Context, req *bot.Request, log *slog.Logger) error {
	user := req.UserID
	if user == "" {
		return nil
	}
	v, err := f.view(ctx, req, log)
	if err != nil {
		return err
	}
	if err := f.send.PublishHome(ctx, user, blockkit.RenderHome(v)); err != nil {
		return fmt.Errorf("publish the App Home: %w", err)
	}
	if err := f.mem.RememberHomePublished(ctx, user, seenTTL); err != nil {
		log.Warn("bot: could not remember an App Home", "err", err)
	}
	return nil
}

// view gathers what the App Home of the person who made req shows.
func (f *Feature) view(ctx context.Context, req *bot.Request, log *slog.Logger) (blockkit.HomeView, error) {
	user := req.UserID
	now := f.clock.Now()
	v := blockkit.HomeView{Now: now}
	mine, err := f.runs.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: myRuns})
	if err != nil {
		return v, fmt.Errorf("list the runs of %s: %w", user, err)
	}
	v.Runs = mine
	admin := f.defs != nil && f.isAdmin(ctx, user)
	candidates := mine
	var all []*pipeline.Run
	if admin || req.ApprovesAnywhere() {
		if all, err = f.runs.List(ctx, pipeline.RunFilter{Limit: allRuns}); err != nil {
			return v, fmt.Errorf("list runs: %w", err)
		}
		candidates = all
	}
	v.Pending = req.WaitingOn(ctx, candidates)
	if f.streams != nil {
		streams, err := f.streams.List(ctx)
		if err != nil {
			log.Warn("bot: listing streams for the App Home failed", "err", err)
		}
		for _, st := range streams {
			if st.Owner == user {
				v.Streams = append(v.Streams, st)
			}
		}
	}
	if admin {
		if v.Admin, err = f.adminSection(ctx, all, now); err != nil {
			return v, err
		}
	}
	return v, nil
}

// adminSection gathers the admin section from the definitions and the runs
// of the last HomeStatsWindow.
func (f *Feature) adminSection(ctx context.Context, runs []*pipeline.Run, now time.Time) (*blockkit.HomeAdmin, error) {
	defs, err := f.defs.Definitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint definitions: %w", err)
	}
	checkpoints.SortByPipeline(defs)
	since := now.Add(-blockkit.HomeStatsWindow)
	counts := blockkit.CountInstances(runs, since)
	out := &blockkit.HomeAdmin{}
	for _, r := range runs {
		if !r.CreatedAt.Before(since) {
			out.Runs++
		}
	}
	out.Truncated = len(runs) == allRuns && !runs[len(runs)-1].CreatedAt.Before(since)
	for _, d := range defs {
		fails, err := f.defs.CheckpointFailures(ctx, d.ID, now, d.BreakerWindow)
		if err != nil {
			return nil, fmt.Errorf("load the failures of %s: %w", d.ID, err)
		}
		out.Definitions = append(out.Definitions, blockkit.HomeDefinition{Def: d, Failures: len(fails), Tripped: checkpoints.BreakerTripped(d, fails, now), Counts: counts[d.ID]})
	}
	return out, nil
}

// onAdmin handles the admin buttons of the App Home. Who clicked is
// checked again: a button is no proof of being an admin.
func (f *Feature) onAdmin(ctx context.Context, req *bot.Request) error {
	user, act := req.UserID, req.Action
	if f.defs == nil || !f.isAdmin(ctx, user) {
		req.Log.Warn("bot: a non-admin used an admin button", "action", act.ActionID)
		return f.notice(ctx, req, "Only admins (SLACK_ADMINS, workspace admins and owners) can manage checkpoints. Nothing was changed.")
	}
	store := f.defs
	if act.ActionID == blockkit.ActionHomeCreate {
		return f.openDefinitionForm(ctx, req, checkpoints.Definition{Modes: []string{checkpoints.ModeGuided, checkpoints.ModeFull},
			MaxRetries: checkpoints.DefaultMaxRetries, BreakerThreshold: checkpoints.DefaultBreakerThreshold, BreakerWindow: checkpoints.DefaultBreakerWindow}, true)
	}
	d, err := store.Definition(ctx, act.Value)
	if errors.Is(err, checkpoints.ErrNoDefinition) {
		return f.notice(ctx, req, "That checkpoint definition no longer exists. Nothing was changed.")
	}
	if err != nil {
		return fmt.Errorf("load definition %s: %w", act.Value, err)
	}
	switch act.ActionID {
	case blockkit.ActionHomeEdit:
		return f.openDefinitionForm(ctx, req, d, false)
	case blockkit.ActionHomeReset:
		err = store.ResetBreaker(ctx, d.ID)
	default:
		d.Enabled = act.ActionID == blockkit.ActionHomeEnable
		d.UpdatedAt = f.clock.Now()
		err = store.PutDefinition(ctx, d)
	}
	if err != nil {
		return fmt.Errorf("change definition %s: %w", d.ID, err)
	}
	req.Log.Info("bot: checkpoint definition changed", "definition", d.ID, "action", act.ActionID)
	return f.publish(ctx, req, req.Log)
}

// notice tells the clicker something in a small modal (the App Home has
// no thread to answer in).
func (f *Feature) notice(ctx context.Context, req *bot.Request, text string) error {
	if _, err := f.send.OpenView(ctx, req.TriggerID, *blockkit.NoticeModal([]slack.Block{blockkit.Section(":warning: " + text)})); err != nil {
		req.Log.Warn("bot: could not open a notice", "err", err)
	}
	return nil
}

// openDefinitionForm opens the create or edit form.
func (f *Feature) openDefinitionForm(ctx context.Context, req *bot.Request, d checkpoints.Definition, create bool) error {
	if _, err := f.send.OpenView(ctx, req.TriggerID, blockkit.DefinitionModal(d, create)); err != nil {
		return fmt.Errorf("open the definition form: %w", err)
	}
	return nil
}

// onDefinitionSubmit validates a submitted definition form, answers
// problems as field errors in the ack, and stores the definition. Only
// admins may: a form is no proof of being one.
func (f *Feature) onDefinitionSubmit(ctx context.Context, req *bot.Request) error {
	cb, user := req.Callback, req.UserID
	if f.defs == nil || !f.isAdmin(ctx, user) {
		req.Log.Warn("bot: a non-admin submitted the definition form")
		req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("Only admins (SLACK_ADMINS, workspace admins and owners) can manage checkpoints.", "Nothing was saved."))))
		return nil
	}
	store := f.defs
	var meta blockkit.DefinitionMeta
	if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta); err != nil {
		req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("I couldn't read this form.", "Nothing was saved; open it again from the App Home."))))
		return nil
	}
	create := meta.ID == ""
	var base checkpoints.Definition
	if !create {
		var err error
		if base, err = store.Definition(ctx, meta.ID); err != nil {
			req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("I couldn't load the checkpoint "+blockkit.Escape(meta.ID)+".", "Nothing was saved."))))
			return nil
		}
	}
	var state map[string]map[string]slack.BlockAction
	if cb.View.State != nil {
		state = cb.View.State.Values
	}
	d, slots, errs := blockkit.ParseDefinitionForm(meta, base, state)
	ps := checkpoints.DefinitionProblems(d)
	if create && checkpoints.IsBuiltin(d.ID) {
		ps = append(ps, checkpoints.Problem{Path: "id", Message: "This is a built-in's id; edit the built-in instead."})
	}
	if !create {
		ps = append(ps, checkpoints.ChangeProblems(base, d)...)
	}
	for k, v := range blockkit.DefinitionErrors(ps, slots, create) {
		if _, ok := errs[k]; !ok {
			errs[k] = v
		}
	}
	now := f.clock.Now()
	var err error
	if len(errs) == 0 {
		if create {
			d.Enabled, d.CreatedAt, d.UpdatedAt = true, now, now
			err = store.CreateDefinition(ctx, d)
			if errors.Is(err, checkpoints.ErrDefinitionExists) {
				errs[blockkit.DefIDBlock] = "A checkpoint with this id exists; choose another."
			}
		} else {
			err = store.PutDefinition(ctx, checkpoints.Edited(base, d, true, now))
		}
	}
	if len(errs) > 0 {
		req.Ack(slack.NewErrorsViewSubmissionResponse(errs))
		return nil
	}
	if err != nil {
		req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("I couldn't save the checkpoint.", "Nothing was saved; please try again in a minute."))))
		return fmt.Errorf("save definition %s: %w", d.ID, err)
	}
	req.Ack(nil)
	req.Log.Info("bot: checkpoint definition saved", "definition", d.ID, "created", create)
	return f.publish(ctx, req, req.Log)
}
