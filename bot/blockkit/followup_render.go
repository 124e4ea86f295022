package blockkit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// ActionResearchFollowUp is the "Research this" button under a follow-up
// the sources did not answer (value: the follow-up id).
const ActionResearchFollowUp = "followup_research"

// maxFollowUpLines bounds the unverified citations and sources an answer lists.
const maxFollowUpLines = 5

// RenderFollowUpPending is the placeholder shown while a follow-up is answered.
func RenderFollowUpPending(user, question string) []slack.Block {
	return []slack.Block{
		Section(Who(user) + " asked:\n>" + EscapeTruncate(OneLine(question), 500)),
		ContextText(":mag: Looking for the answer in this report's sources…"),
	}
}

// RenderFollowUp renders a follow-up and its answer for the run's thread:
// the answer (Markdown as mrkdwn, linking only the report's sources) with
// the sources it cites and how its citations were checked; or, when the
// sources do not answer, what they lack and a "Research this" button (a
// follow-up researched already names its run instead). An answer ends with
// the native 👍 / 👎.
func RenderFollowUp(rep *pipeline.Report, f pipeline.FollowUp) []slack.Block {
	blocks := []slack.Block{Section(Who(f.By) + " asked:\n>" + EscapeTruncate(OneLine(f.Question), 500))}
	links := reportLinks(rep)
	if !f.Answered {
		blocks = append(blocks, Section(":grey_question: *The sources of this report don't answer this.* "+EscapeTruncate(OneLine(f.Missing), 600)))
		if f.Child != "" {
			return append(blocks, ContextText("Being researched as run "+RunRef(f.Child)+", in its own thread."))
		}
		return append(blocks,
			slack.NewActionBlock("followup_actions", &slack.ButtonBlockElement{
				Type: slack.METButton, ActionID: ActionResearchFollowUp, Value: f.ID, Style: slack.StylePrimary,
				Text: Plain(":mag: Research this", MaxButtonText),
			}),
			ContextText("A new run would research the question with this run's question, summary and sources as background. Cost of this answer: "+money(f.CostUSD)+"."))
	}
	blocks = append(blocks, MarkdownBlock(f.Answer, links, MaxMarkdownBlockText, 2800))
	if m := strings.TrimSpace(f.Missing); m != "" {
		blocks = append(blocks, ContextText("Not covered by the sources: "+EscapeTruncate(OneLine(m), 400)))
	}
	var cited []int
	for _, c := range f.Claims {
		if !slices.Contains(cited, c.Ref) {
			cited = append(cited, c.Ref)
		}
	}
	var refs []string
	for _, ref := range rep.References {
		if slices.Contains(cited, ref.N) && len(refs) < maxFollowUpLines {
			refs = append(refs, fmt.Sprintf("[%d] %s", ref.N, mdLink(ref.URL, FirstNonEmpty(ref.Title, ref.URL), 120)))
		}
	}
	if len(refs) > 0 {
		blocks = append(blocks, Section("*Sources*\n"+strings.Join(refs, "\n")))
	}
	t := pipeline.TallyClaims(f.Claims)
	check := fmt.Sprintf(":white_check_mark: %d of %d citations checked against the pages' text", t.Verified, t.Total)
	if t.Unsupported > 0 {
		var lines []string
		for _, c := range pipeline.Unsupported(f.Claims) {
			if len(lines) == maxFollowUpLines {
				break
			}
			lines = append(lines, fmt.Sprintf("• [%d] %s — %s", c.Ref, EscapeTruncate(OneLine(c.Sentence), 200), EscapeTruncate(OneLine(c.Reason), 200)))
		}
		blocks = append(blocks, Section(":warning: *Not verified*\n"+strings.Join(lines, "\n")))
	}
	blocks = append(blocks, ContextText(check+" · cost "+money(f.CostUSD)+" · only this report's sources were used"))
	if id := rep.Metadata.RunID; id != "" && f.ID != "" {
		blocks = append(blocks, feedbackBlock(id, f.ID))
	}
	return blocks
}

// FollowUpText is the notification text of a follow-up answer.
func FollowUpText(f pipeline.FollowUp) string {
	if f.Answered {
		return "Answer from the report's sources"
	}
	return "The report's sources don't answer this"
}

// RenderFollowUpStarted tells the parent's thread that a follow-up is
// researched by a run of its own.
func RenderFollowUpStarted(f pipeline.FollowUp, child, by string) []slack.Block {
	return []slack.Block{Section(":mag: " + Who(by) + " started run " + RunRef(child) + " to research\n>" + EscapeTruncate(OneLine(f.Question), 500) + "\nIts plan and report will be in a new thread in this channel.")}
}

// RenderFollowUpOf tells a follow-up run's thread which run it follows up.
func RenderFollowUpOf(parent *pipeline.Run) []slack.Block {
	return []slack.Block{ContextText(":link: Follow-up of run " + RunRef(parent.ID) + ", which asked: " + EscapeTruncate(OneLine(parent.Question), 300) + ". Its question, report summary and sources are this run's background.")}
}

// renderFollowUps lists a run's follow-ups and its parent for /research status.
func renderFollowUps(r *pipeline.Run) []slack.Block {
	var lines []string
	if r.Parent != "" {
		lines = append(lines, "Follow-up of run "+RunRef(r.Parent)+".")
	}
	if n := len(r.FollowUps); n > 0 {
		answered := 0
		var children []string
		for _, f := range r.FollowUps {
			if f.Answered {
				answered++
			}
			if f.Child != "" {
				children = append(children, RunRef(f.Child))
			}
		}
		line := fmt.Sprintf("%d follow-up questions (%d answered from the sources), costing %s of the run's spend.", n, answered, money(r.FollowUpSpend()))
		if len(children) > 0 {
			line += " Researched further as run " + strings.Join(children, ", ") + "."
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return nil
	}
	return []slack.Block{ContextText(strings.Join(lines, " "))}
}
