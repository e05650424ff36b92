package clientaction

import (
	"strings"
	"testing"
)

// BenchmarkSplitterFeed is the per-token cost of reading tags in a streamed answer
// (ask's printer calls Feed once per token): an answer of prose, tags, inline code
// and a fenced block, cut into 4-byte tokens.
func BenchmarkSplitterFeed(b *testing.B) {
	answer := strings.Repeat("The node {{node:fetch_api}} calls the API; `{{node:x}}` is quoted, and {{highlight:a,b}} shows both.\n"+
		"```js\nconst s = '{{node:y}}';\nnext(s);\n```\nThen {{link:https://nodius.example|the docs}}.\n", 20)
	var tokens []string
	for i := 0; i < len(answer); i += 4 {
		tokens = append(tokens, answer[i:min(i+4, len(answer))])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var sp Splitter
		for _, t := range tokens {
			sp.Feed(t)
		}
		sp.Flush()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tokens)), "ns/token")
}
