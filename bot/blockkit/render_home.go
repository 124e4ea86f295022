package blockkit

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
	"github.com/researchbot/researchbot/scheduler"
)

// Action ids of the App Home's admin buttons; the value is a definition id
// ("" for new).
const (
	ActionHomeEnable  = "home_def_enable"
	ActionHomeDisable = "home_def_disable"
	ActionHomeReset   = "home_def_reset"
	ActionHomeEdit    = "home_def_edit"
	ActionHomeCreate  = "home_def_create"
)

// Bounds of the App Home's lists.
const (
	homePendingMax = 10
	homeRunsMax    = 8
	homeStreamsMax = 10
	// MaxViewBlocks bounds the blocks of a modal or the App Home.
	MaxViewBlocks = 100
	// HomeStatsWindow is how far back the admin section counts instances.
	HomeStatsWindow = 7 * 24 * time.Hour
)

// HomeView is everything the App Home shows one person.
type HomeView struct {
	Pending []HomePending
	Runs    []*pipeline.Run // newest first
	Streams []*scheduler.Stream
	// Admin is nil for people who are not admins: they see no admin section.
	Admin *HomeAdmin
	Now   time.Time
}

// HomePending is a checkpoint waiting for this person's decision.
type HomePending struct {
	Run  *pipeline.Run
	Inst *checkpoints.Instance
	Link string // the checkpoint message's permalink, "" when unknown
}

// HomeAdmin is the admin section: every definition and how it fared.
type HomeAdmin struct {
	Definitions []HomeDefinition
	// Runs is how many runs of the window were counted; Truncated says the
	// count stopped at a limit before the window's start.
	Runs      int
	Truncated bool
}

// HomeDefinition is one definition with its breaker and recent instances.
type HomeDefinition struct {
	Def      checkpoints.Definition
	Failures int  // within the breaker window
	Tripped  bool // the breaker is open: runs go on without it
	// Counts are the definition's instances by state over HomeStatsWindow.
	Counts map[checkpoints.State]int
}

// RenderHome renders the App Home tab.
func RenderHome(v HomeView) slack.HomeTabViewRequest {
	blocks := []slack.Block{header("researchbot")}
	blocks = append(blocks, homePending(v.Pending, v.Now)...)
	blocks = append(blocks, slack.NewDividerBlock())
	blocks = append(blocks, homeRuns(v.Runs, v.Now)...)
	blocks = append(blocks, slack.NewDividerBlock())
	blocks = append(blocks, homeStreams(v.Streams)...)
	if v.Admin != nil {
		blocks = append(blocks, slack.NewDividerBlock())
		blocks = append(blocks, homeAdmin(*v.Admin)...)
	}
	blocks = limitBlocks(blocks, MaxViewBlocks, 1, "_…more than the App Home can show._")
	return slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}}
}

