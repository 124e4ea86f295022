package bot

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// MaxQuestionRunes is the longest question /research accepts.
const MaxQuestionRunes = 2000

// CommandKind is what a /research invocation asks for.
type CommandKind string

// The /research subcommands.
const (
	CmdHelp     CommandKind = "help"
	CmdResearch CommandKind = "research"
	CmdStatus   CommandKind = "status"
	CmdList     CommandKind = "list"
	CmdCancel   CommandKind = "cancel"
	CmdStream   CommandKind = "stream"
)

// Command is a parsed /research invocation.
type Command struct {
	Kind     CommandKind
	Question string         // CmdResearch
	Mode     string         // CmdResearch: auto, guided or full
	Depth    pipeline.Depth // CmdResearch
	RunID    string         // CmdStatus, CmdCancel: "" means the caller's latest run
	Args     string         // CmdStream: everything after "stream"
}

// UsageError is a /research invocation that cannot be understood; its
// message is written for the person who typed it.
type UsageError struct {
	Msg string
}

// Error returns the message for the person who typed the command.
func (e *UsageError) Error() string { return e.Msg }

// ParseCommand parses the text after /research:
//
//	[--mode auto|guided|full] [--depth quick|standard|comprehensive] <question>
//	help | status [RUN] | list | cancel [RUN] | stream …
//
// Options may come before or after the question, as "--mode full" or
// "--mode=full"; "--" ends the options, so "/research -- list the risks"
// asks a question that starts with a subcommand word. Empty text is help.
// Characters no one can see (Visible) are dropped first, so the question
// researched is the question shown.
func ParseCommand(text string) (Command, error) {
	text = strings.TrimSpace(Visible(text))
	toks := strings.Fields(text)
	if len(toks) == 0 {
		return Command{Kind: CmdHelp}, nil
	}
	switch first := strings.ToLower(toks[0]); {
	case first == "help" && len(toks) == 1, first == "--help" || first == "-h":
		return Command{Kind: CmdHelp}, nil
	case first == "list" && len(toks) == 1:
		return Command{Kind: CmdList}, nil
	case (first == "status" || first == "cancel") && len(toks) <= 2:
		c := Command{Kind: CommandKind(first)}
		if len(toks) == 2 {
			c.RunID = toks[1]
		}
		return c, nil
	case first == "stream" || first == "streams":
		return Command{Kind: CmdStream, Args: strings.TrimSpace(text[len(toks[0]):])}, nil
	}

	c := Command{Kind: CmdResearch, Mode: checkpoints.ModeGuided, Depth: pipeline.DepthStandard}
	var words []string
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t == "--" {
			words = append(words, toks[i+1:]...)
			break
		}
		if !strings.HasPrefix(t, "--") || len(t) == 2 {
			words = append(words, t)
			continue
		}
		name, val, hasVal := strings.Cut(t[2:], "=")
		name = strings.ToLower(name)
		if name != "mode" && name != "depth" {
			return Command{}, &UsageError{Msg: fmt.Sprintf("I don't know the option `%s`. Options are `--mode auto|guided|full` and `--depth quick|standard|comprehensive`; put `--` before a question that contains one.", Escape(Truncate(t, 40)))}
		}
		if !hasVal {
			if i+1 >= len(toks) {
				return Command{}, &UsageError{Msg: fmt.Sprintf("`--%s` needs a value.", name)}
			}
			i++
			val = toks[i]
		}
		val = strings.ToLower(val)
		switch name {
		case "mode":
			switch val {
			case checkpoints.ModeAuto, checkpoints.ModeGuided, checkpoints.ModeFull:
				c.Mode = val
			default:
				return Command{}, &UsageError{Msg: fmt.Sprintf("`--mode` must be auto, guided or full, not `%s`.", Escape(Truncate(val, 40)))}
			}
		case "depth":
			d, ok := pipeline.ParseDepth(val)
			if !ok || val == "" {
				return Command{}, &UsageError{Msg: fmt.Sprintf("`--depth` must be quick, standard or comprehensive, not `%s`.", Escape(Truncate(val, 40)))}
			}
			c.Depth = d
		}
	}
	c.Question = strings.Join(words, " ")
	if c.Question == "" {
		return Command{}, &UsageError{Msg: "What should I research? Write the question after the options, e.g. `/research --depth quick what changed in EU AI rules this year?`"}
	}
	if utf8.RuneCountInString(c.Question) < pipeline.MinQuestionRunes {
		return Command{}, &UsageError{Msg: fmt.Sprintf("`%s` is too short to research (it needs at least %d characters). Ask a whole question, e.g. `/research How well do heat pumps work in cold climates?`", Escape(c.Question), pipeline.MinQuestionRunes)}
	}
	if n := utf8.RuneCountInString(c.Question); n > MaxQuestionRunes {
		return Command{}, &UsageError{Msg: fmt.Sprintf("Your question is %d characters long; the limit is %d. Please shorten it and try again.", n, MaxQuestionRunes)}
	}
	return c, nil
}
