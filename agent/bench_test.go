package agent_test

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm"
)

// instant is a provider that answers at once: what remains is the agent's own cost
// per turn (retrieval, prompt, TOON context, SQLite commits, events).
type instant struct{ calls []convo.ToolCall }

func (instant) Name() string  { return "instant" }
func (instant) Model() string { return "instant" }
func (p instant) Stream(_ context.Context, _ llm.Request, onDelta func(llm.Delta)) (llm.Reply, error) {
	onDelta(llm.Delta{Kind: llm.DeltaText, Text: "fetch-api calls the stats API."})
	return llm.Reply{Content: "fetch-api calls the stats API.", Usage: convo.Usage{PromptTokens: 1500, CompletionTokens: 10}}, nil
}

// BenchmarkTurn measures one question on the demo graph without network: a new thread
// (system prompt) or a follow-up in a thread that grows, cache off.
func BenchmarkTurn(b *testing.B) {
	for _, bc := range []struct {
		name     string
		followUp bool
	}{{"new-thread", false}, {"follow-up", true}} {
		b.Run(bc.name, func(b *testing.B) {
			f := newFixture(b, agent.Options{})
			a := agent.New(agent.Options{Provider: instant{}, Source: f.src, Store: f.store, Retriever: retrieverNoCache(f.src)})
			ctx := context.Background()
			thread := ""
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req := agent.SendRequest{GraphKey: "demo", Text: "what does fetch-api do?"}
				if bc.followUp {
					req.ThreadID = thread
				}
				res, err := a.Send(ctx, req, func(convo.Event) {})
				if err != nil {
					b.Fatal(err)
				}
				thread = res.ThreadID
			}
		})
	}
}
