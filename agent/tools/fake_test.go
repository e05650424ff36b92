package tools

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// fakeSource is a small read-only Source over one snapshot, enough for the tools'
// tests without depending on another package's in-memory source.
type fakeSource struct {
	snap datasource.Snapshot
}

// loadDemo is the demo graph in the real in-memory store, fresh for each caller.
func loadDemo(t testing.TB) datasource.Source {
	t.Helper()
	s, err := demo.New()
	if err != nil {
		t.Fatalf("demo.New: %v", err)
	}
	return s
}

// loadFakeDemo is the demo graph behind fakeSource: a Source with no Snapshotter.
func loadFakeDemo(t testing.TB) *fakeSource {
	t.Helper()
	raw, err := os.ReadFile("../../datasource/demo/demo.json")
	if err != nil {
		t.Fatalf("read demo graph: %v", err)
	}
	var f struct {
		Graph       datasource.Graph        `json:"graph"`
		Nodes       []datasource.Node       `json:"nodes"`
		Edges       []datasource.Edge       `json:"edges"`
		NodeConfigs []datasource.NodeConfig `json:"nodeConfigs"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("decode demo graph: %v", err)
	}
	return &fakeSource{snap: datasource.Snapshot{Graph: f.Graph, Nodes: f.Nodes, Edges: f.Edges, Configs: f.NodeConfigs}}
}

func (s *fakeSource) check(graphKey string) error {
	if graphKey != s.snap.Graph.Key {
		return &datasource.NotFoundError{Kind: "graph", Key: graphKey}
	}
	return nil
}

func (s *fakeSource) Graph(_ context.Context, gk string) (datasource.Graph, error) {
	return s.snap.Graph, s.check(gk)
}

func (s *fakeSource) Nodes(_ context.Context, gk, sheet string) ([]datasource.Node, error) {
	var out []datasource.Node
	for _, n := range s.snap.Nodes {
		if sheet == "" || n.Sheet == sheet {
			out = append(out, n)
		}
	}
	return out, s.check(gk)
}

func (s *fakeSource) Edges(_ context.Context, gk, sheet string) ([]datasource.Edge, error) {
	var out []datasource.Edge
	for _, e := range s.snap.Edges {
		if sheet == "" || e.Sheet == sheet {
			out = append(out, e)
		}
	}
	return out, s.check(gk)
}

func (s *fakeSource) Node(_ context.Context, gk, key string) (datasource.Node, error) {
	if err := s.check(gk); err != nil {
		return datasource.Node{}, err
	}
	for _, n := range s.snap.Nodes {
		if n.Key == key {
			return n, nil
		}
	}
	return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: key}
}

func (s *fakeSource) Configs(_ context.Context, gk string) ([]datasource.NodeConfig, error) {
	return s.snap.Configs, s.check(gk)
}

func (s *fakeSource) Search(_ context.Context, gk, query string, limit int, _ []float32) ([]datasource.ScoredNode, error) {
	var out []datasource.ScoredNode
	words := strings.Fields(strings.ToLower(query))
	for _, n := range s.snap.Nodes {
		text := strings.ToLower(n.Key + " " + n.Type + " " + n.Process)
		score := 0.0
		for _, w := range words {
			if strings.Contains(text, w) {
				score++
			}
		}
		if score > 0 {
			out = append(out, datasource.ScoredNode{Node: n, Score: score})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, s.check(gk)
}

func (s *fakeSource) Neighborhood(_ context.Context, gk, key string, depth int, dir datasource.Direction) (datasource.Neighborhood, error) {
	if err := s.check(gk); err != nil {
		return datasource.Neighborhood{}, err
	}
	byKey := map[string]datasource.Node{}
	for _, n := range s.snap.Nodes {
		byKey[n.Key] = n
	}
	if _, ok := byKey[key]; !ok {
		return datasource.Neighborhood{}, &datasource.NotFoundError{Kind: "node", Key: key}
	}
	seen := map[string]bool{key: true}
	seenEdge := map[string]bool{}
	nb := datasource.Neighborhood{Nodes: []datasource.Node{byKey[key]}}
	frontier := []string{key}
	for d := 0; d < depth; d++ {
		var next []string
		for _, k := range frontier {
			for _, e := range s.snap.Edges {
				var other string
				switch {
				case e.Source == k && dir != datasource.Inbound:
					other = e.Target
				case e.Target == k && dir != datasource.Outbound:
					other = e.Source
				default:
					continue
				}
				if !seenEdge[e.Key] {
					seenEdge[e.Key] = true
					nb.Edges = append(nb.Edges, e)
				}
				if !seen[other] {
					seen[other] = true
					nb.Nodes = append(nb.Nodes, byKey[other])
					next = append(next, other)
				}
			}
		}
		frontier = next
	}
	return nb, nil
}
