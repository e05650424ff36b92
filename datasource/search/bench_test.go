package search

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
)

// benchGraph is a generated 10,000-node, 20,000-edge graph, made once per run.
var benchGraph = sync.OnceValue(func() datasource.Snapshot { return gen.Graph(1, 10_000, 20_000) })

// BenchmarkBuild10k measures indexing a 10,000-node graph. bytes/node is the size
// of the encoded index (what the cache keeps on disk) per node.
func BenchmarkBuild10k(b *testing.B) {
	snap := benchGraph()
	var ix *Index
	for b.Loop() {
		ix = NewGraph(snap)
	}
	b.StopTimer()
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(buf.Len())/float64(ix.Len()), "bytes/node")
}

// readGraph is benchGraph as read from a graph file: its node data holds
// json.Number, not Go numbers, as every file-backed graph's does.
var readGraph = sync.OnceValue(func() datasource.Snapshot {
	s := benchGraph()
	b, err := json.Marshal(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
	if err != nil {
		panic(err)
	}
	var d datasource.Document
	if err := d.UnmarshalJSON(b); err != nil {
		panic(err)
	}
	return d.Snapshot()
})

// BenchmarkBuildRead10k measures indexing a 10,000-node graph read from a file, in
// one pass (one CPU's work), with this build and with the former one (the oracle
// of TestBuildMatchesOracle), so the two are measured side by side.
func BenchmarkBuildRead10k(b *testing.B) {
	s := readGraph()
	b.Run("now", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buildShards(s.Nodes, s.Configs, s.Edges, s.Graph.Sheets, 1)
		}
	})
	b.Run("former", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			oracleBuildShards(s.Nodes, s.Configs, s.Edges, s.Graph.Sheets, 1)
		}
	})
}

// BenchmarkSearch10k measures one query on a 10,000-node graph: prose, a key, and
// code-shaped words.
func BenchmarkSearch10k(b *testing.B) {
	ix := NewGraph(benchGraph())
	queries := []string{
		"fetch orders", "how are invoices validated?", "sort players by points",
		"what runs after fetch-orders-12 when the retry fails", "where is order_id set", "who calls /api/v1/orders",
	}
	i := 0
	for b.Loop() {
		ix.Search(queries[i%len(queries)], 20)
		i++
	}
}
