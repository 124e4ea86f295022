package blockkit

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

// Callback ids of the start form and the shortcuts that open it (they are
// also in slack-app-manifest.yaml).
const (
	CallbackStart        = "start_research" // the start form (view submission)
	ShortcutStart        = "start_research" // global shortcut "Start research"
	ShortcutResearchThis = "research_this"  // message shortcut "Research this"
)

// Block and action ids of the start form's inputs.
const (
	startChannelBlock  = "start_channel"
	startQuestionBlock = "start_question"
	startModeBlock     = "start_mode"
	startDepthBlock    = "start_depth"
	startSourcesBlock  = "start_sources"
	startBudgetBlock   = "start_budget"
	startOnlyBlock     = "start_only_domains"
	startNeverBlock    = "start_never_domains"
	startFilesBlock    = "start_files"
	reviewSourcesValue = "review_sources"
)

// MaxQuestionRunes is the longest question /research (and the start form)
// accepts.
const MaxQuestionRunes = 2000

// MaxStartBudgetUSD is the largest spending limit the start form accepts.
const MaxStartBudgetUSD = 50

// StartSettings are a run's settings as the start form shows them; a
// channel's last ones are its defaults.
type StartSettings struct {
	Mode          string // auto or guided
	Depth         pipeline.Depth
	ReviewSources bool    // guided plus the source review: full mode
	BudgetUSD     float64 // 0: the configured limit
	// Domains are where the run's sources may come from (normalised).
	Domains pipeline.DomainRules
}

// DefaultStartSettings are the settings of a channel with none remembered.
func DefaultStartSettings() StartSettings {
	return StartSettings{Mode: checkpoints.ModeGuided, Depth: pipeline.DepthStandard}
}

// SettingsOfMode splits a run mode into the form's mode and source review.
func SettingsOfMode(mode string) (string, bool) {
	if mode == checkpoints.ModeFull {
		return checkpoints.ModeGuided, true
	}
	return mode, false
}

// RunMode is the run mode the settings ask for.
func (s StartSettings) RunMode() string {
	if s.ReviewSources {
		return checkpoints.ModeFull
	}
	return s.Mode
}

// StartMeta is the start form's private_metadata: where the run goes when
// the form has no channel picker.
type StartMeta struct {
	Channel string `json:"c,omitempty"`
	Thread  string `json:"t,omitempty"` // the message shortcut's thread
}

// startFields are the start form's inputs that are fields; the channel
// picker and the files are Slack's own elements, with no field type. A mode
// or depth that is not one of the options opens and reads as the default.
func startFields() []checkpoints.Field {
	domains := func(key, label, help string) checkpoints.Field {
		return checkpoints.Field{Key: key, Type: checkpoints.FieldText, Label: label, Help: help, Placeholder: "e.g. example.org, example.net"}
	}
	return []checkpoints.Field{
		{Key: startQuestionBlock, Type: checkpoints.FieldTextarea, Label: "Question", Required: true, Placeholder: "What should I research?", MaxLength: MaxQuestionRunes},
		{Key: startModeBlock, Type: checkpoints.FieldSelect, Label: "Mode", Required: true, Default: checkpoints.ModeGuided, Options: []checkpoints.Option{
			{Value: checkpoints.ModeGuided, Label: "Guided — I ask you to approve the plan and the draft"},
			{Value: checkpoints.ModeAuto, Label: "Auto — straight to the report, no questions"}}},
		{Key: startDepthBlock, Type: checkpoints.FieldSelect, Label: "Depth", Required: true, Default: string(pipeline.DepthStandard), Options: []checkpoints.Option{
			{Value: string(pipeline.DepthQuick), Label: "Quick — a few sources, a short report"},
			{Value: string(pipeline.DepthStandard), Label: "Standard"},
			{Value: string(pipeline.DepthComprehensive), Label: "Comprehensive — more searches and sources"}}},
		{Key: startSourcesBlock, Type: checkpoints.FieldCheckbox, Label: "Sources", Help: "Needs guided mode.",
			Options: []checkpoints.Option{{Value: reviewSourcesValue, Label: "Let me review the sources before they are read"}}},
		{Key: startBudgetBlock, Type: checkpoints.FieldText, Label: "Budget (US$)", Placeholder: "e.g. 1.50",
			Help: fmt.Sprintf("The most this run may spend, up to $%d. Empty: the usual limit.", MaxStartBudgetUSD)},
		domains(startOnlyBlock, "Only these sites", "Read sources only from these domains and their subdomains, e.g. example.org, example.net. Empty: any site."),
		domains(startNeverBlock, "Never these sites", "Never read sources from these domains, e.g. spam.example."),
	}
}

