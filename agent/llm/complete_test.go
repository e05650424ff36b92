package llm_test

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/internal/fault"
)

// TestCompleteClassifiesErrors: a non-streamed call fails with the same classified
// errors as a streamed one, for both protocols.
func TestCompleteClassifiesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status int
		code   fault.Code
	}{
		{429, fault.RateLimit},
		{401, fault.Auth},
		{500, fault.ServerError},
	}
	for _, tt := range tests {
		srv := llmtest.Start(t, llmtest.Turn{Status: tt.status}, llmtest.Turn{Status: tt.status})
		providers := map[string]llm.Provider{
			"openai":    llm.NewOpenAI(llm.OpenAIOptions{Endpoint: llm.Endpoint{BaseURL: srv.OpenAIURL(), APIKey: "k", Model: "m"}}),
			"anthropic": llm.NewAnthropic(llm.AnthropicOptions{Endpoint: llm.Endpoint{BaseURL: srv.AnthropicURL(), APIKey: "k", Model: "m"}}),
		}
		for name, p := range providers {
			_, err := p.(llm.Completer).Complete(context.Background(), llm.Request{Messages: []convo.Message{{Role: convo.User, Content: "hi"}}})
			if ce, ok := fault.As(err); !ok || ce.Code != tt.code {
				t.Errorf("%s %d: err = %v, want %s", name, tt.status, err, tt.code)
			}
		}
	}
}
