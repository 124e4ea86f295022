package streams

// The "/research stream …" command: its verbs, the owner-or-admin checks, the
// answers that explain why nothing changed, and the confirmed deletion.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// HandleStream handles "/research stream …". Its answers are shown to the
// caller only (through the command's response_url); what it cannot do is
// returned as a *bot.UserError, which bot.App shows the same way. The
// arguments are unescaped first: Slack sends &, < and > as &amp;, &lt; and
// &gt;, and a stream called "R&D" must be found by its name.
func (s *Feature) HandleStream(ctx context.Context, cmd bot.StreamCommand) error {
	verb, rest, _ := strings.Cut(strings.TrimSpace(blockkit.Unescape(cmd.Args)), " ")
	verb = strings.ToLower(verb)
	name := strings.TrimSpace(rest)
	if needsName(verb) && name == "" {
		return bot.Tell(blockkit.RenderError(fmt.Sprintf("Which stream? Write its name: `/research stream %s NAME`.", blockkit.Escape(verb)), "`/research stream list` shows every stream."), "Which stream?")
	}
	switch verb {
	case "", "help":
		s.respond(ctx, cmd, blockkit.RenderStreamHelp(), "Research streams")
	case "new", "create":
		return s.startConversation(ctx, cmd)
	case "list":
		all, err := s.svc.List(ctx)
		if err != nil {
			return err
		}
		s.respond(ctx, cmd, blockkit.RenderStreamList(all, s.clock.Now()), "Research streams")
	case "show":
		st, err := s.svc.Show(ctx, name)
		if err != nil {
			return bot.Tell(s.lookupProblem(err, name), "No such stream")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamShow(st), "Research stream "+blockkit.EscapeTruncate(st.Spec.Name, 100))
	case "pause", "resume":
		op, done := s.svc.Pause, ":double_vertical_bar: Paused"
		if verb == "resume" {
			op, done = s.svc.Resume, ":arrow_forward: Resumed"
		}
		st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) { return op(ctx, name, cmd.UserID, admin) })
		if err != nil {
			return bot.Tell(s.changeProblem(ctx, err, name, verb), "Nothing was changed")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamChanged(st, done), "Done")
	case "policy":
		fields := strings.Fields(name)
		if len(fields) < 2 {
			return bot.Tell(blockkit.RenderError("Write the stream's name and the policy: `/research stream policy NAME auto|hold_draft`.", "`auto` posts digests straight away; `hold_draft` holds each draft for the owner's approval."), "Which policy?")
		}
		p := scheduler.Policy(strings.ToLower(fields[len(fields)-1]))
		name = strings.Join(fields[:len(fields)-1], " ")
		if !p.Valid() {
			return bot.Tell(blockkit.RenderError("The policy must be `auto` or `hold_draft`, not `"+blockkit.EscapeTruncate(string(p), 40)+"`.", ""), "Unknown policy")
		}
		st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) {
			return s.svc.SetPolicy(ctx, name, cmd.UserID, admin, p)
		})
		if err != nil {
			return bot.Tell(s.changeProblem(ctx, err, name, "change"), "Nothing was changed")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamChanged(st, "Policy set to `"+string(p)+"` for"), "Done")
	case "domains":
		return s.setDomains(ctx, cmd, name)
	case "edit":
		s.startEdit(ctx, cmd.ChannelID, cmd.UserID, name, func(blocks []slack.Block, text string) { s.respond(ctx, cmd, blocks, text) })
	case "run":
		return s.runNow(ctx, cmd, name)
	case "delete", "remove":
		st, err := s.svc.Show(ctx, name)
		if err != nil {
			return bot.Tell(s.lookupProblem(err, name), "No such stream")
		}
		if !st.CanChange(cmd.UserID, false) && !s.isAdmin(ctx, cmd.UserID) {
			return bot.Tell(blockkit.RenderStreamNotAllowed(st, "delete"), "Not allowed")
		}
		s.respond(ctx, cmd, blockkit.RenderStreamDeleteConfirm(st), "Delete this stream?")
	default:
		return bot.Tell(blockkit.RenderError("I don't know `/research stream "+blockkit.EscapeTruncate(verb, 40)+"`.", "`/research stream help` lists the stream commands."), "Unknown stream command")
	}
	return nil
}

// needsName reports whether a stream command takes a stream name.
func needsName(verb string) bool {
	switch verb {
	case "show", "edit", "pause", "resume", "run", "delete", "remove", "policy", "domains":
		return true
	}
	return false
}

