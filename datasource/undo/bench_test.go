package undo_test

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// BenchmarkPlanDelete is what recording the reversal adds to an approval: deleting a
// node of a 5,000-node graph (the node and its edges are kept).
func BenchmarkPlanDelete(b *testing.B) {
	snap := gen.Graph(1, 5000, 7500)
	src, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		b.Fatal(err)
	}
	a := datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: snap.Nodes[len(snap.Nodes)/2].Key}}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := undo.Plan(ctx, src, snap.Graph.Key, a); err != nil {
			b.Fatal(err)
		}
	}
}
