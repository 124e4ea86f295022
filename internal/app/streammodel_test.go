package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/researchbot/researchbot/internal/redistest"
	"github.com/researchbot/researchbot/llm/llmtest"
	"github.com/researchbot/researchbot/scheduler"
)

// TestStreamModelProposes checks the adapter end to end against the fake
// OpenAI endpoint: the role's model, the rendered prompt, a strict schema
// named StreamModelSchema, and the decoded proposal.
func TestStreamModelProposes(t *testing.T) {
	srv, _ := redistest.Start(t)
	model := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		return llmtest.JSON(scheduler.Proposal{
			Mode: scheduler.ModeSuggestion, Message: "What type of research is this?", TargetField: scheduler.FieldStreamType,
			ExtractedData: []scheduler.FieldValue{{Field: scheduler.FieldPurpose, Value: "Track heat pumps", Values: []string{}}},
			Suggestions:   []string{"market", "competitive"}, Options: []string{}, NextStep: scheduler.StepStreamType,
		})
	})
	cfg := testConfig(t, srv.URL, model.URL(), "", map[string]string{"LLM_MODEL_STREAMS": "conv-model"})
	a, err := New(context.Background(), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })

	c, _ := scheduler.BeginConversation("U1", "C1", "UTC", time.Now())
	act := scheduler.ConversationAction{Kind: scheduler.ActionTextInput, Text: "I want to track heat pumps"}
	p, err := a.StreamModel().Propose(context.Background(), c, act)
	if err != nil {
		t.Fatal(err)
	}
	if p.NextStep != scheduler.StepStreamType || len(p.ExtractedData) != 1 || p.ExtractedData[0].Value != "Track heat pumps" {
		t.Errorf("proposal = %+v", p)
	}
	calls := model.Calls()
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	call := calls[0]
	wantSys, wantUser := scheduler.RenderPrompt(c, act)
	if call.Model != "conv-model" || call.SchemaName != StreamModelSchema || !call.Strict {
		t.Errorf("call model %q schema %q strict %v", call.Model, call.SchemaName, call.Strict)
	}
	if call.System != wantSys || call.User != wantUser {
		t.Error("the prompt sent is not scheduler.RenderPrompt's")
	}
	if !strings.Contains(string(call.Schema), `"next_step"`) {
		t.Errorf("schema lacks next_step: %s", call.Schema)
	}
	// The decoded proposal goes through the scheduler's validation.
	if _, turn, err := scheduler.Apply(c, act, p); err != nil || turn.Step != scheduler.StepStreamType {
		t.Errorf("Apply = %+v, %v", turn, err)
	}
}
