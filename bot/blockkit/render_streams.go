package blockkit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/scheduler"
)

// StreamActionPrefix starts the action_id of every button and checkbox on a
// research stream message; the router hands those to the stream handler.
const StreamActionPrefix = "st_"

// Action ids of the stream messages. A suggestion button's action_id is
// ActionStreamPick followed by its index; its value is the suggestion itself.
// The values of a conversation turn's buttons start with the turn's number
// and "|", and those of the dry-run and delete buttons with the stream's id
// and "|", so a click on an old message is recognised and refused.
const (
	ActionStreamPick          = "st_pick_"
	ActionStreamOptions       = "st_options"  // the checkboxes (toggling them is ignored)
	ActionStreamContinue      = "st_continue" // submits the ticked checkboxes
	ActionStreamSkip          = "st_skip"
	ActionStreamConfirm       = "st_confirm"
	ActionStreamChange        = "st_change"
	ActionStreamDryRun        = "st_dryrun"
	ActionStreamDryRunSkip    = "st_dryrun_skip"
	ActionStreamDeleteConfirm = "st_delete_confirm"
	ActionStreamDeleteAbort   = "st_delete_abort"
	ActionStreamEdit          = "st_edit" // on stream show: reopens the review with the current values
	// ActionStreamFieldEdit, followed by the field, is the Edit button
	// beside a field of the review; its value is the turn's number, "|",
	// the field.
	ActionStreamFieldEdit = "st_field_"
)

// turnValue is the value of a button of turn t: its number, "|", v. A turn
// without a number (0) gives v alone.
func turnValue(t scheduler.Turn, v string) string {
	if t.Number <= 0 {
		return v
	}
	return strconv.Itoa(t.Number) + "|" + v
}

// ParseTurnValue splits a turn button's value into the turn's number and the
// value; a value without a number (an older message) gives 0 and itself.
func ParseTurnValue(s string) (int, string) {
	tag, v, ok := strings.Cut(s, "|")
	if !ok {
		return 0, s
	}
	n, err := strconv.Atoi(tag)
	if err != nil || n <= 0 || tag != strconv.Itoa(n) {
		return 0, s
	}
	return n, v
}

// streamValue is the value of a button about stream st: its id, "|", its name.
func streamValue(st *scheduler.Stream) string {
	return Truncate(st.ID+"|"+st.Spec.Name, MaxButtonValue)
}

// ParseStreamValue splits a value made by streamValue; an older value (the
// name alone) gives an empty id.
func ParseStreamValue(s string) (id, name string) {
	id, name, ok := strings.Cut(s, "|")
	if !ok || id == "" || strings.ContainsAny(id, " \t") {
		return "", s
	}
	return id, name
}

// StreamOptionsBlock is the block_id of the checkboxes, where a Continue
// click finds their state.
const StreamOptionsBlock = "st_opts"

// maxShownDigests bounds the digests listed by stream show.
const maxShownDigests = 10

// RenderStreamRoot renders the message that opens a stream creation thread.
func RenderStreamRoot(owner string) []slack.Block {
	return []slack.Block{
		Section(fmt.Sprintf(":satellite_antenna: *New research stream* — set up by %s", Who(owner))),
		ContextText("I'll ask a few questions in this thread: what to watch, why, and how often. Answer with the buttons, or type an answer by mentioning @researchbot in this thread."),
	}
}

