package cli

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

// countingSource counts the reads tagNames makes.
type countingSource struct {
	datasource.Source
	nodes, configs, graphs int
}

func (s *countingSource) Node(_ context.Context, _, key string) (datasource.Node, error) {
	s.nodes++
	return datasource.Node{Key: key, Type: "fetch"}, nil
}

func (s *countingSource) Configs(context.Context, string) ([]datasource.NodeConfig, error) {
	s.configs++
	return []datasource.NodeConfig{{Key: "fetch", DisplayName: "Fetch"}}, nil
}

func (s *countingSource) Graph(_ context.Context, key string) (datasource.Graph, error) {
	s.graphs++
	return datasource.Graph{Key: key, Name: "Demo"}, nil
}

// A model names the same node many times while tokens stream: each key is read
// from the source once.
func TestTagNamesReadsEachKeyOnce(t *testing.T) {
	src := &countingSource{}
	n := tagNames(context.Background(), src, "demo")
	for range 3 {
		if got := n.NodeType("a"); got != "Fetch" {
			t.Fatalf("NodeType(a) = %q, want Fetch", got)
		}
	}
	n.NodeType("b")
	if src.nodes != 2 || src.configs != 1 {
		t.Errorf("reads: %d nodes, %d config lists; want 2 and 1", src.nodes, src.configs)
	}
	for range 2 {
		if got := n.Graph("demo"); got != "Demo" {
			t.Fatalf("Graph(demo) = %q, want Demo", got)
		}
	}
	if src.graphs != 1 {
		t.Errorf("graph documents read %d times, want 1", src.graphs)
	}
}
