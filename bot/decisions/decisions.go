// Package decisions is what a person does with a checkpoint message, a
// feature of the bot: its Approve, Edit and Reject buttons, the Edit and
// Reject forms and their submission, and Skip, Retry and "Continue without
// it" on a checkpoint that could not be shown. A click on a checkpoint the
// store lost (Redis restored from an older file) retires the clicked
// message, and a click on a checkpoint message nothing remembered adopts
// it (bot.Request.AdoptClickedMessage).
//
// It plugs into the transport (package bot) through the routes it
// registers: the Edit and Reject forms on the App's fast path
// (bot.Routes.FormAction, which opens them within the trigger_id's 3 s
// before the shared pool), everything else as ordinary routes. Who may
// decide, whether a checkpoint is still the current one and how a decision
// is recorded and explained are the App's rules, asked through the Request
// (bot.Request.CheckCheckpoint, bot.Request.Decide), because the App Home,
// a clarifying answer and the source review's "Never use a site…" follow
// them too. The checkpoint messages themselves are the Presenter's (the
// engine's side of Slack). It renders with bot/blockkit; bot does not
// import it: the assembly (internal/app/roles) builds a Feature and lists
// it in bot.Config.Features.
package decisions

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/coder/quartz"
	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what the feature needs of the research engine
// (*pipeline.Engine) beyond the App's rules: marking a checkpoint's Edit
// form opened, and the ways past a checkpoint other than a decision.
type Engine interface {
	Opened(ctx context.Context, instanceID, actor string) error
	Skip(ctx context.Context, instanceID, by string) (*pipeline.Run, error)
	Retry(ctx context.Context, instanceID, by string) (*pipeline.Run, error)
	ContinueWithout(ctx context.Context, instanceID, admin string) (*pipeline.Run, error)
}

// Home is told after a person decided in a form, which may have been
// opened from their App Home (bot/home's Feature).
type Home interface {
	Decided(ctx context.Context, req *bot.Request)
}

// Config configures a Feature. Engine and the Kit's Sender are required.
type Config struct {
	Engine Engine
	// Admins (SLACK_ADMINS) may continue a run without a required
	// checkpoint that could not be shown.
	Admins []string
	// Home is refreshed after a decision made in a form; nil: none.
	Home Home
	// Kit is the transport's Sender (it retires the messages of lost
	// checkpoints), logger and clock (it dates the decisions).
	bot.Kit
}

// preAckBudget bounds the work a form submission does before its ack.
const preAckBudget = 2 * time.Second

// Feature handles the buttons and forms of checkpoint messages.
type Feature struct {
	engine Engine
	admins []string
	home   Home
	send   *bot.Sender
	log    *slog.Logger
	clock  quartz.Clock
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: the checkpoints' decisions need",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, admins: slices.Clone(cfg.Admins), home: cfg.Home, send: kit.Sender, log: kit.Logger, clock: kit.Clock}, nil
}

// Register routes a checkpoint's buttons and forms: Approve; Edit and
// Reject, whose forms open on the fast path (and on the pool when it is
// full); the forms' submissions; Skip, Retry and Continue without it.
func (f *Feature) Register(r *bot.Routes) {
	for _, id := range []string{blockkit.ActionApprove, blockkit.ActionEdit, blockkit.ActionReject} {
		r.Action(id, f.onCheckpointAction)
	}
	r.FormAction(blockkit.ActionEdit, loadingModal(checkpoints.Edit), f.prepareForm)
	r.FormAction(blockkit.ActionReject, loadingModal(checkpoints.Reject), f.prepareForm)
	for _, id := range []string{blockkit.ActionSkip, blockkit.ActionRetry, blockkit.ActionContinueWithout} {
		r.Action(id, f.onPassOver)
	}
	r.View(blockkit.CallbackEdit, f.onSubmission)
	r.View(blockkit.CallbackReject, f.onSubmission)
}

