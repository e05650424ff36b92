package file

import (
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
)

// BenchmarkParse10k parses a generated 10,000-node, 20,000-edge graph file (about
// 13 MB), as the first command over a graph does; MB/s says how a 100,000-node file
// of 130 MB fares.
func BenchmarkParse10k(b *testing.B) {
	s := gen.Graph(1, 10_000, 20_000)
	data, err := Encode(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := parse("graph.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncode100k encodes a generated 100,000-node, 200,000-edge graph the way
// the file source saves it after an approval (the whole file is rewritten).
func BenchmarkEncode100k(b *testing.B) {
	s := gen.Graph(1, 100_000, 200_000)
	doc := datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs}
	data, err := Encode(doc)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Encode(doc); err != nil {
			b.Fatal(err)
		}
	}
}
