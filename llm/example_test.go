package llm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/researchbot/researchbot/llm"
	"github.com/researchbot/researchbot/llm/llmtest"
)

// Example shows a structured call against the fake server; in production
// BaseURL is OPENAI_BASE_URL and APIKey is OPENAI_API_KEY.
func Example() {
	t := &testing.T{} // only for llmtest's cleanup in this example
	srv := llmtest.NewServer(t, func(c llmtest.Call) llmtest.Reply {
		return llmtest.Reply{
			Content:      `{"questions":["What is GCRA?","Who uses it?"]}`,
			PromptTokens: 1200, CompletionTokens: 80,
		}
	})
	client, err := llm.New(llm.Config{BaseURL: srv.URL(), APIKey: "sk-example"})
	if err != nil {
		panic(err)
	}
	var plan struct {
		Questions []string `json:"questions"`
	}
	usage, err := client.Generate(context.Background(), llm.Request{
		Model:      "gpt-4.1-mini",
		System:     "Break the question into sub-questions.",
		User:       "How does rate limiting with GCRA work?",
		SchemaName: "plan",
	}, &plan)
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Questions)
	fmt.Printf("%d calls, %d+%d tokens, $%.6f\n", usage.Calls, usage.PromptTokens, usage.CompletionTokens, usage.CostUSD)
	// Output:
	// [What is GCRA? Who uses it?]
	// 1 calls, 1200+80 tokens, $0.000608
}