// onCheckpointAction handles a click on a checkpoint's Approve, Edit or
// Reject button after the ack (Edit and Reject come here only when the form
// fast path is full).
func (f *Feature) onCheckpointAction(ctx context.Context, req *bot.Request) error {
	action, _ := blockkit.ActionOf(req.Action.ActionID)
	instID, user := req.Action.Value, req.UserID
	req.Log = req.Log.With("checkpoint_id", instID)
	r, problem := req.CheckCheckpoint(ctx, instID)
	if problem != nil {
		req.Log.Info("bot: click refused")
		f.retireLostMessage(ctx, req, r, instID)
		return bot.Tell(problem, "Nothing was changed")
	}
	inst := r.Instance(instID)
	req.Log = req.Log.With("run_id", r.ID)
	req.AdoptClickedMessage(ctx, inst)
	switch action {
	case checkpoints.Edit, checkpoints.Reject:
		if _, err := req.OpenForm(ctx, form(action, inst)); err != nil {
			return err
		}
		f.formOpened(ctx, req.Log, action, instID, user)
	case checkpoints.Approve:
		_, err := req.Decide(ctx, r, instID, checkpoints.Decision{Action: checkpoints.Approve, By: user, At: f.clock.Now()})
		return err
	}
	return nil
}

// prepareForm answers an Edit or Reject click on the fast path
// (bot.FormHandler): the form, when the clicker may decide the checkpoint
// now; then the clicked message is adopted and an Edit form marked opened.
func (f *Feature) prepareForm(ctx context.Context, req *bot.Request) (slack.ModalViewRequest, func(context.Context), error) {
	action, _ := blockkit.ActionOf(req.Action.ActionID)
	instID, user := req.Action.Value, req.UserID
	req.Log = req.Log.With("checkpoint_id", instID)
	r, problem := req.CheckCheckpoint(ctx, instID)
	if problem != nil {
		req.Log.Info("bot: click refused")
		f.retireLostMessage(ctx, req, r, instID)
		return slack.ModalViewRequest{}, nil, bot.Tell(problem, "Nothing was changed")
	}
	inst := r.Instance(instID)
	shown := func(ctx context.Context) {
		req.AdoptClickedMessage(ctx, inst)
		f.formOpened(ctx, req.Log, action, instID, user)
	}
	return form(action, inst), shown, nil
}

// form is the Edit or Reject form of inst.
func form(action checkpoints.Action, inst *checkpoints.Instance) slack.ModalViewRequest {
	if action == checkpoints.Reject {
		return blockkit.RejectModal(inst)
	}
	return blockkit.EditModal(inst)
}

// formOpened tells the engine that someone opened a checkpoint's Edit form.
func (f *Feature) formOpened(ctx context.Context, log *slog.Logger, action checkpoints.Action, instID, user string) {
	if action != checkpoints.Edit {
		return
	}
	if err := f.engine.Opened(ctx, instID, user); err != nil {
		log.Warn("bot: marking the checkpoint opened failed", "err", err)
	}
}

// loadingModal is shown while a slow store is asked about a checkpoint.
func loadingModal(action checkpoints.Action) slack.ModalViewRequest {
	title := "Edit"
	if action == checkpoints.Reject {
		title = "Reject"
	}
	return slack.ModalViewRequest{
		Type:   slack.VTModal,
		Title:  blockkit.Plain(title, blockkit.MaxModalTitle),
		Close:  blockkit.Plain("Cancel", blockkit.MaxModalTitle),
		Blocks: slack.Blocks{BlockSet: []slack.Block{blockkit.Section(":hourglass_flowing_sand: Loading the checkpoint…")}},
	}
}

// onSubmission handles a submitted Edit or Reject form: it validates before
// the ack (field errors go back in the ack), then records the decision. A
// problem found after the form was closed (at the ack deadline) is told in
// the run's thread, where the person clicked.
func (f *Feature) onSubmission(ctx context.Context, req *bot.Request) error {
	cb := req.Callback
	user, instID := cb.User.ID, cb.View.PrivateMetadata
	var state map[string]map[string]slack.BlockAction
	if cb.View.State != nil {
		state = cb.View.State.Values
	}
	pctx, cancel := context.WithTimeout(ctx, preAckBudget)
	r, problem := req.CheckCheckpoint(pctx, instID)
	cancel()
	if r != nil {
		req.AnswerBeside(r)
	}
	if problem != nil {
		if r == nil {
			req.Log.Info("bot: a refused form cannot be explained in a thread: the run is unknown")
		}
		return bot.Tell(problem, "Your form was not saved")
	}
	inst := r.Instance(instID)
	d := checkpoints.Decision{By: user, At: f.clock.Now()}
	switch cb.View.CallbackID {
	case blockkit.CallbackEdit:
		values := blockkit.ParseSubmission(inst.Fields, state)
		if _, errs := checkpoints.Validate(inst.Fields, values); len(errs) > 0 {
			if !req.Ack(slack.NewErrorsViewSubmissionResponse(blockkit.SubmissionErrors(inst.Fields, errs))) {
				return bot.Tell(blockkit.RenderFieldProblems(errs), "Your changes were not saved")
			}
			return nil
		}
		d.Action, d.Values = checkpoints.Edit, values
	case blockkit.CallbackReject:
		reason := blockkit.RejectReason(state)
		if reason == "" {
			if !req.Ack(slack.NewErrorsViewSubmissionResponse(map[string]string{blockkit.ReasonBlockID: "Please say why, so the researcher can do better."})) {
				return bot.Tell(blockkit.RenderError("Nothing was rejected: a rejection needs a reason.", "Click *Reject* again and say why."), "Nothing was rejected")
			}
			return nil
		}
		d.Action, d.Note = checkpoints.Reject, reason
	default:
		req.Ack(nil)
		return nil
	}
	req.Ack(nil)
	ctx, err := req.Decide(ctx, r, instID, d)
	if err != nil {
		return err
	}
	if f.home != nil {
		f.home.Decided(ctx, req)
	}
	return nil
}

