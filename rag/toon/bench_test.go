package toon

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// retrievalContext is shaped like what rag hands to the prompt: graph metadata, 20
// nodes with ~300 characters of JavaScript each (a table) and 20 edges (a table).
func retrievalContext() Object {
	process := strings.Repeat(`const res = await fetch(url, {method: "GET"}); if (!res.ok) { throw new Error("status " + res.status); } `, 3)[:300]
	types := []string{"api-call", "filter", "transform", "html", "starter"}
	nodes := make([]any, 20)
	for i := range nodes {
		nodes[i] = Object{
			{"_key", fmt.Sprintf("node-%d", i)},
			{"type", types[i%len(types)]},
			{"sheet", json.Number(fmt.Sprint(i % 2))},
			{"process", process},
		}
	}
	edges := make([]any, 20)
	for i := range edges {
		edges[i] = Object{
			{"from", fmt.Sprintf("node-%d", i)},
			{"to", fmt.Sprintf("node-%d", (i+1)%20)},
			{"label", []string{"", "on success", "data"}[i%3]},
		}
	}
	return Object{
		{"graph", Object{{"_key", "demo"}, {"name", "NBA stats"}, {"sheets", Object{{"0", "main"}, {"1", "data-processing"}}}}},
		{"query", "what does fetch-api do?"},
		{"nodes", nodes},
		{"edges", edges},
		{"configs", []any{"api-call", "filter"}},
	}
}

func BenchmarkEncodeRetrievalContext(b *testing.B) {
	ctx := retrievalContext()
	b.SetBytes(int64(len(Encode(ctx, Options{}))))
	b.ReportAllocs()
	for b.Loop() {
		Encode(ctx, Options{})
	}
}

func BenchmarkParseJSON(b *testing.B) {
	data, _ := json.Marshal(map[string]any{"nodes": []map[string]any{{"_key": "a", "type": "t", "process": strings.Repeat("x", 300)}}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

func TestRetrievalContextShape(t *testing.T) {
	t.Parallel()
	out := Encode(retrievalContext(), Options{})
	for _, want := range []string{"nodes[20]{_key,type,sheet,process}:", "edges[20]{from,to,label}:", "  sheets:\n    \"0\": main"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
