package gen_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

func TestGraph(t *testing.T) {
	t.Parallel()
	tests := []struct{ nodes, edges int }{{0, 5}, {1, 5}, {2, 1}, {50, 100}, {12000, 25000}}
	for _, tt := range tests {
		snap := gen.Graph(7, tt.nodes, tt.edges)
		wantEdges := tt.edges
		if tt.nodes < 2 {
			wantEdges = 0
		}
		if len(snap.Nodes) != tt.nodes || len(snap.Edges) != wantEdges || len(snap.Configs) != 12 {
			t.Errorf("%v: got %d nodes, %d edges, %d configs", tt, len(snap.Nodes), len(snap.Edges), len(snap.Configs))
		}
		if _, err := memgraph.New([]datasource.Snapshot{snap}); err != nil {
			t.Errorf("%v: not a valid graph: %v", tt, err)
		}
		byKey := map[string]datasource.Node{}
		for _, n := range snap.Nodes {
			byKey[n.Key] = n
		}
		builtins := map[string]int{}
		for _, n := range snap.Nodes {
			if datasource.IsBuiltinType(n.Type) {
				builtins[n.Type]++
				if want := datasource.DefaultHandles(n.Type, nil); !reflect.DeepEqual(n.Handles, want) {
					t.Fatalf("%v: %s node %s has handles %+v, not Nodius's %+v", tt, n.Type, n.Key, n.Handles, want)
				}
			}
		}
		if tt.nodes >= 12000 && len(builtins) != len(datasource.BuiltinTypes) {
			t.Errorf("%v: built-in types %v, want all of %v", tt, builtins, datasource.BuiltinTypes)
		}
		for _, e := range snap.Edges {
			if byKey[e.Source].Sheet != e.Sheet || byKey[e.Target].Sheet != e.Sheet {
				t.Fatalf("%v: edge %s crosses sheets", tt, e.Key)
			}
			// Each end is a point of the right type: no edge leaves a return or
			// enters an entry form; a starter or HTML node is entered at "1".
			for _, end := range []struct{ node, handle, typ string }{{e.Source, e.SourceHandle, "out"}, {e.Target, e.TargetHandle, "in"}} {
				h := datasource.EffectiveHandles(byKey[end.node], snap.Configs)
				if got, err := datasource.ResolveHandle(end.node, h, end.handle, end.typ); err != nil || got != end.handle {
					t.Fatalf("%v: edge %s: %v", tt, e.Key, err)
				}
			}
		}
	}
	a, _ := json.Marshal(gen.Graph(42, 300, 600))
	b, _ := json.Marshal(gen.Graph(42, 300, 600))
	c, _ := json.Marshal(gen.Graph(43, 300, 600))
	if string(a) != string(b) || string(a) == string(c) {
		t.Error("the generator is not deterministic per seed")
	}
	if s := gen.Graph(1, 100000, 10); len(s.Graph.Sheets) != 8 {
		t.Errorf("sheets = %d", len(s.Graph.Sheets))
	}
}
