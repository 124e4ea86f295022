package bot

// The App Home as the transport sees it: the port the Home feature
// (bot/home) implements, the rules of the App it asks through the Request
// (what waits on whom, who approves), and who is a workspace admin.

import (
	"context"
	"errors"
	"log/slog"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Home is the App Home (bot/home's Feature, which the assembly plugs in as
// Config.Home): the App registers its routes and tells it of a click served
// on the tab, which may change what the person's Home shows. (A decision
// made in a form is told to it by the form's feature, bot/decisions.) nil
// means the App has no Home.
type Home interface {
	Registrar
	// Clicked is told after a click on the person's Home tab was served
	// (a checkpoint's button there), so their Home shows its effect.
	Clicked(ctx context.Context, req *Request)
}

// Bounds of the runs the assistant panel reads for what waits on a person
// (the App Home reads as many for its own list).
const (
	pendingMyRuns  = 20  // the person's own runs
	pendingAllRuns = 200 // everyone's, for approvers
)

// ApprovesAnywhere reports whether the person who made the request approves
// checkpoints in some channel (CheckpointsConfig.Approvers), so runs others
// asked for may wait on them.
func (r *Request) ApprovesAnywhere() bool {
	return r.app != nil && r.app.approvesAnywhere(r.UserID)
}

// WaitingOn returns the checkpoints of runs that wait on the decision of the
// person who made the request, by the App's rules: the run is not
// finished, its current checkpoint is open (or stranded: its message could
// not be shown), and they asked for the run or approve in its channel.
// Each comes with the permalink of its message when the App knows where it
// was posted.
func (r *Request) WaitingOn(ctx context.Context, runs []*pipeline.Run) []blockkit.HomePending {
	if r.app == nil {
		return nil
	}
	return r.app.waitingOn(ctx, r.UserID, runs)
}

// waitingOn is Request.WaitingOn for user.
func (a *App) waitingOn(ctx context.Context, user string, runs []*pipeline.Run) []blockkit.HomePending {
	var out []blockkit.HomePending
	for _, r := range runs {
		inst := r.Current()
		stranded := inst != nil && r.Stranded == inst.ID
		if r.Status.Final() || inst == nil || !(inst.Open() || stranded) || !a.allowed(r, user) {
			continue
		}
		out = append(out, blockkit.HomePending{Run: r, Inst: inst, Link: a.checkpointLink(ctx, inst.ID)})
	}
	return out
}

// pending lists what waits on the decision of the person who made req (the
// assistant panel's "What is waiting for my decision?"), by the rule their
// Home's list follows (WaitingOn): from their own runs, everyone's for an
// approver.
func (a *App) pending(ctx context.Context, req *Request) ([]blockkit.HomePending, error) {
	f := pipeline.RunFilter{RequestedBy: req.UserID, Limit: pendingMyRuns}
	if a.approvesAnywhere(req.UserID) {
		f = pipeline.RunFilter{Limit: pendingAllRuns}
	}
	runs, err := a.engine.List(ctx, f)
	if err != nil {
		return nil, err
	}
	return a.waitingOn(ctx, req.UserID, runs), nil
}

// PendingDecisions lists what waits on the decision of the person who made
// r, by the App's rule (WaitingOn over their own runs, everyone's for an
// approver): the assistant panel's "What is waiting for my decision?".
func (r *Request) PendingDecisions(ctx context.Context) ([]blockkit.HomePending, error) {
	if r.app == nil {
		return nil, errors.New("bot: pending decisions asked outside an App")
	}
	return r.app.pending(ctx, r)
}

// homeClicked tells the Home of a click served on the clicker's Home tab.
func (a *App) homeClicked(ctx context.Context, req *Request, cb slack.InteractionCallback) {
	if a.cfg.Home != nil && cb.View.Type == slack.VTHomeTab {
		a.cfg.Home.Clicked(ctx, req)
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
