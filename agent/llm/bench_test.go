package llm_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// BenchmarkStream2000Words streams a 2,000-word answer (one word per chunk, as
// providers do) from the loopback fake through the real openai-go client and the
// accumulator. The fake's own cost is included: it runs in the same process.
func BenchmarkStream2000Words(b *testing.B) {
	words := make([]string, 2000)
	for i := range words {
		words[i] = []string{"the", "fetch-api", "node", "calls", "an", "endpoint", "and", "passes", "its", "result"}[i%10]
	}
	text := strings.Join(words, " ")
	srv := llmtest.Start(b)
	srv.SetScript(llmtest.Script{Turns: []llmtest.Turn{{Text: text}}, Loop: true})
	p := newProvider(srv)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		r, err := p.Stream(context.Background(), userAsk, func(d llm.Delta) { n++ })
		if err != nil || len(r.Content) != len(text) || n != 2000 {
			b.Fatalf("err %v, %d bytes, %d deltas", err, len(r.Content), n)
		}
	}
}
