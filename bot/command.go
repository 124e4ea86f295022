package bot

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/bot/blockkit"
	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

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
	CmdStart    CommandKind = "start" // no text: the start form
)

// Command is a parsed /research invocation.
type Command struct {
	Kind     CommandKind
	Question string         // CmdResearch
	Mode     string         // CmdResearch: auto, guided or full
	Depth    pipeline.Depth // CmdResearch
	// ReviewSources asks for the source review in a guided run (CmdResearch).
	ReviewSources bool
	RunID         string // CmdStatus, CmdCancel: "" means the caller's latest run
	Args          string // CmdStream: everything after "stream"
	// ThreadTS is the thread a research runs in ("" for a new thread under
	// its own root message): the message shortcut's.
	ThreadTS string
	// BudgetUSD is the run's spending limit (0: the configured one).
	BudgetUSD float64
	// FollowUpOf is the follow-up question the research is for (the
	// "Research this" button); never parsed from text.
	FollowUpOf string
	// Domains are the run's domain rules (--only-domain, --never-domain;
	// CmdResearch), normalised.
	Domains pipeline.DomainRules
	// Files are files shared with the request (the start form's, or sent
	// with the question in an assistant thread), read when the run starts;
	// never parsed from text.
	Files []slack.File
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
//	[--mode auto|guided|full] [--depth quick|standard|comprehensive] [--review-sources]
//	[--only-domain D[,D…]]… [--never-domain D[,D…]]… <question>
//	help | status [RUN] | list | cancel [RUN] | stream …
//
// A subcommand is recognised only in its exact form (see subcommand); any
// other text is a question, so "/research stream processing frameworks
// compared" and "/research status of fusion power" are researched.
// Options may come before or after the question, as "--mode full" or
// "--mode=full"; "--" ends the options, and a leading "--" forces a question
// even when the rest is a subcommand's exact form. Empty text opens the
// start form.
// Characters no one can see (Visible) are dropped first, so the question
// researched is the question shown.
func ParseCommand(text string) (Command, error) {
	text = strings.TrimSpace(blockkit.Visible(text))
	toks := strings.Fields(text)
	if len(toks) == 0 {
		return Command{Kind: CmdStart}, nil
	}
	if c, ok := subcommand(text, toks); ok {
		return c, nil
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
		if name == "review-sources" && !hasVal {
			c.ReviewSources = true
			continue
		}
		if name != "mode" && name != "depth" && name != "only-domain" && name != "never-domain" {
			return Command{}, &UsageError{Msg: fmt.Sprintf("I don't know the option `%s`. Options are `--mode auto|guided|full`, `--depth quick|standard|comprehensive`, `--review-sources`, `--only-domain example.org` and `--never-domain example.com`; put `--` before a question that contains one.", blockkit.Escape(blockkit.Truncate(t, 40)))}
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
		case "only-domain":
			c.Domains.Only = append(c.Domains.Only, SplitDomains(val)...)
		case "never-domain":
			c.Domains.Never = append(c.Domains.Never, SplitDomains(val)...)
		case "mode":
			switch val {
			case checkpoints.ModeAuto, checkpoints.ModeGuided, checkpoints.ModeFull:
				c.Mode = val
			default:
				return Command{}, &UsageError{Msg: fmt.Sprintf("`--mode` must be auto, guided or full, not `%s`.", blockkit.Escape(blockkit.Truncate(val, 40)))}
			}
		case "depth":
			d, ok := pipeline.ParseDepth(val)
			if !ok || val == "" {
				return Command{}, &UsageError{Msg: fmt.Sprintf("`--depth` must be quick, standard or comprehensive, not `%s`.", blockkit.Escape(blockkit.Truncate(val, 40)))}
			}
			c.Depth = d
		}
	}
	d, err := c.Domains.Normalize()
	if err != nil {
		return Command{}, &UsageError{Msg: "These domain rules can't be used: " + blockkit.EscapeTruncate(strings.ReplaceAll(err.Error(), "\n", "; "), 800) + "."}
	}
	c.Domains = d
	c.Question = strings.Join(words, " ")
	if c.Question == "" {
		return Command{}, &UsageError{Msg: "What should I research? Write the question after the options, e.g. `/research --depth quick what changed in EU AI rules this year?`"}
	}
	if utf8.RuneCountInString(c.Question) < pipeline.MinQuestionRunes {
		return Command{}, &UsageError{Msg: fmt.Sprintf("`%s` is too short to research (it needs at least %d characters). Ask a whole question, e.g. `/research How well do heat pumps work in cold climates?`", blockkit.Escape(c.Question), pipeline.MinQuestionRunes)}
	}
	if n := utf8.RuneCountInString(c.Question); n > blockkit.MaxQuestionRunes {
		return Command{}, &UsageError{Msg: fmt.Sprintf("Your question is %d characters long; the limit is %d. Please shorten it and try again.", n, blockkit.MaxQuestionRunes)}
	}
	return c, nil
}

// SplitDomains splits an option's comma list of domains (--only-domain,
// --never-domain, in a /research command or a feature's own); a domain
// Slack turned into a link (<http://example.org|example.org>) is unwrapped.
func SplitDomains(val string) []string {
	var out []string
	for w := range strings.SplitSeq(val, ",") {
		w = strings.TrimSpace(w)
		if strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">") {
			w, _, _ = strings.Cut(w[1:len(w)-1], "|")
		}
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// streamVerbs are the "/research stream" verbs and whether each takes a
// stream name. "policy" takes a name and a policy word (see subcommand).
var streamVerbs = map[string]bool{
	"help": false, "new": false, "create": false, "list": false,
	"show": true, "edit": true, "pause": true, "resume": true, "run": true, "delete": true, "remove": true,
}

// subcommand recognises the exact forms of the subcommands:
//
//	help | list | status [RUN] | cancel [RUN]
//	stream | streams | stream help|new|create|list
//	stream show|edit|pause|resume|run|delete|remove [NAME]
//	stream policy [NAME auto|hold_draft]
//	stream domains [NAME --only-domain D --never-domain D | NAME --clear]
//
// where RUN is one word. A bare verb that needs a name is a command (its
// handler asks which stream); anything else is not a subcommand.
func subcommand(text string, toks []string) (Command, bool) {
	first := strings.ToLower(toks[0])
	switch {
	case first == "--help" || first == "-h" || (first == "help" && len(toks) == 1):
		return Command{Kind: CmdHelp}, true
	case first == "list" && len(toks) == 1:
		return Command{Kind: CmdList}, true
	case first == "status" || first == "cancel":
		switch {
		case len(toks) == 1:
			return Command{Kind: CommandKind(first)}, true
		case len(toks) == 2:
			return Command{Kind: CommandKind(first), RunID: toks[1]}, true
		}
	case first == "stream" || first == "streams":
		args := strings.TrimSpace(text[len(toks[0]):])
		if len(toks) == 1 {
			return Command{Kind: CmdStream, Args: args}, true
		}
		verb := strings.ToLower(toks[1])
		if verb == "policy" {
			last := strings.ToLower(toks[len(toks)-1])
			if len(toks) == 2 || (len(toks) >= 4 && (last == "auto" || last == "hold_draft")) {
				return Command{Kind: CmdStream, Args: args}, true
			}
			return Command{}, false
		}
		if verb == "domains" {
			// Only with its options: "stream domains of …" may be a question.
			if len(toks) == 2 || slices.ContainsFunc(toks[2:], func(t string) bool {
				t = strings.ToLower(t)
				return t == "--only-domain" || t == "--never-domain" || t == "--clear"
			}) {
				return Command{Kind: CmdStream, Args: args}, true
			}
			return Command{}, false
		}
		takesName, known := streamVerbs[verb]
		if known && (takesName || len(toks) == 2) {
			return Command{Kind: CmdStream, Args: args}, true
		}
	}
	return Command{}, false
}
