package graphpic

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/goldentest"
	"github.com/nodius/nodius-ai/internal/graphdraw"
)

// neighbourhood30 is a 30-node neighbourhood of a generated 2,000-node graph: the
// first node whose depth-2 walk reaches at least 30 nodes, cut to 30.
func neighbourhood30(b testing.TB) graphdraw.Graph {
	snap := gen.Graph(7, 2000, 3000)
	s, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range snap.Nodes {
		nb, err := s.Neighborhood(ctx, snap.Graph.Key, n.Key, 3, datasource.Any)
		if err != nil {
			b.Fatal(err)
		}
		if len(nb.Nodes) >= 30 {
			wider, _ := s.Neighborhood(ctx, snap.Graph.Key, n.Key, 4, datasource.Any)
			return Convert(nb.Nodes[:30], wider.Edges)
		}
	}
	b.Fatal("no neighbourhood of 30 nodes")
	return graphdraw.Graph{}
}

// BenchmarkDraw30 draws a 30-node neighbourhood with no width limit (target: well
// under 20 ms per drawing).
func BenchmarkDraw30(b *testing.B) {
	g := neighbourhood30(b)
	b.ReportMetric(float64(len(g.Edges)), "edges")
	b.ResetTimer()
	for b.Loop() {
		graphdraw.Draw(g, graphdraw.Options{Color: true})
	}
}

// BenchmarkDraw30Narrow draws it into 100 columns: every level of detail is tried
// before the one that fits (or the list), the worst case.
func BenchmarkDraw30Narrow(b *testing.B) {
	g := neighbourhood30(b)
	for b.Loop() {
		graphdraw.Draw(g, graphdraw.Options{Width: 100})
	}
}

// TestGeneratedNeighbourhood draws the benchmark's neighbourhood: a golden of a
// realistic, tangled graph.
func TestGeneratedNeighbourhood(t *testing.T) {
	g := neighbourhood30(t)
	goldentest.Check(t, "generated-30", graphdraw.Draw(g, graphdraw.Options{}))
	pic := graphdraw.Draw(g, graphdraw.Options{Width: 120})
	checkWidth(t, "generated-30-w120", pic, 120)
	goldentest.Check(t, "generated-30-w120", pic)
}
