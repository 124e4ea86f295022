package app

import (
	"context"

	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/scheduler"
)

// StreamModelRole is the model role of the stream creation conversation:
// LLM_MODEL_STREAMS (config.ModelFor("streams")) chooses its model.
const StreamModelRole = "streams"

// StreamModelSchema is the name of the structured output (the JSON schema of
// scheduler.Proposal) the stream creation conversation asks the model for.
const StreamModelSchema = "stream_conversation_turn"

// StreamModel is the language model of the stream creation conversation: a
// scheduler.TurnProposer that renders the prompt with scheduler.RenderPrompt and asks
// the LLM for a scheduler.Proposal as strict structured output. The proposal
// is validated by scheduler.Apply, not here.
type StreamModel struct {
	client *llm.Client
	model  string
}

var _ scheduler.TurnProposer = (*StreamModel)(nil)

// StreamModel returns the stream conversation model, sharing the engine's LLM
// client (its retries, rate limit and cost accounting).
func (a *App) StreamModel() *StreamModel {
	return &StreamModel{client: a.llm, model: a.Config.ModelFor(StreamModelRole)}
}

// Propose asks the model for the next turn of conversation c after action act.
func (m *StreamModel) Propose(ctx context.Context, c scheduler.Conversation, act scheduler.ConversationAction) (scheduler.Proposal, error) {
	system, user := scheduler.RenderPrompt(c, act)
	var p scheduler.Proposal
	_, err := m.client.Generate(ctx, llm.Request{
		Model:      m.model,
		System:     system,
		User:       user,
		SchemaName: StreamModelSchema,
	}, &p)
	if err != nil {
		return scheduler.Proposal{}, err
	}
	return p, nil
}