// onPassOver handles Skip, Retry and Continue without it. Skip and Retry
// are for whoever may decide the run; Continue without it for admins
// (SLACK_ADMINS) only.
func (f *Feature) onPassOver(ctx context.Context, req *bot.Request) error {
	act, user := req.Action, req.UserID
	log := req.Log.With("checkpoint_id", act.Value)
	var err error
	switch act.ActionID {
	case blockkit.ActionContinueWithout:
		if !slices.Contains(f.admins, user) {
			return bot.Tell(blockkit.RenderError("Only an admin (SLACK_ADMINS) can continue without a required checkpoint.", "Nothing was changed. Retry shows it again."), "Nothing was changed")
		}
		_, err = f.engine.ContinueWithout(ctx, act.Value, user)
	default:
		if _, problem := req.CheckCheckpoint(ctx, act.Value); problem != nil {
			return bot.Tell(problem, "Nothing was changed")
		}
		if act.ActionID == blockkit.ActionSkip {
			_, err = f.engine.Skip(ctx, act.Value, user)
		} else {
			_, err = f.engine.Retry(ctx, act.Value, user)
		}
	}
	switch {
	case err == nil:
		log.Info("bot: checkpoint passed over or shown again")
		return nil
	case errors.Is(err, checkpoints.ErrCannotSkipRequired):
		return bot.Tell(blockkit.RenderError("This checkpoint is required, so it cannot be skipped.", "Nothing was changed; please decide it."), "Nothing was changed")
	case errors.Is(err, pipeline.ErrNotStranded):
		return bot.Tell(blockkit.RenderError("This checkpoint can still be shown, so there is nothing to continue without.", "Nothing was changed; it can be decided (or, if optional, skipped)."), "Nothing was changed")
	case errors.Is(err, pipeline.ErrNotCurrent), errors.Is(err, checkpoints.ErrAlreadyDecided):
		return bot.Tell(blockkit.RenderError("This checkpoint is no longer waiting: it was decided or the run moved on.", "Nothing was changed."), "Nothing was changed")
	}
	return fmt.Errorf("pass over checkpoint %s: %w", act.Value, err)
}

// retireLostMessage replaces the clicked message of checkpoint instID, which
// run r lost (the store restored from an older file: r.LostDecision), with
// a line saying so, so that its stale buttons are not clicked again (best
// effort: the clicker was answered already). A checkpoint r still has, or
// a run not known, leaves the message as it is.
func (f *Feature) retireLostMessage(ctx context.Context, req *bot.Request, r *pipeline.Run, instID string) {
	cb := req.Callback
	if cb == nil || r == nil || r.LostDecision == nil || r.Instance(instID) != nil {
		return
	}
	ts := cb.Container.MessageTs
	ts = cmp.Or(ts, cb.Message.Timestamp)
	channel := cb.Container.ChannelID
	channel = cmp.Or(channel, cb.Channel.ID)
	if ts == "" || channel == "" || cb.Container.IsEphemeral {
		return
	}
	blocks := blockkit.RenderLostCheckpointRetired(r)
	if err := f.send.Update(ctx, channel, ts, blocks, "This checkpoint was lost when the bot's storage was restored"); err != nil {
		req.Log.Warn("bot: replacing the message of a lost checkpoint failed", "run_id", r.ID, "checkpoint_id", instID, "err", err)
	}
}
