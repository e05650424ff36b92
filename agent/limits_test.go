package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// TestRunLimits: a run that hits a limit stops with budget_exceeded naming the config
// key; what arrived is kept (interrupted), no later tool runs and nothing is proposed.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	search := convo.ToolCall{ID: "c1", Name: "search_nodes", Arguments: `{"query":"fetch"}`}
	create := convo.ToolCall{ID: "c2", Name: "propose_create_node", Arguments: `{"key":"x","type":"html","sheet":"0","posX":0,"posY":0,"reason":"r"}`}
	tests := []struct {
		name     string
		limits   config.Limits
		turns    []turn
		key      string
		keptText string // an interrupted assistant message with this text
		toolRuns int    // tool results stored
		requests int    // LLM calls made
	}{
		{name: "answer cut by the provider", turns: []turn{{text: "the start of a very long answer ",
			failAfter: fault.Limit("the model's answer", "max_answer_bytes", 10)}},
			key: "max_answer_bytes", keptText: "the start of a very long answer ", requests: 1},
		{name: "tool result", limits: config.Limits{MaxToolResultBytes: 20},
			turns: []turn{{text: "looking", calls: []convo.ToolCall{search, create}}, {text: "never"}},
			key:   "max_tool_result_bytes", toolRuns: 1, requests: 1},
		{name: "request", limits: config.Limits{MaxRequestBytes: 100},
			turns: []turn{{text: "never"}}, key: "max_request_bytes", requests: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, agent.Options{Limits: tt.limits}, tt.turns...)
			ctx := context.Background()
			var rec recorder
			res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "fetch api"}, rec.emit)
			fe, ok := fault.As(err)
			if !ok || fe.Code != fault.BudgetExceeded || !strings.Contains(fe.Message, tt.key) {
				t.Fatalf("Send = %v, want budget_exceeded naming %s", err, tt.key)
			}
			if res.Proposal != nil {
				t.Error("a proposal was made after the limit")
			}
			if got := len(f.llm.requests()); got != tt.requests {
				t.Errorf("%d LLM calls, want %d", got, tt.requests)
			}
			msgs, err := f.store.Messages(ctx, res.ThreadID)
			if err != nil {
				t.Fatal(err)
			}
			tools, kept := 0, false
			for _, m := range msgs {
				if m.Role == convo.Tool {
					tools++
					if len(m.Content) > 200 {
						t.Errorf("a tool result of %d bytes was stored to send back", len(m.Content))
					}
				}
				if m.Role == convo.Assistant && m.Content == tt.keptText && m.Status == convo.Interrupted {
					kept = true
				}
			}
			if tools != tt.toolRuns {
				t.Errorf("%d tool results stored, want %d", tools, tt.toolRuns)
			}
			if tt.keptText != "" && !kept {
				t.Errorf("the text that arrived was not kept as interrupted: %+v", msgs)
			}
			if p, _ := f.store.PendingProposal(ctx, res.ThreadID); p != nil {
				t.Error("a proposal is pending after the limit")
			}
		})
	}
}