// RenderStreamTurn renders one turn of the creation conversation: the bot's
// message (escaped), the review table at the review step, and the controls
// the turn offers — suggestion buttons, checkboxes with Continue, Skip, or
// Confirm and Change. owner is the only person who may answer.
func RenderStreamTurn(t scheduler.Turn, owner string) []slack.Block {
	blocks := []slack.Block{Section(EscapeTruncate(t.Message, SectionBudget))}
	if t.Step == scheduler.StepReview && len(t.Review) > 0 {
		blocks = append(blocks, reviewEditBlocks(t)...)
	}
	var buttons []slack.BlockElement
	switch {
	case t.Step == scheduler.StepReview:
		buttons = append(buttons,
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamConfirm, Value: turnValue(t, scheduler.ReviewConfirm), Text: Plain("Confirm", MaxButtonText), Style: slack.StylePrimary},
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamChange, Value: turnValue(t, scheduler.ReviewChange), Text: Plain("Change", MaxButtonText)},
		)
	default:
		for i, s := range t.Suggestions {
			if i == scheduler.MaxChoices {
				break
			}
			buttons = append(buttons, &slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamPick + strconv.Itoa(i), Value: turnValue(t, s), Text: Plain(s, MaxButtonText)})
		}
	}
	if len(t.Options) > 0 && t.Step != scheduler.StepReview {
		var opts []*slack.OptionBlockObject
		for i, o := range t.Options {
			if i == MaxChoiceOptions {
				break
			}
			opts = append(opts, slack.NewOptionBlockObject(Truncate(o, MaxOptionValue), Plain(o, MaxOptionText), nil))
		}
		blocks = append(blocks,
			slack.NewActionBlock(StreamOptionsBlock, slack.NewCheckboxGroupsBlockElement(ActionStreamOptions, opts...)),
		)
		buttons = append([]slack.BlockElement{&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamContinue, Value: turnValue(t, "continue"), Text: Plain("Continue with the ticked ones", MaxButtonText), Style: slack.StylePrimary}}, buttons...)
	}
	if t.Skippable && t.Step != scheduler.StepReview {
		buttons = append(buttons, &slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamSkip, Value: turnValue(t, "skip"), Text: Plain("Skip", MaxButtonText)})
	}
	if len(buttons) > 0 {
		blocks = append(blocks, slack.NewActionBlock("st_buttons", buttons...))
	}
	hint := "Only " + Who(owner) + " can answer. To type your own answer, or to change anything said so far, mention @researchbot in this thread (\"@researchbot change the purpose to …\")."
	if t.Step == scheduler.StepReview {
		hint = "Only " + Who(owner) + " can confirm. *Edit* beside a field changes just that one; *Change* (or mentioning @researchbot in this thread with what to change) lets you talk anything over first."
	}
	return append(blocks, ContextText(hint))
}

// reviewBlocks renders the configuration at the review step.
func reviewBlocks(lines []scheduler.ReviewLine) []slack.Block {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		v := EscapeTruncate(OneLine(l.Value), 600)
		if l.Field == scheduler.FieldChannel && isChannelID(l.Value) {
			v = ChannelRef(l.Value)
		}
		out = append(out, fmt.Sprintf("*%s:* %s", Escape(l.Label), v))
	}
	return packLines("", out, 4, func(left int) string { return fmt.Sprintf("_…and %d more._", left) })
}

// reviewEditBlocks renders the configuration of a review turn, one section
// per field with an Edit button beside it (seed 003: inline edit); the
// schedule, which no field holds alone, has none.
func reviewEditBlocks(t scheduler.Turn) []slack.Block {
	out := make([]slack.Block, 0, len(t.Review))
	for _, l := range t.Review {
		v := EscapeTruncate(OneLine(l.Value), 600)
		if l.Field == scheduler.FieldChannel && isChannelID(l.Value) {
			v = ChannelRef(l.Value)
		}
		var edit *slack.Accessory
		if l.Field != "" {
			edit = slack.NewAccessory(&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamFieldEdit + string(l.Field),
				Value: turnValue(t, string(l.Field)), Text: Plain("Edit", MaxButtonText)})
		}
		sec := Section(fmt.Sprintf("*%s:* %s", Escape(l.Label), v))
		sec.Accessory = edit
		out = append(out, sec)
	}
	return out
}

// StreamTurnText is the notification text of a turn.
func StreamTurnText(t scheduler.Turn) string {
	return EscapeTruncate(OneLine(t.Message), 300)
}

// RenderStreamAnswered is a turn message after its buttons were used: the
// blocks without their controls, and a line saying who chose what.
func RenderStreamAnswered(blocks []slack.Block, fallback, user, what string) []slack.Block {
	var out []slack.Block
	for _, b := range blocks {
		if b.BlockType() == slack.MBTAction || b.BlockType() == slack.MBTContext {
			continue
		}
		if sec, ok := b.(*slack.SectionBlock); ok && sec.Accessory != nil {
			bare := *sec // a review line: its Edit button goes
			bare.Accessory = nil
			b = &bare
		}
		out = append(out, b)
	}
	if len(out) == 0 && fallback != "" {
		out = append(out, Section(CutRunes(fallback, SectionBudget)))
	}
	return append(out, ContextText(":white_check_mark: "+Who(user)+" "+what))
}

