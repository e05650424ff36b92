package rag

import (
	"context"
	"runtime"
	"testing"

	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/datasource/search"
)

var benchQueries = []string{
	"Que fait le node fetch-api ?",
	"which node handles errors?",
	"sort players by points",
	"Comment les statistiques sont-elles triées ?",
	"render the HTML table",
}

// BenchmarkRetrieveDemo is one question on the demo graph with the context cache
// off: the snapshot and its index are reused, everything else runs.
func BenchmarkRetrieveDemo(b *testing.B) {
	r := New(newFakeSource(demoSnapshot(b)), Options{}, nil)
	ctx := context.Background()
	if _, err := r.Retrieve(ctx, "demo", "warm up"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Retrieve(ctx, "demo", benchQueries[i%len(benchQueries)]); err != nil {
			b.Fatal(err)
		}
	}
}

// The large graph of the benchmarks: datasource/gen's generator, seed 1.
const (
	bigNodes, bigEdges = 100_000, 200_000
	bigKey             = "gen-1"
)

// BenchmarkIndexBuild100k builds the search index of a 100k-node graph and reports
// the heap the index holds (MB) after a GC.
func BenchmarkIndexBuild100k(b *testing.B) {
	snap := gen.Graph(1, bigNodes, bigEdges)
	b.ResetTimer()
	var heldMB float64
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ix := search.New(snap.Nodes, snap.Configs)
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heldMB = float64(after.HeapInuse-before.HeapInuse) / (1 << 20)
		runtime.KeepAlive(ix)
		b.StartTimer()
	}
	b.ReportMetric(heldMB, "index-MB")
}

// BenchmarkSearch100k is one ranked query over a 100k-node index: typical
// questions, and a worst case made of words found in nearly every node (every
// posting list walked in full).
func BenchmarkSearch100k(b *testing.B) {
	snap := gen.Graph(1, bigNodes, bigEdges)
	ix := search.New(snap.Nodes, snap.Configs)
	worst := []string{"const await incoming data next result orders users players stats fetch filter sort map reduce custom step works"}
	for _, bc := range []struct {
		name    string
		queries []string
	}{{"typical", benchQueries}, {"worst", worst}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				ix.Search(bc.queries[i%len(bc.queries)], 50)
			}
		})
	}
}

// BenchmarkRetrieve100k is a whole retrieval (rank, expand, assemble; cache off)
// on a 100k-node, 200k-edge graph; the first load (snapshot, index, adjacency) is
// outside the timer and reported as heap in use afterwards.
func BenchmarkRetrieve100k(b *testing.B) {
	src := newFakeSource(gen.Graph(1, bigNodes, bigEdges))
	r := New(src, Options{}, nil)
	ctx := context.Background()
	if _, err := r.Retrieve(ctx, bigKey, "warm up"); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Retrieve(ctx, bigKey, benchQueries[i%len(benchQueries)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetrieveHybridRelational is one relational question (and, every fourth
// time, a plain one) on the demo graph with embeddings, the context cache off: the
// path where the anchor's neighbours are ordered by text and vector fused.
func BenchmarkRetrieveHybridRelational(b *testing.B) {
	snap, axes := withEmbeddings(b)
	emb := &fakeEmbedder{def: axes["filter-active"]}
	r := New(newFakeSource(snap), Options{}, emb)
	ctx := context.Background()
	queries := []string{
		"what runs after fetch-api",
		"qu'est-ce qui suit le filtre des joueurs actifs ?",
		"which node comes before the html display",
		"sort players by points",
	}
	if _, err := r.Retrieve(ctx, "demo", "warm up"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Retrieve(ctx, "demo", queries[i%len(queries)]); err != nil {
			b.Fatal(err)
		}
	}
}