// StartModal renders the start form: the question (pre-filled with
// question), a channel picker when meta names no channel, and the settings
// (pre-set to s).
func StartModal(s StartSettings, question string, meta StartMeta) slack.ModalViewRequest {
	var blocks []slack.Block
	if meta.Thread != "" {
		blocks = append(blocks, ContextText(":thread: The research runs in the thread of the message you chose."))
	}
	if meta.Channel == "" {
		sel := slack.NewOptionsSelectBlockElement(slack.OptTypeConversations, Plain("Choose a channel", 75), StartInput)
		sel.DefaultToCurrentConversation = true
		sel.Filter = &slack.SelectBlockElementFilter{Include: []string{"public", "private"}, ExcludeBotUsers: true}
		in := slack.NewInputBlock(startChannelBlock, Plain("Channel", 2000), Plain("The research thread is posted here; invite me first with /invite @researchbot.", 2000), sel)
		blocks = append(blocks, in)
	}
	fields := startFields()
	var budget string
	if s.BudgetUSD > 0 {
		budget = strconv.FormatFloat(s.BudgetUSD, 'f', -1, 64)
	}
	in := inputs(fields, map[string]any{
		startQuestionBlock: strings.TrimSpace(question),
		startModeBlock:     oneOf(fields[1], s.Mode), startDepthBlock: oneOf(fields[2], string(s.Depth)),
		startSourcesBlock: ticked(s.ReviewSources, reviewSourcesValue), startBudgetBlock: budget,
		startOnlyBlock:  Truncate(strings.Join(s.Domains.Only, ", "), 2900),
		startNeverBlock: Truncate(strings.Join(s.Domains.Never, ", "), 2900),
	})
	// The schema has no shortest text: Slack checks /research's as the person types.
	in[0].(*slack.InputBlock).Element.(*slack.PlainTextInputBlockElement).MinLength = pipeline.MinQuestionRunes
	blocks = append(append(blocks, in...), startFilesInput())

	md, _ := json.Marshal(meta)
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      CallbackStart,
		Title:           Plain("Start research", MaxModalTitle),
		Submit:          Plain("Start", MaxModalTitle),
		Close:           Plain("Cancel", MaxModalTitle),
		PrivateMetadata: string(md),
		Blocks:          slack.Blocks{BlockSet: blocks},
	}
}

// oneOf is v when it is one of f's options, else f's default.
func oneOf(f checkpoints.Field, v string) string {
	if slices.ContainsFunc(f.Options, func(o checkpoints.Option) bool { return o.Value == v }) {
		return v
	}
	s, _ := f.Default.(string)
	return s
}

// DomainList splits a comma (or space) separated list of domains.
func DomainList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

// StartForm is a submitted start form.
type StartForm struct {
	Channel, Thread, Question string
	Settings                  StartSettings
	// Files are the files attached in the form (file_input), as Slack
	// describes them; the bot downloads and reads them after the ack.
	Files []slack.File
}

// ParseStartForm reads a submitted start form; problems are keyed by block
// id, ready for a response_action "errors". Its rules are the run's, not a
// field type's: /research's question bounds, a budget written as text
// ("$2"), domain lists that pipeline.DomainRules normalises, and a source
// review that needs guided mode.
func ParseStartForm(privateMetadata string, state map[string]map[string]slack.BlockAction) (StartForm, map[string]string) {
	var meta StartMeta
	_ = json.Unmarshal([]byte(privateMetadata), &meta)
	f := StartForm{Channel: meta.Channel, Thread: meta.Thread, Settings: DefaultStartSettings()}
	errs := map[string]string{}
	fields := startFields()
	v := formValues(ParseSubmission(fields, state))
	if f.Channel == "" {
		f.Channel = state[startChannelBlock][StartInput].SelectedConversation
		if f.Channel == "" {
			errs[startChannelBlock] = "Choose the channel to post the research in."
		}
	}
	f.Question = v.text(startQuestionBlock)
	switch n := utf8.RuneCountInString(f.Question); {
	case n < pipeline.MinQuestionRunes:
		errs[startQuestionBlock] = fmt.Sprintf("Ask a whole question (at least %d characters).", pipeline.MinQuestionRunes)
	case n > MaxQuestionRunes:
		errs[startQuestionBlock] = fmt.Sprintf("The question is %d characters long; the limit is %d.", n, MaxQuestionRunes)
	}
	f.Settings.Mode, f.Settings.Depth = oneOf(fields[1], v.raw(startModeBlock)), pipeline.Depth(oneOf(fields[2], v.raw(startDepthBlock)))
	f.Settings.ReviewSources = slices.Contains(v.list(startSourcesBlock), reviewSourcesValue)
	if f.Settings.ReviewSources && f.Settings.Mode == checkpoints.ModeAuto {
		errs[startSourcesBlock] = "Auto mode never stops to ask you; choose Guided to review the sources, or untick this."
	}
	if b := strings.TrimPrefix(strings.TrimSpace(v.raw(startBudgetBlock)), "$"); b != "" {
		n, err := strconv.ParseFloat(b, 64)
		if err != nil || !(n >= 0.01 && n <= MaxStartBudgetUSD) {
			errs[startBudgetBlock] = fmt.Sprintf("Write an amount in US dollars between 0.01 and %d, or leave it empty.", MaxStartBudgetUSD)
		} else {
			f.Settings.BudgetUSD = n
		}
	}
	problem := func(err error) string { return Truncate(strings.ReplaceAll(err.Error(), "\n", "; "), 150) }
	only, err := pipeline.DomainRules{Only: DomainList(v.raw(startOnlyBlock))}.Normalize()
	if err != nil {
		errs[startOnlyBlock] = problem(err)
	}
	never, err := pipeline.DomainRules{Never: DomainList(v.raw(startNeverBlock))}.Normalize()
	if err != nil {
		errs[startNeverBlock] = problem(err)
	}
	f.Settings.Domains = pipeline.DomainRules{Only: only.Only, Never: never.Never}
	if _, err := f.Settings.Domains.Normalize(); err != nil && errs[startOnlyBlock] == "" && errs[startNeverBlock] == "" {
		errs[startNeverBlock] = problem(err)
	}
	f.Files = state[startFilesBlock][StartInput].Files
	if len(errs) > 0 {
		return f, errs
	}
	return f, nil
}
