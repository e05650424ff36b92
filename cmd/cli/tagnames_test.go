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

// listingSource lists its graphs with their names in one read (a Nodius server).
type listingSource struct {
	countingSource
	lists int
}

func (s *listingSource) ListGraphs(context.Context) ([]datasource.Graph, error) {
	s.lists++
	return []datasource.Graph{{Key: "g1", Name: "Invoices"}, {Key: "g2", Name: "Players"}}, nil
}

// In home mode, graph tags are named from one listing when the source lists its
// graphs with names, never by reading (on a server: loading) each graph.
func TestTagNamesHomeUsesTheListing(t *testing.T) {
	src := &listingSource{}
	n := tagNames(context.Background(), src, "home")
	for _, tc := range []struct{ key, want string }{{"g1", "Invoices"}, {"g2", "Players"}, {"g1", "Invoices"}, {"gone", ""}} {
		if got := n.Graph(tc.key); got != tc.want {
			t.Errorf("Graph(%s) = %q, want %q", tc.key, got, tc.want)
		}
	}
	if src.lists != 1 || src.graphs != 0 {
		t.Errorf("%d listings and %d graph reads, want 1 and 0", src.lists, src.graphs)
	}
}
