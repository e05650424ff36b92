package file

import (
	"os"
	"path/filepath"
	"runtime"
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

// BenchmarkRead10k reads and parses a generated 10,000-node graph file from disk
// as a first command does (no index). B/op shows the file read in one allocation;
// live-MB is the heap the parsed document keeps (handles shared across nodes).
func BenchmarkRead10k(b *testing.B) {
	s := gen.Graph(1, 10_000, 20_000)
	data, err := Encode(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "graph.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var doc datasource.Document
	for b.Loop() {
		raw, _, err := readRegular(path, path)
		if err != nil {
			b.Fatal(err)
		}
		if doc, _, err = parse(path, raw); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	runtime.KeepAlive(doc.Nodes)
	runtime.KeepAlive(doc.Edges)
	doc = datasource.Document{}
	runtime.GC()
	runtime.ReadMemStats(&without)
	b.ReportMetric(float64(int64(with.HeapAlloc)-int64(without.HeapAlloc))/1e6, "live-MB")
}
