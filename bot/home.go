package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// CheckpointAdmin is what the App Home needs to show and manage checkpoint
// definitions (*redisstore.Store).
type CheckpointAdmin interface {
	Definitions(ctx context.Context) ([]checkpoints.Definition, error)
	Definition(ctx context.Context, id string) (checkpoints.Definition, error)
	CreateDefinition(ctx context.Context, d checkpoints.Definition) error
	PutDefinition(ctx context.Context, d checkpoints.Definition) error
	ResetBreaker(ctx context.Context, defID string) error
	CheckpointFailures(ctx context.Context, defID string, at time.Time, window time.Duration) ([]time.Time, error)
}

// StreamLister lists research streams (*scheduler.Service).
type StreamLister interface {
	List(ctx context.Context) ([]*scheduler.Stream, error)
}

// Bounds of the runs the App Home reads.
const (
	// homeSeenTTL is how long people whose App Home was published are
	// remembered (SlackMemory.HomePublished), so a decision made in a form
	// refreshes it.
	homeSeenTTL = 30 * 24 * time.Hour

	homeMyRuns  = 20  // the person's own runs
	homeAllRuns = 200 // everyone's, for approvers' decisions and admins' counts
)

// homeAdminActions are the admin buttons of the App Home.
func homeAdminActions() []string {
	return []string{blockkit.ActionHomeEnable, blockkit.ActionHomeDisable, blockkit.ActionHomeReset, blockkit.ActionHomeEdit, blockkit.ActionHomeCreate}
}

// registerHome routes the App Home: the tab, its admin buttons and the
// definition form.
func (a *App) registerHome(r *Routes) {
	r.Event(string(slackevents.AppHomeOpened), func(ctx context.Context, req *Request) error {
		return a.publishHome(ctx, req.UserID, req.Log)
	})
	for _, id := range homeAdminActions() {
		r.Action(id, a.onHomeAdmin)
	}
	r.View(blockkit.CallbackDefinition, a.onDefinitionSubmit)
}

// isAdmin reports whether user manages checkpoints: listed in SLACK_ADMINS,
// or a workspace admin or owner.
func (a *App) isAdmin(ctx context.Context, user string) bool {
	return user != "" && (slices.Contains(a.cfg.Checkpoints.Admins, user) || IsWorkspaceAdmin(ctx, a.send, a.log, user))
}

// IsWorkspaceAdmin reports whether user is a workspace admin or owner
// (users.info through send); false, logged on log, when Slack cannot say.
// Features ask it before letting someone change what another person owns.
func IsWorkspaceAdmin(ctx context.Context, send *Sender, log *slog.Logger, user string) bool {
	u, err := send.UserInfo(ctx, user)
	if err != nil {
		log.Warn("bot: users.info failed; treating the user as no admin", "user", user, "err", err)
		return false
	}
	return u.IsAdmin || u.IsOwner || u.IsPrimaryOwner
}

// publishHome renders and publishes user's App Home.
func (a *App) publishHome(ctx context.Context, user string, log *slog.Logger) error {
	if user == "" {
		return nil
	}
	v, err := a.homeView(ctx, user, log)
	if err != nil {
		return err
	}
	if err := a.send.PublishHome(ctx, user, blockkit.RenderHome(v)); err != nil {
		return fmt.Errorf("publish the App Home: %w", err)
	}
	if err := a.cfg.Memory.RememberHomePublished(ctx, user, homeSeenTTL); err != nil {
		log.Warn("bot: could not remember an App Home", "err", err)
	}
	return nil
}

// refreshOpenHome publishes user's App Home again after they decided in a
// form, if they have one: the form may have been opened from it, and a tab
// open underneath is not told.
func (a *App) refreshOpenHome(ctx context.Context, user string, log *slog.Logger) {
	if seen, err := a.cfg.Memory.HomePublished(ctx, user); err != nil || !seen {
		return
	}
	if err := a.publishHome(ctx, user, log); err != nil {
		log.Warn("bot: refreshing the App Home failed", "err", err)
	}
}

// homeView gathers what user's App Home shows.
func (a *App) homeView(ctx context.Context, user string, log *slog.Logger) (blockkit.HomeView, error) {
	now := a.now()
	v := blockkit.HomeView{Now: now}
	mine, err := a.engine.List(ctx, pipeline.RunFilter{RequestedBy: user, Limit: homeMyRuns})
	if err != nil {
		return v, fmt.Errorf("list the runs of %s: %w", user, err)
	}
	v.Runs = mine
	admin := a.cfg.Checkpoints.Admin != nil && a.isAdmin(ctx, user)
	candidates := mine
	var all []*pipeline.Run
	if admin || a.approvesAnywhere(user) {
		if all, err = a.engine.List(ctx, pipeline.RunFilter{Limit: homeAllRuns}); err != nil {
			return v, fmt.Errorf("list runs: %w", err)
		}
		candidates = all
	}
	for _, r := range candidates {
		inst := r.Current()
		stranded := inst != nil && r.Stranded == inst.ID
		if r.Status.Final() || inst == nil || !(inst.Open() || stranded) || !a.allowed(r, user) {
			continue
		}
		v.Pending = append(v.Pending, blockkit.HomePending{Run: r, Inst: inst, Link: a.checkpointLink(ctx, inst.ID)})
	}
	if a.cfg.Streams.List != nil {
		streams, err := a.cfg.Streams.List.List(ctx)
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
		if v.Admin, err = a.homeAdmin(ctx, all, now); err != nil {
			return v, err
		}
	}
	return v, nil
}

