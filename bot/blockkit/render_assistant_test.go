package blockkit

import (
	"slices"
	"strings"
	"testing"

	"github.com/researchbot/researchbot/checkpoints"
	"github.com/researchbot/researchbot/pipeline"
)

func TestGoldenAssistantPanel(t *testing.T) {
	golden(t, "assistant_greeting", msg(RenderAssistantGreeting()))
	golden(t, "assistant_howto", msg(RenderAssistantHowTo()))
	golden(t, "assistant_stream_howto", msg(RenderAssistantStreamHowTo()))
	golden(t, "assistant_prompts", AssistantPrompts())
	hostile := &pipeline.Run{ID: "run-7", Question: "Is <!channel> *really* <https://evil.example|safe>?", Origin: pipeline.Origin{Channel: "C0RESEARCH"}}
	pending := []HomePending{
		{Run: &pipeline.Run{ID: "run-3", Question: "What is RAG?"}, Inst: &checkpoints.Instance{ID: "run-3.cp1", Label: "Research plan"}, Link: "https://fake-team.slack.com/archives/D0REQ0001/p1"},
		{Run: hostile, Inst: &checkpoints.Instance{ID: "run-7.cp2", DefinitionID: "draft_review"}},
	}
	golden(t, "assistant_pending", msg(RenderAssistantPending(pending)))
	golden(t, "assistant_pending_none", msg(RenderAssistantPending(nil)))
}

func TestAssistantPendingNeutralisesQuestions(t *testing.T) {
	run := &pipeline.Run{ID: "run-7", Question: "Ping <!here> and <@U0OTHER01> at <https://evil.example|this>"}
	out := string(rawJSON(RenderAssistantPending([]HomePending{{Run: run, Inst: &checkpoints.Instance{ID: "run-7.cp1", Label: "Research plan"}}})))
	for _, bad := range []string{"<!here>", "<@U0OTHER01>", "<https://evil.example|"} {
		if strings.Contains(out, bad) {
			t.Errorf("pending list shows %q unescaped:\n%s", bad, out)
		}
	}
}

func TestAssistantPromptsWithinSlacksLimit(t *testing.T) {
	ps := AssistantPrompts()
	if len(ps) == 0 || len(ps) > MaxAssistantPrompts {
		t.Fatalf("%d prompts; Slack shows 1 to %d", len(ps), MaxAssistantPrompts)
	}
	for _, p := range ps {
		if AssistantPromptOf("  "+strings.ToUpper(p.Message)+"\n") != p.Message {
			t.Errorf("prompt %q is not recognised when it comes back", p.Message)
		}
	}
	if AssistantPromptOf("Research a question about heat pumps") != "" {
		t.Error("a question that starts like a prompt was taken for the prompt")
	}
}

func TestAssistantTitle(t *testing.T) {
	if got := AssistantTitle("  How do\nheat pumps\u200b work?  "); got != "How do heat pumps work?" {
		t.Errorf("title = %q", got)
	}
	long := strings.Repeat("é", MaxAssistantTitleRunes+20)
	if got := []rune(AssistantTitle(long)); len(got) > MaxAssistantTitleRunes {
		t.Errorf("title has %d runes, want at most %d", len(got), MaxAssistantTitleRunes)
	}
}

func TestAssistantStatusNamesTheStage(t *testing.T) {
	read := &pipeline.Run{Status: pipeline.StatusRunning, Step: pipeline.StepFetch, Sources: make([]pipeline.Source, 1500)}
	for i := range 1200 {
		read.Sources[i].Selected = true
	}
	for _, c := range []struct {
		run     *pipeline.Run
		status  string
		loading []string
	}{
		{&pipeline.Run{Status: pipeline.StatusRunning, Step: pipeline.StepPlan}, "is researching…", []string{"planning…"}},
		{read, "is researching…", []string{"reading 1200 pages…"}},
		{&pipeline.Run{Status: pipeline.StatusRunning, Step: pipeline.StepWrite}, "is researching…", []string{"drafting…"}},
		{&pipeline.Run{Status: pipeline.StatusWaiting, Step: pipeline.StepWrite}, "", nil},
		{&pipeline.Run{Status: pipeline.StatusCompleted, Step: pipeline.StepDone}, "", nil},
	} {
		status, loading := AssistantStatus(c.run)
		if status != c.status || !slices.Equal(loading, c.loading) {
			t.Errorf("%s/%s: %q %q, want %q %q", c.run.Status, c.run.Step, status, loading, c.status, c.loading)
		}
		for _, l := range loading {
			if strings.Contains(l, ",") {
				t.Errorf("loading message %q has a comma (slack-go sends the list comma-separated)", l)
			}
		}
	}
}
