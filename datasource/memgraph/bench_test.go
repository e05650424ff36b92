package memgraph_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

const (
	bigNodes = 100_000
	bigEdges = 200_000
)

// bigGraph is generated once per test binary run (sync.OnceValue keeps it out of
// package state that anything could change).
var bigGraph = sync.OnceValue(func() datasource.Snapshot { return gen.Graph(1, bigNodes, bigEdges) })

func bigStore(b *testing.B) (*memgraph.Store, string) {
	b.Helper()
	snap := bigGraph()
	s, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Search(context.Background(), snap.Graph.Key, "warm up", 1, nil); err != nil {
		b.Fatal(err)
	}
	return s, snap.Graph.Key
}

func heapInuseMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapInuse) / (1 << 20)
}

// BenchmarkBuild100k measures building a store over a 100k-node, 200k-edge graph,
// search index included (target: < 3 s). heap-MB is the heap in use with the graph,
// the store and its index alive (target: < 600 MB).
func BenchmarkBuild100k(b *testing.B) {
	snap := bigGraph()
	ctx := context.Background()
	b.ResetTimer()
	var s *memgraph.Store
	for b.Loop() {
		var err error
		s, err = memgraph.New([]datasource.Snapshot{snap})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Search(ctx, snap.Graph.Key, "fetch orders", 5, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(heapInuseMB(), "heap-MB")
	runtime.KeepAlive(s)
}

func BenchmarkNeighborhoodDepth2(b *testing.B) {
	s, key := bigStore(b)
	snap := bigGraph()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		start := snap.Nodes[(i*7919)%len(snap.Nodes)].Key
		i++
		if _, err := s.Neighborhood(ctx, key, start, 2, datasource.Any); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSearch100k(b *testing.B) {
	s, key := bigStore(b)
	ctx := context.Background()
	queries := []string{"fetch orders", "how are invoices validated?", "sort players by points", "send email to customers", "cache sessions ttl"}
	i := 0
	for b.Loop() {
		if _, err := s.Search(ctx, key, queries[i%len(queries)], 5, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkMoveNode100k measures one change on the big graph (copy on write of the
// node and edge lists and maps; the search index is rebuilt lazily, not here).
func BenchmarkMoveNode100k(b *testing.B) {
	s, key := bigStore(b)
	snap := bigGraph()
	ctx := context.Background()
	i := 0
	for b.Loop() {
		if err := s.MoveNode(ctx, key, snap.Nodes[i%len(snap.Nodes)].Key, float64(i), 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkNewNoIndex100k is the store's own share of BenchmarkBuild100k (maps and
// adjacency lists, no search index).
func BenchmarkNewNoIndex100k(b *testing.B) {
	snap := bigGraph()
	for b.Loop() {
		if _, err := memgraph.New([]datasource.Snapshot{snap}); err != nil {
			b.Fatal(err)
		}
	}
}