// homePending lists the checkpoints waiting for the person, each with the
// buttons of its thread message.
func homePending(pending []HomePending, now time.Time) []slack.Block {
	if len(pending) == 0 {
		return []slack.Block{Section("*Waiting for your decision*\nNothing is waiting for you.")}
	}
	blocks := []slack.Block{Section(fmt.Sprintf("*Waiting for your decision* (%d)", len(pending)))}
	for i, p := range pending {
		if i == homePendingMax {
			blocks = append(blocks, ContextText(fmt.Sprintf("_…and %d more; `/research list` shows your runs._", len(pending)-i)))
			break
		}
		where := "in run " + RunRef(p.Run.ID)
		if p.Link != "" {
			where = fmt.Sprintf("<%s|in its thread>", p.Link)
		} else if p.Run.Origin.Channel != "" {
			where += " in " + ChannelRef(p.Run.Origin.Channel)
		}
		label := EscapeTruncate(OneLine(FirstNonEmpty(p.Inst.Label, p.Inst.DefinitionID)), 100)
		text := fmt.Sprintf("*%s* %s — _%s_", label, where, EscapeTruncate(OneLine(p.Run.Question), 150))
		switch {
		case !p.Inst.RemindersStoppedAt.IsZero():
			text += fmt.Sprintf("\n:no_bell: Reminders stopped after %d; still waiting.", p.Inst.Reminded)
		case !p.Inst.DeadlineAt.IsZero() && (p.Inst.Open() || p.Inst.State == checkpoints.StateTimedOut):
			text += "\n" + DeadlineNote(p.Inst, now)
		}
		if p.Run.LostAt(p.Inst) {
			text += "\n" + HomeLostNote(p.Run)
		}
		if p.Run.Stranded == p.Inst.ID {
			text += fmt.Sprintf("\n:warning: It could not be shown after %d attempts; the run waits. Retry shows it again; only an admin can continue without it.", p.Inst.Attempt)
			blocks = append(blocks, Section(text), strandedButtons(p.Inst, fmt.Sprintf("home_cp_%d", i)))
			continue
		}
		blocks = append(blocks, Section(text))
		if b := checkpointButtons(p.Inst, fmt.Sprintf("home_cp_%d", i)); b != nil {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// homeRuns lists the person's recent runs with status and spend.
func homeRuns(runs []*pipeline.Run, now time.Time) []slack.Block {
	if len(runs) == 0 {
		return []slack.Block{Section("*Your recent runs*\nNone yet. Start one with `/research <question>`.")}
	}
	lines := make([]string, 0, len(runs))
	for _, r := range runs[:min(len(runs), homeRunsMax)] {
		age := "just now"
		if !r.CreatedAt.IsZero() {
			age = Duration(now.Sub(r.CreatedAt)) + " ago"
		}
		lines = append(lines, fmt.Sprintf("%s %s — %s · spend %s · %s", RunRef(r.ID), StatusText(r.ShownStatus()), EscapeTruncate(OneLine(r.Question), 120), money(r.Spend.CostUSD), age))
	}
	return append([]slack.Block{Section("*Your recent runs*")}, packLines("", lines, 4, moreLines)...)
}

func moreLines(left int) string { return fmt.Sprintf("_…and %d more._", left) }

// homeStreams lists the person's research streams.
func homeStreams(streams []*scheduler.Stream) []slack.Block {
	if len(streams) == 0 {
		return []slack.Block{Section("*Your research streams*\nNone. `/research stream new` sets one up.")}
	}
	lines := make([]string, 0, len(streams))
	for _, st := range streams[:min(len(streams), homeStreamsMax)] {
		state := "next digest " + SlackDate(st.NextFire)
		if st.Paused {
			state = "paused"
		} else if st.NextFire.IsZero() {
			state = "no digest scheduled"
		}
		lines = append(lines, fmt.Sprintf("*%s* — %s · %s · %s", EscapeTruncate(st.Spec.Name, 100), Escape(st.Spec.Schedule().Describe()), ChannelRef(st.Spec.Channel), state))
	}
	return append([]slack.Block{Section("*Your research streams*")}, packLines("", lines, 4, moreLines)...)
}

// homeAdmin is the admin section: one section per definition with its
// state and buttons, and a button to create one.
func homeAdmin(a HomeAdmin) []slack.Block {
	create := slack.NewButtonBlockElement(ActionHomeCreate, "new", Plain("New checkpoint", MaxButtonText))
	create.Style = slack.StylePrimary
	blocks := []slack.Block{
		header("Checkpoint definitions (admin)"),
		slack.NewActionBlock("home_admin", create),
	}
	span := "the last 7 days"
	if a.Truncated {
		span = fmt.Sprintf("the latest %d runs", a.Runs)
	}
	for i, d := range a.Definitions {
		blocks = append(blocks, Section(homeDefinitionText(d)))
		blocks = append(blocks, ContextText(homeCounts(d.Counts, span)))
		blocks = append(blocks, homeDefinitionButtons(d, i))
	}
	return append(blocks, ContextText("Built-in checkpoints can be edited and disabled, not deleted. `researchbot checkpoints` does the same from a shell."))
}

// homeDefinitionText describes a definition on a few lines.
func homeDefinitionText(d HomeDefinition) string {
	def := d.Def
	state := ":large_green_circle: enabled"
	if !def.Enabled {
		state = ":white_circle: disabled"
	}
	req := "optional"
	if def.Required {
		req = "required"
	}
	timeout := "no timeout"
	if def.Timeout > 0 {
		timeout = "timeout " + Duration(def.Timeout)
	}
	breaker := "no breaker"
	if def.BreakerThreshold > 0 {
		breaker = fmt.Sprintf("breaker %d/%d failures in %s", d.Failures, def.BreakerThreshold, Duration(def.BreakerWindow))
	}
	if d.Tripped {
		breaker = ":rotating_light: *breaker tripped* — runs go on without it until it is reset"
	}
	kind := "custom"
	if checkpoints.IsBuiltin(def.ID) {
		kind = "built-in"
	}
	return fmt.Sprintf("*%s* `%s` (%s) — %s, %s\n%s · sort order %d · modes %s · %s · retries %d\n%s\n%s",
		EscapeTruncate(def.Label, 100), Escape(def.ID), kind, state, req,
		Escape(string(def.Position)), def.SortOrder, Escape(strings.Join(def.Modes, ", ")), timeout, def.MaxRetries,
		ReminderPolicyText(def), breaker)
}

// ReminderPolicyText says what a definition does when nobody decides: with
// a 1 h timeout and the default policy, "reminders at 1h, 3h, 7h after the
// offer (backing off ×2, at most 1d apart), then the admins are told at 15h;
// then no more".
func ReminderPolicyText(def checkpoints.Definition) string {
	switch {
	case def.Timeout <= 0:
		return "no reminders (no timeout)"
	case !def.Required:
		return "skipped at its timeout (optional)"
	}
	p := def.ReminderPolicy()
	prefix := ""
	if def.OnTimeout == checkpoints.TimeoutApprove {
		prefix = "approves itself at its timeout; if it cannot, "
	}
	sched := p.Schedule(def.Timeout)
	told := map[checkpoints.Escalation]string{
		checkpoints.EscalateAdmins:    "the admins are told",
		checkpoints.EscalateRequester: "the requester is told",
	}[p.Escalate]
	told = cmp.Or(told, "nobody else is told")
	if p.Count == 0 {
		return fmt.Sprintf("%sno reminders: at the timeout %s; the run keeps waiting", prefix, told)
	}
	at := make([]string, len(sched)-1)
	for i, d := range sched[:len(sched)-1] {
		at[i] = Duration(d)
	}
	how := "at a fixed interval"
	if p.Factor > 1 && (p.MaxInterval <= 0 || p.MaxInterval > def.Timeout) {
		how = fmt.Sprintf("backing off ×%d", p.Factor)
		if p.MaxInterval > 0 {
			how += ", at most " + Duration(p.MaxInterval) + " apart"
		}
	}
	return fmt.Sprintf("%s%d reminders at %s after the offer (%s), then %s at %s; then no more, the run keeps waiting",
		prefix, p.Count, strings.Join(at, ", "), how, told, Duration(sched[len(sched)-1]))
}

// homeCounts says how many instances ended in which state.
func homeCounts(counts map[checkpoints.State]int, span string) string {
	var parts []string
	for _, s := range []checkpoints.State{checkpoints.StateOffered, checkpoints.StateActive, checkpoints.StateSubmitted, checkpoints.StateCollapsed, checkpoints.StateSkipped, checkpoints.StateTimedOut, checkpoints.StateFailed, checkpoints.StatePending} {
		if n := counts[s]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, strings.ReplaceAll(string(s), "_", " ")))
		}
	}
	if len(parts) == 0 {
		return "Not offered in " + span + "."
	}
	return "In " + span + ": " + strings.Join(parts, " · ") + "."
}

