package blockkit

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// FileProblem is a file shared with the bot that a run does not read, and
// why, in words for people.
type FileProblem struct {
	Name, Why string
}

// SharedFileLine is one shared file for people: "*report.pdf* (PDF, 3
// pages), shared by <@U1>" — the name escaped, the sharer a mention only
// when it is a user id.
func SharedFileLine(f pipeline.File) string {
	line := "*" + EscapeTruncate(OneLine(f.Name), 150) + "*"
	if k := (pipeline.Reference{Kind: f.Kind, Pages: f.PageCount}).KindText(); k != "" {
		line += " (" + k + ")"
	}
	if isUserID(f.SharedBy) {
		line += ", shared by <@" + f.SharedBy + ">"
	}
	return line
}

// RenderFilesAttached tells the thread that files shared there joined the
// run: they are read first; total is how many files the run has now.
func RenderFilesAttached(files []pipeline.File, total int) []slack.Block {
	lines := make([]string, len(files))
	for i, f := range files {
		lines[i] = "• " + SharedFileLine(f)
	}
	head := ":paperclip: Added to this research, read before anything is searched:"
	return []slack.Block{
		Section(CutRunes(head+"\n"+strings.Join(lines, "\n"), MaxSectionText)),
		ContextText(pipeline.FilesAttached(total) + "."),
	}
}

// FilesAttachedText is the notification text of RenderFilesAttached.
func FilesAttachedText(n int) string {
	if n == 1 {
		return "1 file added to the research"
	}
	return fmt.Sprintf("%d files added to the research", n)
}

// RenderFileProblems says which shared files are not read and why, and
// what happens instead (outcome: "The research goes on without them.").
func RenderFileProblems(problems []FileProblem, outcome string) []slack.Block {
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = "• *" + EscapeTruncate(OneLine(p.Name), 150) + "* — " + EscapeTruncate(OneLine(p.Why), 600)
	}
	what := "I couldn't read this file:"
	if len(problems) > 1 {
		what = "I couldn't read these files:"
	}
	return RenderError(what+"\n"+strings.Join(lines, "\n"), Escape(outcome))
}

// FileProblemsText is the notification text of RenderFileProblems.
func FileProblemsText(n int) string {
	if n == 1 {
		return "1 file not read"
	}
	return fmt.Sprintf("%d files not read", n)
}

// ItOrThem is "it" for one thing, "them" for more.
func ItOrThem(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