// RenderStreamCreated announces a new stream and offers a dry run: a first
// digest now, in the creation thread, before the schedule starts.
func RenderStreamCreated(st *scheduler.Stream) []slack.Block {
	name := EscapeTruncate(st.Spec.Name, scheduler.MaxNameLen+20)
	text := fmt.Sprintf(":white_check_mark: *%s* is set up. I'll post a digest of what's new in %s %s; the first one is due %s.",
		name, ChannelRef(st.Spec.Channel), Escape(st.Spec.Schedule().Describe()), SlackDate(st.NextFire))
	return []slack.Block{
		Section(text),
		Section("Would you like a *dry run* now? I'll research it once and post the digest in this thread, so you can see what to expect. It doesn't count as a digest."),
		slack.NewActionBlock("st_dryrun_buttons",
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamDryRun, Value: streamValue(st), Text: Plain("Dry run now", MaxButtonText), Style: slack.StylePrimary},
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamDryRunSkip, Value: streamValue(st), Text: Plain("No, thanks", MaxButtonText)},
		),
		ContextText("Manage it with `/research stream show|edit|pause|resume|run|delete " + name + "`."),
	}
}

// ChannelRef renders a channel id as a channel link, or a placeholder.
func ChannelRef(id string) string {
	if id == "" {
		return "(no channel)"
	}
	if isChannelID(id) {
		return "<#" + id + ">"
	}
	return "`" + EscapeTruncate(id, 40) + "`"
}