// runNow starts a digest of the named stream now, posted to its channel.
func (s *Feature) runNow(ctx context.Context, cmd bot.StreamCommand, name string) error {
	var run *pipeline.Run
	st, err := s.asOwnerOrAdmin(ctx, cmd.UserID, func(admin bool) (*scheduler.Stream, error) {
		var err error
		run, err = s.svc.RunNow(ctx, name, cmd.UserID, admin, scheduler.RunOptions{})
		if err != nil {
			return nil, err
		}
		return s.svc.Show(ctx, name)
	})
	if err != nil {
		return bot.Tell(s.changeProblem(ctx, err, name, "run"), "No digest started")
	}
	s.respond(ctx, cmd, []slack.Block{blockkit.Section(fmt.Sprintf(":gear: Started a digest of *%s* (run %s); I'll post it in %s.",
		blockkit.EscapeTruncate(st.Spec.Name, 100), blockkit.RunRef(run.ID), blockkit.ChannelRef(st.Spec.Channel)))}, "Digest started")
	return nil
}

// asOwnerOrAdmin calls op as a plain user first and, when the service says
// only the owner or an admin may, again as an admin if the user is one.
func (s *Feature) asOwnerOrAdmin(ctx context.Context, user string, op func(admin bool) (*scheduler.Stream, error)) (*scheduler.Stream, error) {
	st, err := op(false)
	if errors.Is(err, scheduler.ErrNotAllowed) && s.isAdmin(ctx, user) {
		return op(true)
	}
	return st, err
}

// isAdmin reports whether user is a workspace admin or owner (users.info).
func (s *Feature) isAdmin(ctx context.Context, user string) bool {
	return bot.IsWorkspaceAdmin(ctx, s.send, s.log, user)
}

// lookupProblem explains a failed stream lookup.
func (s *Feature) lookupProblem(err error, name string) []slack.Block {
	if errors.Is(err, scheduler.ErrStreamNotFound) {
		return blockkit.RenderError("There is no research stream called *"+blockkit.EscapeTruncate(name, 100)+"*.", "`/research stream list` shows every stream.")
	}
	s.log.Error("bot: loading a stream failed", "err", err)
	return blockkit.RenderError("I couldn't load the stream right now.", "Please try again in a minute.")
}

// changeProblem explains why a stream command changed nothing.
func (s *Feature) changeProblem(ctx context.Context, err error, name, verb string) []slack.Block {
	switch {
	case errors.Is(err, scheduler.ErrNotAllowed):
		if st, lerr := s.svc.Show(ctx, name); lerr == nil {
			return blockkit.RenderStreamNotAllowed(st, verb)
		}
		return blockkit.RenderError("Only the stream's owner or a workspace admin can "+blockkit.Escape(verb)+" it.", "Nothing was changed.")
	case errors.Is(err, scheduler.ErrStreamNotFound):
		return s.lookupProblem(err, name)
	case errors.Is(err, scheduler.ErrDigestRunning):
		return blockkit.RenderError("A digest of *"+blockkit.EscapeTruncate(name, 100)+"* is still running.", "It will be posted when it's done; try again after that.")
	case errors.Is(err, scheduler.ErrBadPolicy):
		return blockkit.RenderError("The policy must be `auto` or `hold_draft`.", "")
	}
	s.log.Error("bot: stream command failed", "verb", verb, "err", err)
	return blockkit.RenderError("I couldn't "+blockkit.Escape(verb)+" the stream because of an internal error.", "Please try again in a minute.")
}

// confirmDelete deletes a stream after its owner confirmed. The button names
// the stream by id, so an old confirmation never deletes a newer stream that
// took the same name; a confirmation without an id (from an older version)
// is refused. Its answers replace the (ephemeral) confirmation.
func (s *Feature) confirmDelete(ctx context.Context, req *bot.Request, id, name string) error {
	req.ReplaceOriginal = true
	user := req.UserID
	if id == "" {
		return bot.Tell(blockkit.RenderError("This confirmation is out of date, so nothing was deleted.", "Run `/research stream delete "+blockkit.EscapeTruncate(name, 100)+"` again."), "Not deleted")
	}
	st, err := s.asOwnerOrAdmin(ctx, user, func(admin bool) (*scheduler.Stream, error) { return s.svc.DeleteByID(ctx, id, user, admin) })
	if errors.Is(err, scheduler.ErrStreamNotFound) {
		return bot.Tell(staleStreamButton(name), "Not deleted")
	}
	if err != nil {
		return bot.Tell(s.changeProblem(ctx, err, name, "delete"), "Not deleted")
	}
	s.log.Info("bot: stream deleted", "stream", st.ID, "user", user)
	req.Reply(ctx, blockkit.RenderStreamChanged(st, ":wastebasket: Deleted the research stream"), "Deleted")
	return nil
}

// staleStreamButton answers a click on a button for a stream that no longer
// exists (deleted, perhaps replaced by a new stream of the same name).
func staleStreamButton(name string) []slack.Block {
	return blockkit.RenderError("The stream *"+blockkit.EscapeTruncate(name, 100)+"* this button was for no longer exists, so nothing was changed.",
		"`/research stream list` shows the streams there are now.")
}
