package blockkit

import (
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/researchbot/researchbot/pipeline"
)

// The assistant panel (Slack's AI-app split view): what researchbot says
// when a person opens it, the prompts it suggests, the thread's title and
// the status shown while a run works.

// Suggested prompts of the assistant panel: each prompt's title is what the
// person sees, its message what Slack posts for them when they pick it (the
// same words, so the bot recognises them: AssistantPromptOf).
const (
	PromptResearch = "Research a question"
	PromptPending  = "What is waiting for my decision?"
	PromptStream   = "Start a research stream"
)

// AssistantPrompt is one suggested prompt (assistant.threads.setSuggestedPrompts).
type AssistantPrompt struct{ Title, Message string }

// MaxAssistantPrompts is how many suggested prompts Slack shows ("up to
// four", assistant.threads.setSuggestedPrompts).
const MaxAssistantPrompts = 4

// MaxAssistantTitleRunes bounds the thread title made from a question
// (Slack documents no limit; a title is a line in the history list).
const MaxAssistantTitleRunes = 80

// AssistantPromptsTitle heads the suggested prompts.
const AssistantPromptsTitle = "Try one of these"

// AssistantPrompts are the suggested prompts of a new assistant thread.
func AssistantPrompts() []AssistantPrompt {
	return []AssistantPrompt{
		{Title: PromptResearch, Message: PromptResearch},
		{Title: PromptPending, Message: PromptPending},
		{Title: PromptStream, Message: PromptStream},
	}
}

// AssistantPromptOf returns the suggested prompt a message is (its
// message, compared without case or surrounding space), or "".
func AssistantPromptOf(text string) string {
	for _, p := range AssistantPrompts() {
		if strings.EqualFold(strings.TrimSpace(text), p.Message) {
			return p.Message
		}
	}
	return ""
}

// RenderAssistantGreeting is the first message of an assistant thread.
func RenderAssistantGreeting() []slack.Block {
	return []slack.Block{Section("Hi! I research questions for you: I propose a plan for you to approve, search and read the web, and write a report with every claim cited.\nType a question here, or pick a suggestion below.")}
}

// AssistantGreetingText is the notification text of the greeting.
const AssistantGreetingText = "Hi! Type a question to research."

// RenderAssistantHowTo answers the "Research a question" prompt.
func RenderAssistantHowTo() []slack.Block {
	return []slack.Block{Section("Type your question in this thread, e.g. _How do heat pumps perform in cold climates?_\nI'll answer with a research plan; approve it (or edit it) and I'll work on it here, then post the report in this thread. Start with `--depth quick` or `--depth comprehensive` to choose how deep I go, or `--mode auto` to skip the checkpoints.")}
}

// RenderAssistantStreamHowTo answers the "Start a research stream" prompt.
func RenderAssistantStreamHowTo() []slack.Block {
	return []slack.Block{Section("A research stream watches a topic for a channel and posts a digest of what is new on a schedule.\nIn the channel that should get the digests, type `/research stream new`: I'll ask what to watch (purpose, focus, keywords, how often) in a thread there.")}
}

// RenderAssistantPending answers the "What is waiting for my decision?"
// prompt: the checkpoints waiting for the person, each with a link to its
// message (decided there, with its buttons).
func RenderAssistantPending(pending []HomePending) []slack.Block {
	if len(pending) == 0 {
		return []slack.Block{Section("Nothing is waiting for your decision.")}
	}
	lines := make([]string, 0, len(pending))
	for _, p := range pending {
		where := "run " + RunRef(p.Run.ID)
		if p.Link != "" {
			where = fmt.Sprintf("<%s|open it>", p.Link)
		} else if p.Run.Origin.Channel != "" {
			where += " in " + ChannelRef(p.Run.Origin.Channel)
		}
		label := EscapeTruncate(OneLine(FirstNonEmpty(p.Inst.Label, p.Inst.DefinitionID)), 100)
		lines = append(lines, fmt.Sprintf("• *%s* — _%s_ (%s)", label, EscapeTruncate(OneLine(p.Run.Question), 150), where))
	}
	return packLines(fmt.Sprintf("*Waiting for your decision* (%d)\n", len(pending)), lines, 10, moreLines)
}

// AssistantTitle is an assistant thread's title for a question: one line,
// at most MaxAssistantTitleRunes. Slack shows titles as plain text.
func AssistantTitle(question string) string {
	return CutRunes(OneLine(Visible(question)), MaxAssistantTitleRunes)
}

// AssistantStatus is what the assistant panel shows while r works: a
// status ("is researching…") and the loading messages Slack rotates
// through, naming the current stage. waiting is the status of a run at a
// checkpoint, which shows none ("").
func AssistantStatus(r *pipeline.Run) (status string, loading []string) {
	if r.Status.Final() || r.Status == pipeline.StatusWaiting {
		return "", nil
	}
	stage := "working"
	switch r.Step {
	case pipeline.StepPlan, "":
		stage = "planning"
	case pipeline.StepSearch:
		stage = "searching the web"
	case pipeline.StepRank:
		stage = "choosing sources"
	case pipeline.StepFetch:
		n := 0
		for _, s := range r.Sources {
			if s.Selected {
				n++
			}
		}
		stage = "reading pages"
		if n > 0 {
			stage = fmt.Sprintf("reading %d pages", n) // no separator: slack-go sends the list comma-separated
		}
	case pipeline.StepAnalyze:
		stage = "analysing what the pages say"
	case pipeline.StepWrite, pipeline.StepFallback:
		stage = "drafting"
	case pipeline.StepReview:
		stage = "reviewing the draft"
	case pipeline.StepOutput:
		stage = "publishing the report"
	}
	return "is researching…", []string{stage + "…"}
}
