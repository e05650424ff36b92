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