// homeDefinitionButtons are a definition's admin buttons.
func homeDefinitionButtons(d HomeDefinition, i int) slack.Block {
	id := d.Def.ID
	toggle := slack.NewButtonBlockElement(ActionHomeDisable, id, Plain("Disable", MaxButtonText))
	if !d.Def.Enabled {
		toggle = slack.NewButtonBlockElement(ActionHomeEnable, id, Plain("Enable", MaxButtonText))
	}
	buttons := []slack.BlockElement{slack.NewButtonBlockElement(ActionHomeEdit, id, Plain("Edit", MaxButtonText)), toggle}
	if d.Failures > 0 || d.Tripped {
		reset := slack.NewButtonBlockElement(ActionHomeReset, id, Plain("Reset breaker", MaxButtonText))
		reset.Style = slack.StyleDanger
		buttons = append(buttons, reset)
	}
	return slack.NewActionBlock(fmt.Sprintf("home_def_%d", i), buttons...)
}

// CountInstances counts each definition's instances by state among runs
// created at or after since.
func CountInstances(runs []*pipeline.Run, since time.Time) map[string]map[checkpoints.State]int {
	out := map[string]map[checkpoints.State]int{}
	for _, r := range runs {
		if r.CreatedAt.Before(since) {
			continue
		}
		for _, in := range r.Checkpoints {
			if out[in.DefinitionID] == nil {
				out[in.DefinitionID] = map[checkpoints.State]int{}
			}
			out[in.DefinitionID][in.State]++
		}
	}
	return out
}