// isChannelID reports whether s looks like a Slack conversation id.
func isChannelID(s string) bool {
	if len(s) < 3 || len(s) > 22 || !strings.ContainsRune("CGD", rune(s[0])) {
		return false
	}
	for _, r := range s[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// RenderStreamHelp explains the stream commands.
func RenderStreamHelp() []slack.Block {
	return []slack.Block{
		Section("*Research streams* — I watch a topic and post a digest of what's new on a schedule.\n" +
			"• `/research stream new` — set one up, in a conversation in a thread\n" +
			"• `/research stream list` — every stream\n" +
			"• `/research stream show NAME` — its configuration, schedule, next digest and past digests\n" +
			"• `/research stream edit NAME` — change its settings: the review opens with the current values; past digests are kept\n" +
			"• `/research stream pause NAME` / `resume NAME` — stop and restart its digests\n" +
			"• `/research stream run NAME` — a digest now, in its channel\n" +
			"• `/research stream policy NAME auto|hold_draft` — post digests straight away, or hold each draft for your approval\n" +
			"• `/research stream domains NAME --only-domain example.org --never-domain spam.example` (or `--clear`) — where its digests may read\n" +
			"• `/research stream delete NAME` — remove it (asks to confirm)"),
		ContextText("Only a stream's owner or a workspace admin can change it."),
	}
}

// RenderStreamList lists the streams.
func RenderStreamList(streams []*scheduler.Stream, now time.Time) []slack.Block {
	if len(streams) == 0 {
		return []slack.Block{Section("There are no research streams yet. Set one up with `/research stream new`.")}
	}
	lines := make([]string, 0, len(streams))
	for _, st := range streams {
		state := "next digest " + SlackDate(st.NextFire)
		if st.Paused {
			state = ":double_vertical_bar: paused"
		} else if st.NextFire.IsZero() {
			state = "no digest scheduled"
		}
		lines = append(lines, fmt.Sprintf("*%s* — %s · %s · %s · %s · by %s", EscapeTruncate(st.Spec.Name, 100), Escape(string(st.Spec.Type)),
			Escape(st.Spec.Schedule().Describe()), ChannelRef(st.Spec.Channel), state, Who(st.Owner)))
	}
	blocks := []slack.Block{Section(fmt.Sprintf("*Research streams* (%d)", len(streams)))}
	blocks = append(blocks, packLines("", lines, 20, func(left int) string { return fmt.Sprintf("_…and %d more._", left) })...)
	return append(blocks, ContextText("`/research stream show NAME` shows one stream and its digests."))
}

// RenderStreamShow shows one stream: its configuration, schedule, next
// digest, policy and past digests (newest first).
func RenderStreamShow(st *scheduler.Stream) []slack.Block {
	blocks := []slack.Block{header("Research stream: " + st.Spec.Name)}
	blocks = append(blocks, reviewBlocks(st.Spec.ReviewLines())...)
	blocks = append(blocks, slack.NewActionBlock("st_show_actions", &slack.ButtonBlockElement{
		Type: slack.METButton, ActionID: ActionStreamEdit, Value: streamValue(st), Text: Plain(":pencil2: Edit", MaxButtonText),
	}))
	state := ":large_green_circle: active · next digest " + SlackDate(st.NextFire)
	switch {
	case st.Paused:
		state = ":double_vertical_bar: paused (`/research stream resume` restarts it)"
	case st.NextFire.IsZero():
		state = "no digest scheduled"
	}
	policy := "digests are posted straight away (auto)"
	if st.Policy == scheduler.PolicyHoldDraft {
		policy = "each draft is held for the owner's approval (hold_draft)"
	}
	sites := "any (`/research stream domains " + EscapeTruncate(OneLine(st.Spec.Name), 80) + " --only-domain … --never-domain …` limits them)"
	if !st.Domains.Empty() {
		sites = EscapeTruncate(OneLine(st.Domains.String()), 1200)
	}
	blocks = append(blocks, Section(fmt.Sprintf("*Status:* %s\n*Policy:* %s\n*Sources:* %s\n*Owner:* %s · created %s", state, policy, sites, Who(st.Owner), SlackDate(st.CreatedAt))))
	if st.Running != "" {
		blocks = append(blocks, ContextText(":gear: A digest is running now."))
	}
	var lines []string
	for i := len(st.Digests) - 1; i >= 0 && len(lines) < maxShownDigests; i-- {
		lines = append(lines, digestLine(st.Digests[i]))
	}
	if len(lines) == 0 {
		return append(blocks, ContextText("No digests yet."))
	}
	return append(blocks, packLines("*Past digests* (newest first)", lines, 3, func(left int) string { return fmt.Sprintf("_…and %d older._", left) })...)
}

// digestLine describes one digest record.
func digestLine(d scheduler.DigestRecord) string {
	trigger := map[scheduler.Trigger]string{scheduler.TriggerSchedule: "scheduled", scheduler.TriggerRunNow: "run now", scheduler.TriggerDryRun: "dry run"}[d.Trigger]
	if trigger == "" {
		trigger = Escape(string(d.Trigger))
	}
	status := Escape(string(d.Status))
	switch d.Status {
	case scheduler.DigestCompleted, scheduler.DigestPartial:
		status = fmt.Sprintf("%s, %d new items", status, d.NewItems)
		if d.NothingNew {
			status = string(d.Status) + ", nothing new"
		}
	case scheduler.DigestSkipped:
		status = "skipped: " + EscapeTruncate(d.Skipped, 200)
	}
	line := fmt.Sprintf("• %s · %s · %s", SlackDate(d.FireAt), trigger, status)
	if d.RunID != "" {
		line += " · run " + RunRef(d.RunID)
	}
	if d.Note != "" && d.Status != scheduler.DigestSkipped {
		line += " — " + EscapeTruncate(OneLine(d.Note), 200)
	}
	return line
}

// RenderStreamEditRoot is the root message of a stream's edit thread, which
// user opened.
func RenderStreamEditRoot(st *scheduler.Stream, user string) []slack.Block {
	return []slack.Block{
		Section(":pencil2: " + Who(user) + " is editing the research stream *" + EscapeTruncate(st.Spec.Name, 100) + "*."),
		ContextText("Its current settings are below. Choose *Change* and say what to change (mention @researchbot in this thread), then *Confirm*: the changes are saved together, a new schedule applies from its next time, and past digests are kept."),
	}
}

// RenderStreamDeleteConfirm asks to confirm deleting a stream.
func RenderStreamDeleteConfirm(st *scheduler.Stream) []slack.Block {
	name := EscapeTruncate(st.Spec.Name, 100)
	return []slack.Block{
		Section(fmt.Sprintf("Delete the research stream *%s*? Its schedule stops and its history is removed. Digests already posted stay in %s.", name, ChannelRef(st.Spec.Channel))),
		slack.NewActionBlock("st_delete_buttons",
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamDeleteConfirm, Value: streamValue(st), Text: Plain("Yes, delete it", MaxButtonText), Style: slack.StyleDanger},
			&slack.ButtonBlockElement{Type: slack.METButton, ActionID: ActionStreamDeleteAbort, Value: streamValue(st), Text: Plain("Keep it", MaxButtonText)},
		),
	}
}

// RenderStreamChanged confirms a change to a stream in one line.
func RenderStreamChanged(st *scheduler.Stream, what string) []slack.Block {
	return []slack.Block{Section(fmt.Sprintf("%s *%s*.", what, EscapeTruncate(st.Spec.Name, 100)))}
}

// RenderStreamNotAllowed explains that only the owner or an admin may change a stream.
func RenderStreamNotAllowed(st *scheduler.Stream, verb string) []slack.Block {
	return RenderError(fmt.Sprintf("Only %s, who owns the stream *%s*, or a workspace admin can %s it.", Who(st.Owner), EscapeTruncate(st.Spec.Name, 100), verb), "Nothing was changed.")
}
