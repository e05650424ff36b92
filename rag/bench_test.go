package rag

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
)

// synthGraph builds a large, deterministic graph whose nodes look like real ones:
// identifier keys, a dozen types with configs, a few lines of code and some data
// drawn from a shared vocabulary (so postings lists are long, as in real graphs),
// and edges mostly between nearby nodes.
func synthGraph(seed uint64, nNodes, nEdges int) datasource.Snapshot {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	verbs := []string{"fetch", "filter", "sort", "map", "reduce", "validate", "send", "store", "load", "merge", "split", "notify", "compute", "render", "parse", "log"}
	nouns := []string{"orders", "users", "players", "stats", "invoice", "payment", "email", "report", "cart", "stock", "shipment", "refund", "session", "token", "event", "metrics", "profile", "team", "score", "page"}
	types := []string{"api-call", "filter", "transform", "log-node", "db-query", "condition", "email", "delay", "webhook", "validator", "html", "starter"}
	words := append(append([]string{}, verbs...), nouns...)
	words = append(words, "await", "const", "result", "incoming", "data", "next", "error", "retry", "timeout", "status", "items", "value", "config", "request", "response", "cache", "batch", "queue", "limit", "offset")
	configs := make([]datasource.NodeConfig, 0, len(types))
	for _, ty := range types {
		if datasource.IsBuiltinType(ty) {
			continue
		}
		configs = append(configs, datasource.NodeConfig{Key: ty, DisplayName: capitalize(ty), Description: "Custom " + ty + " step that works on incoming data", Category: "data"})
	}
	nodes := make([]datasource.Node, nNodes)
	var b strings.Builder
	for i := range nodes {
		v, n := verbs[rng.IntN(len(verbs))], nouns[rng.IntN(len(nouns))]
		b.Reset()
		fmt.Fprintf(&b, "// %s the %s for the %s step.\n", v, n, nouns[rng.IntN(len(nouns))])
		for l := 0; l < 4+rng.IntN(5); l++ {
			fmt.Fprintf(&b, "const %s%s = await %s.%s(incoming[0].data.%s);\n",
				words[rng.IntN(len(words))], capitalize(words[rng.IntN(len(words))]),
				nouns[rng.IntN(len(nouns))], verbs[rng.IntN(len(verbs))], words[rng.IntN(len(words))])
		}
		b.WriteString("next(0, result);\n")
		nodes[i] = datasource.Node{
			Key:     fmt.Sprintf("%s-%s-%d", v, n, i),
			Type:    types[rng.IntN(len(types))],
			Sheet:   fmt.Sprint(i % 4),
			Process: b.String(),
			Data:    map[string]any{"limit": rng.IntN(500), "target": nouns[rng.IntN(len(nouns))], "retries": rng.IntN(4)},
			Handles: map[string]datasource.HandleGroup{"L": {Point: []datasource.HandlePoint{{ID: "0", Type: "in", Accept: "any"}}}, "R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out", Accept: "any"}}}},
		}
	}
	edges := make([]datasource.Edge, nEdges)
	for i := range edges {
		s := rng.IntN(nNodes)
		t := (s + 1 + rng.IntN(50)) % nNodes
		edges[i] = datasource.Edge{Key: fmt.Sprintf("e%d", i), Sheet: nodes[s].Sheet, Source: nodes[s].Key, SourceHandle: "0", Target: nodes[t].Key, TargetHandle: "0"}
	}
	return datasource.Snapshot{
		Graph:   datasource.Graph{Key: "big", Name: "Synthetic", Sheets: map[string]string{"0": "a", "1": "b", "2": "c", "3": "d"}},
		Nodes:   nodes,
		Edges:   edges,
		Configs: configs,
	}
}

func capitalize(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

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

const bigNodes, bigEdges = 100_000, 200_000

// BenchmarkIndexBuild100k builds the search index of a 100k-node graph and reports
// the heap the index holds (MB) after a GC.
func BenchmarkIndexBuild100k(b *testing.B) {
	snap := synthGraph(1, bigNodes, bigEdges)
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
	snap := synthGraph(1, bigNodes, bigEdges)
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
	src := newFakeSource(synthGraph(1, bigNodes, bigEdges))
	r := New(src, Options{}, nil)
	ctx := context.Background()
	if _, err := r.Retrieve(ctx, "big", "warm up"); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-MB")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Retrieve(ctx, "big", benchQueries[i%len(benchQueries)]); err != nil {
			b.Fatal(err)
		}
	}
}