// refreshHome publishes the clicker's App Home again after a click on a
// checkpoint's button there (the admin buttons publish it themselves).
func (a *App) refreshHome(ctx context.Context, cb slack.InteractionCallback, act slack.BlockAction) {
	if cb.View.Type != slack.VTHomeTab || slices.Contains(homeAdminActions(), act.ActionID) {
		return
	}
	if err := a.publishHome(ctx, cb.User.ID, a.log); err != nil {
		a.log.Warn("bot: refreshing the App Home failed", "user", cb.User.ID, "err", err)
	}
}

// approvesAnywhere reports whether user is an approver of some channel.
func (a *App) approvesAnywhere(user string) bool {
	for _, users := range a.approvers {
		if users[user] {
			return true
		}
	}
	return false
}

// checkpointLink is the permalink of a checkpoint's message, "" when unknown.
func (a *App) checkpointLink(ctx context.Context, instID string) string {
	m, err := lookupCheckpointMsg(ctx, a.cfg.Memory, instID)
	if err != nil || m == nil {
		return ""
	}
	link, err := a.send.Permalink(ctx, m.Channel, m.TS)
	if err != nil {
		return ""
	}
	return link
}

// homeAdmin gathers the admin section from the definitions and the runs of
// the last HomeStatsWindow.
func (a *App) homeAdmin(ctx context.Context, runs []*pipeline.Run, now time.Time) (*blockkit.HomeAdmin, error) {
	defs, err := a.cfg.Checkpoints.Admin.Definitions(ctx)
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
	out.Truncated = len(runs) == homeAllRuns && !runs[len(runs)-1].CreatedAt.Before(since)
	for _, d := range defs {
		fails, err := a.cfg.Checkpoints.Admin.CheckpointFailures(ctx, d.ID, now, d.BreakerWindow)
		if err != nil {
			return nil, fmt.Errorf("load the failures of %s: %w", d.ID, err)
		}
		out.Definitions = append(out.Definitions, blockkit.HomeDefinition{Def: d, Failures: len(fails), Tripped: checkpoints.BreakerTripped(d, fails, now), Counts: counts[d.ID]})
	}
	return out, nil
}

// onHomeAdmin handles the admin buttons of the App Home. Who clicked is
// checked again: a button is no proof of being an admin.
func (a *App) onHomeAdmin(ctx context.Context, req *Request) error {
	user, act := req.UserID, req.Action
	if a.cfg.Checkpoints.Admin == nil || !a.isAdmin(ctx, user) {
		req.Log.Warn("bot: a non-admin used an admin button", "action", act.ActionID)
		return a.homeNotice(ctx, req, "Only admins (SLACK_ADMINS, workspace admins and owners) can manage checkpoints. Nothing was changed.")
	}
	store := a.cfg.Checkpoints.Admin
	if act.ActionID == blockkit.ActionHomeCreate {
		return a.openDefinitionForm(ctx, req, checkpoints.Definition{Modes: []string{checkpoints.ModeGuided, checkpoints.ModeFull},
			MaxRetries: checkpoints.DefaultMaxRetries, BreakerThreshold: checkpoints.DefaultBreakerThreshold, BreakerWindow: checkpoints.DefaultBreakerWindow}, true)
	}
	d, err := store.Definition(ctx, act.Value)
	if errors.Is(err, checkpoints.ErrNoDefinition) {
		return a.homeNotice(ctx, req, "That checkpoint definition no longer exists. Nothing was changed.")
	}
	if err != nil {
		return fmt.Errorf("load definition %s: %w", act.Value, err)
	}
	switch act.ActionID {
	case blockkit.ActionHomeEdit:
		return a.openDefinitionForm(ctx, req, d, false)
	case blockkit.ActionHomeReset:
		err = store.ResetBreaker(ctx, d.ID)
	default:
		d.Enabled = act.ActionID == blockkit.ActionHomeEnable
		d.UpdatedAt = a.now()
		err = store.PutDefinition(ctx, d)
	}
	if err != nil {
		return fmt.Errorf("change definition %s: %w", d.ID, err)
	}
	req.Log.Info("bot: checkpoint definition changed", "definition", d.ID, "action", act.ActionID)
	return a.publishHome(ctx, user, req.Log)
}

// homeNotice tells the clicker something in a small modal (the App Home has
// no thread to answer in).
func (a *App) homeNotice(ctx context.Context, req *Request, text string) error {
	if _, err := a.send.OpenView(ctx, req.TriggerID, *blockkit.NoticeModal([]slack.Block{blockkit.Section(":warning: " + text)})); err != nil {
		req.Log.Warn("bot: could not open a notice", "err", err)
	}
	return nil
}

// openDefinitionForm opens the create or edit form.
func (a *App) openDefinitionForm(ctx context.Context, req *Request, d checkpoints.Definition, create bool) error {
	if _, err := a.send.OpenView(ctx, req.TriggerID, blockkit.DefinitionModal(d, create)); err != nil {
		return fmt.Errorf("open the definition form: %w", err)
	}
	return nil
}

// onDefinitionSubmit validates a submitted definition form, answers
// problems as field errors in the ack, and stores the definition. Only
// admins may: a form is no proof of being one.
func (a *App) onDefinitionSubmit(ctx context.Context, req *Request) error {
	cb, user := req.Callback, req.UserID
	if a.cfg.Checkpoints.Admin == nil || !a.isAdmin(ctx, user) {
		req.Log.Warn("bot: a non-admin submitted the definition form")
		req.Ack(slack.NewUpdateViewSubmissionResponse(blockkit.NoticeModal(blockkit.RenderError("Only admins (SLACK_ADMINS, workspace admins and owners) can manage checkpoints.", "Nothing was saved."))))
		return nil
	}
	store := a.cfg.Checkpoints.Admin
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
	now := a.now()
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
	return a.publishHome(ctx, user, req.Log)
}
