package blockkit

import (
	"encoding/json"
	"fmt"
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
	StartInput         = "value" // the action id of every input
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
	q := slack.NewPlainTextInputBlockElement(Plain("What should I research?", 150), StartInput)
	q.Multiline = true
	q.MinLength, q.MaxLength = pipeline.MinQuestionRunes, MaxQuestionRunes
	if question = strings.TrimSpace(question); question != "" {
		q.InitialValue = Truncate(question, MaxQuestionRunes)
	}
	blocks = append(blocks, slack.NewInputBlock(startQuestionBlock, Plain("Question", 2000), nil, q))

	modes := []*slack.OptionBlockObject{
		option(checkpoints.ModeGuided, "Guided — I ask you to approve the plan and the draft"),
		option(checkpoints.ModeAuto, "Auto — straight to the report, no questions"),
	}
	mode := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, StartInput, modes...)
	mode.InitialOption = optionOf(modes, s.Mode, 0)
	blocks = append(blocks, slack.NewInputBlock(startModeBlock, Plain("Mode", 2000), nil, mode))

	depths := []*slack.OptionBlockObject{
		option(string(pipeline.DepthQuick), "Quick — a few sources, a short report"),
		option(string(pipeline.DepthStandard), "Standard"),
		option(string(pipeline.DepthComprehensive), "Comprehensive — more searches and sources"),
	}
	depth := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, StartInput, depths...)
	depth.InitialOption = optionOf(depths, string(s.Depth), 1)
	blocks = append(blocks, slack.NewInputBlock(startDepthBlock, Plain("Depth", 2000), nil, depth))

	review := option(reviewSourcesValue, "Let me review the sources before they are read")
	boxes := slack.NewCheckboxGroupsBlockElement(StartInput, review)
	if s.ReviewSources {
		boxes.InitialOptions = []*slack.OptionBlockObject{review}
	}
	in := slack.NewInputBlock(startSourcesBlock, Plain("Sources", 2000), Plain("Needs guided mode.", 2000), boxes)
	in.Optional = true
	blocks = append(blocks, in)

	budget := slack.NewPlainTextInputBlockElement(Plain("e.g. 1.50", 150), StartInput)
	if s.BudgetUSD > 0 {
		budget.InitialValue = strconv.FormatFloat(s.BudgetUSD, 'f', -1, 64)
	}
	bin := slack.NewInputBlock(startBudgetBlock, Plain("Budget (US$)", 2000), Plain(fmt.Sprintf("The most this run may spend, up to $%d. Empty: the usual limit.", MaxStartBudgetUSD), 2000), budget)
	bin.Optional = true
	blocks = append(blocks, bin)

	blocks = append(blocks,
		domainsInput(startOnlyBlock, "Only these sites", "Read sources only from these domains and their subdomains, e.g. example.org, example.net. Empty: any site.", s.Domains.Only),
		domainsInput(startNeverBlock, "Never these sites", "Never read sources from these domains, e.g. spam.example.", s.Domains.Never))

	blocks = append(blocks, startFilesInput())

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

// domainsInput is an optional text input for a comma list of domains.
func domainsInput(block, label, hint string, initial []string) *slack.InputBlock {
	el := slack.NewPlainTextInputBlockElement(Plain("e.g. example.org, example.net", 150), StartInput)
	el.InitialValue = Truncate(strings.Join(initial, ", "), 2900)
	in := slack.NewInputBlock(block, Plain(label, 2000), Plain(hint, 2000), el)
	in.Optional = true
	return in
}

// DomainList splits a comma (or space) separated list of domains.
func DomainList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
}

// option is a static option.
func option(value, label string) *slack.OptionBlockObject {
	return slack.NewOptionBlockObject(value, Plain(label, 75), nil)
}

// optionOf returns the option with value v, or opts[def].
func optionOf(opts []*slack.OptionBlockObject, v string, def int) *slack.OptionBlockObject {
	for _, o := range opts {
		if o.Value == v {
			return o
		}
	}
	return opts[def]
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
// id, ready for a response_action "errors".
func ParseStartForm(privateMetadata string, state map[string]map[string]slack.BlockAction) (StartForm, map[string]string) {
	var meta StartMeta
	_ = json.Unmarshal([]byte(privateMetadata), &meta)
	f := StartForm{Channel: meta.Channel, Thread: meta.Thread, Settings: DefaultStartSettings()}
	errs := map[string]string{}
	get := func(block string) slack.BlockAction { return state[block][StartInput] }
	if f.Channel == "" {
		f.Channel = get(startChannelBlock).SelectedConversation
		if f.Channel == "" {
			errs[startChannelBlock] = "Choose the channel to post the research in."
		}
	}
	f.Question = strings.TrimSpace(Visible(get(startQuestionBlock).Value))
	switch n := utf8.RuneCountInString(f.Question); {
	case n < pipeline.MinQuestionRunes:
		errs[startQuestionBlock] = fmt.Sprintf("Ask a whole question (at least %d characters).", pipeline.MinQuestionRunes)
	case n > MaxQuestionRunes:
		errs[startQuestionBlock] = fmt.Sprintf("The question is %d characters long; the limit is %d.", n, MaxQuestionRunes)
	}
	if m := get(startModeBlock).SelectedOption.Value; m == checkpoints.ModeAuto || m == checkpoints.ModeGuided {
		f.Settings.Mode = m
	}
	if d, ok := pipeline.ParseDepth(get(startDepthBlock).SelectedOption.Value); ok && d != "" {
		f.Settings.Depth = d
	}
	for _, o := range get(startSourcesBlock).SelectedOptions {
		if o.Value == reviewSourcesValue {
			f.Settings.ReviewSources = true
		}
	}
	if f.Settings.ReviewSources && f.Settings.Mode == checkpoints.ModeAuto {
		errs[startSourcesBlock] = "Auto mode never stops to ask you; choose Guided to review the sources, or untick this."
	}
	if b := strings.TrimPrefix(strings.TrimSpace(get(startBudgetBlock).Value), "$"); b != "" {
		v, err := strconv.ParseFloat(b, 64)
		if err != nil || !(v >= 0.01 && v <= MaxStartBudgetUSD) {
			errs[startBudgetBlock] = fmt.Sprintf("Write an amount in US dollars between 0.01 and %d, or leave it empty.", MaxStartBudgetUSD)
		} else {
			f.Settings.BudgetUSD = v
		}
	}
	only, err := pipeline.DomainRules{Only: DomainList(get(startOnlyBlock).Value)}.Normalize()
	if err != nil {
		errs[startOnlyBlock] = Truncate(strings.ReplaceAll(err.Error(), "\n", "; "), 150)
	}
	never, err := pipeline.DomainRules{Never: DomainList(get(startNeverBlock).Value)}.Normalize()
	if err != nil {
		errs[startNeverBlock] = Truncate(strings.ReplaceAll(err.Error(), "\n", "; "), 150)
	}
	f.Settings.Domains = pipeline.DomainRules{Only: only.Only, Never: never.Never}
	if _, err := f.Settings.Domains.Normalize(); err != nil && errs[startOnlyBlock] == "" && errs[startNeverBlock] == "" {
		errs[startNeverBlock] = Truncate(strings.ReplaceAll(err.Error(), "\n", "; "), 150)
	}
	f.Files = get(startFilesBlock).Files
	if len(errs) > 0 {
		return f, errs
	}
	return f, nil
}
