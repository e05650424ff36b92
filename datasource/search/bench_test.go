package search

import (
	"bytes"
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
