// Package sharedfiles is files shared in a research's thread, a feature of
// the bot: a file shared with a mention of the bot in the thread of a run
// that has not searched yet (or in its direct-message thread) is read and
// added to the run (pipeline.Engine.AttachFiles), read first; later, or by
// someone who may not decide the run (bot.Request.MayDecide), it is refused
// with the reason. A file that cannot be read is named with why, and the
// run goes on without it. Downloading and reading a file, with the bot
// token and within extract's bounds, is the transport's
// (bot.Request.ReadSharedFiles), as for the files a research starts with.
//
// It plugs into the transport (package bot) as the App's bot.Config.Files
// (a bot.RunMessageHandler, asked first of what is said in a run's thread)
// and renders with bot/blockkit; bot does not import it: the assembly
// (internal/app/roles) builds a Feature and plugs it in.
package sharedfiles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/researchbot/researchbot/bot"
	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/pipeline"
)

// Engine is what the feature needs of the research engine
// (*pipeline.Engine).
type Engine interface {
	Load(ctx context.Context, runID string) (*pipeline.Run, error)
	AttachFiles(ctx context.Context, runID string, files []pipeline.File) (*pipeline.Run, error)
}

// Config configures a Feature. Engine and the Kit's Sender are
// required.
type Config struct {
	Engine Engine
	// Kit is the transport's Sender, metrics, logger and clock.
	bot.Kit
}

// Feature adds the files shared in a run's thread to the run.
type Feature struct {
	engine Engine
	send   *bot.Sender
	log    *slog.Logger
}

// New checks cfg and returns a Feature.
func New(cfg Config) (*Feature, error) {
	if err := cfg.Require("bot: shared files need",
		bot.Need{Name: "an engine", Present: cfg.Engine != nil}); err != nil {
		return nil, err
	}
	kit := cfg.WithDefaults()
	return &Feature{engine: cfg.Engine, send: kit.Sender, log: kit.Logger}, nil
}

// HandleRunMessage takes the files of m, said in run runID's thread: read
// and added to the run when it has not searched yet, refused with the
// reason otherwise. It reports true when m has nothing more to say (no
// text); a mention with text goes on (a steering note or a question), as
// does one without files.
func (f *Feature) HandleRunMessage(ctx context.Context, req *bot.Request, m bot.Mention, runID string) (bool, error) {
	if len(m.Files) == 0 {
		return false, nil
	}
	taken := m.Text == ""
	names := make([]blockkit.FileProblem, len(m.Files))
	for i, sf := range m.Files {
		names[i] = blockkit.FileProblem{Name: bot.FileName(sf)}
	}
	refuse := func(why, outcome string) (bool, error) {
		for i := range names {
			names[i].Why = why
		}
		f.tellProblems(ctx, m.Channel, m.Thread, names, outcome)
		return taken, nil
	}
	r, err := f.engine.Load(ctx, runID)
	if err != nil {
		if errors.Is(err, pipeline.ErrNotFound) {
			return false, nil
		}
		return taken, err
	}
	if !req.MayDecide(r) {
		return refuse("only the person who started this research and the channel's approvers can add files to it", "")
	}
	if !pipeline.FilesOpen(r) {
		return refuse("this research has already searched, so it would not read the file first", "Start a new research with `/research` and share the file there.")
	}
	room, roomBytes := pipeline.FilesRoom(r)
	files, problems := req.ReadSharedFiles(ctx, m.Files, room, roomBytes)
	outcome := "The research goes on without " + blockkit.ItOrThem(len(problems)) + "."
	if len(files) > 0 {
		r, err = f.engine.AttachFiles(ctx, runID, files)
		switch {
		case errors.Is(err, pipeline.ErrRunBusy):
			return refuse("I'm making this research's plan right now", "Share the file again, with a mention, once the plan is shown.")
		case errors.Is(err, pipeline.ErrFilesClosed):
			return refuse("this research has already searched, so it would not read the file first", "Start a new research with `/research` and share the file there.")
		case errors.Is(err, pipeline.ErrTooManyFiles):
			return refuse(fmt.Sprintf("a research reads at most %d files, %d MiB together", pipeline.MaxFiles, pipeline.MaxFilesBytes>>20), "The research goes on with the files it has.")
		case err != nil:
			f.log.Error("bot: adding shared files failed", "run_id", runID, "err", err)
			return refuse("I couldn't add it to the research; nothing was changed", "Please share it again in a minute.")
		}
		if _, err := f.send.Post(ctx, m.Channel, m.Thread, blockkit.RenderFilesAttached(files, len(r.Files)), blockkit.FilesAttachedText(len(files))); err != nil {
			f.log.Warn("bot: confirming shared files failed", "run_id", runID, "err", err)
		}
	}
	f.tellProblems(ctx, m.Channel, m.Thread, problems, outcome)
	return taken, nil
}

// tellProblems posts, in the run's thread, which files were not read (as
// the App does for the files a research starts with).
func (f *Feature) tellProblems(ctx context.Context, channel, thread string, problems []blockkit.FileProblem, outcome string) {
	if len(problems) == 0 {
		return
	}
	if _, err := f.send.Post(ctx, channel, thread, blockkit.RenderFileProblems(problems, outcome), blockkit.FileProblemsText(len(problems))); err != nil {
		f.log.Warn("bot: telling which files were not read failed", "err", err)
	}
}
