package datasource_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

func demoEdges(t *testing.T, src datasource.Source, keys ...string) []datasource.Edge {
	t.Helper()
	all, err := src.Edges(context.Background(), demo.GraphKey, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []datasource.Edge
	for _, k := range keys {
		for _, e := range all {
			if e.Key == k {
				out = append(out, e)
			}
		}
	}
	if len(out) != len(keys) {
		t.Fatalf("demo edges %v: found %d", keys, len(out))
	}
	return out
}

func deleteNode(key string, shown []datasource.Edge) datasource.Action {
	return datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: key, RemovedEdges: shown}}
}

func update(key string, changes, before map[string]any) datasource.Action {
	return datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: key, Changes: changes, Before: before}}
}

func batch(steps ...datasource.Action) datasource.Action {
	return datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: steps}}
}

// A delete_edge recorded without the edge it showed (older proposals) still lets
// the later steps of its batch be checked: its ends come from the graph.
func TestExpectShownWithAnEdgeNotRecorded(t *testing.T) {
	t.Parallel()
	store, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	fetchEdges := demoEdges(t, store, "e2", "e3", "e4")
	shown := batch(
		datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e5"}},
		deleteNode("fetch-api", fetchEdges[:2]))
	_, err = datasource.Apply(context.Background(), store, demo.GraphKey, shown, datasource.Expect(shown))
	if !errors.Is(err, datasource.ErrGraphChanged) || !strings.Contains(err.Error(), "1 edge(s) that were not shown") {
		t.Fatalf("err = %v, want the edge of fetch-api that was not shown named", err)
	}
	if shown.Batch.Actions[0].DeleteEdge.Edge != nil {
		t.Error("the check changed the action it was given")
	}
}

// An apply given what the person was shown (Expect) applies only while the graph
// still is that, on every kind of change, and names what differs; without Expect
// (pictures, undo) nothing is checked.
func TestApplyExpectShown(t *testing.T) {
	t.Parallel()
	ref, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	process := func() string {
		n, err := ref.Node(context.Background(), demo.GraphKey, "fetch-api")
		if err != nil {
			t.Fatal(err)
		}
		return n.Process
	}()
	fetchEdges := demoEdges(t, ref, "e2", "e3", "e4")
	e4 := demoEdges(t, ref, "e4")[0]
	moved := e4
	moved.Target = "filter-active"

	tests := []struct {
		name   string
		action datasource.Action
		expect bool
		want   string // "" applies; else the conflict names it
	}{
		{"delete as shown", deleteNode("fetch-api", fetchEdges), true, ""},
		{"delete with an edge not shown", deleteNode("fetch-api", fetchEdges[:2]), true, "1 edge(s) that were not shown and would be deleted with it (e4: fetch-api:1 → error-handler:0)"},
		{"delete with a shown edge gone", deleteNode("fetch-api", append(append([]datasource.Edge{}, fetchEdges...),
			datasource.Edge{Key: "e9", Source: "fetch-api", SourceHandle: "0", Target: "sort-stats", TargetHandle: "0"})), true, "no longer has 1 edge(s) that were shown (e9: fetch-api:0 → sort-stats:0)"},
		{"delete with a shown edge moved", deleteNode("fetch-api", []datasource.Edge{fetchEdges[0], fetchEdges[1], moved}), true, "e4: fetch-api:1 → error-handler:0"},
		{"delete stale without Expect", deleteNode("fetch-api", nil), false, ""},
		{"update as shown", update("fetch-api", map[string]any{"process": "x()", "data.url": "u"}, map[string]any{"process": process, "data.url": "https://api.balldontlie.io/v1/season_averages"}), true, ""},
		{"update after a field changed", update("fetch-api", map[string]any{"process": "x()"}, map[string]any{"process": "old()"}), true, "field process of node fetch-api is no longer the value that was shown"},
		{"update of an absent field as shown", update("fetch-api", map[string]any{"data.new": 1}, map[string]any{"data.new": nil}), true, ""},
		{"update stale without Expect", update("fetch-api", map[string]any{"process": "x()"}, map[string]any{"process": "old()"}), false, ""},
		{"delete_edge as shown", datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e4", Edge: &e4}}, true, ""},
		{"delete_edge rewired", datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e4", Edge: &moved}}, true, "edge e4 now joins fetch-api:1 → error-handler:0 instead of fetch-api:1 → filter-active:0"},
		// In a batch, what a step showed was computed after the steps before it.
		{"batch: delete after its edges changed earlier", batch(
			datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e4", Edge: &e4}},
			deleteNode("fetch-api", fetchEdges[:2])), true, ""},
		{"batch: second update of one field", batch(
			update("fetch-api", map[string]any{"process": "a()"}, map[string]any{"process": process}),
			update("fetch-api", map[string]any{"process": "b()"}, map[string]any{"process": process})), true, ""},
		{"batch: each step checked", batch(
			update("root", map[string]any{"process": "a()"}, map[string]any{"process": "stale"}),
			deleteNode("fetch-api", fetchEdges[:1])), true, "field process of node root; node fetch-api has 2 edge(s) that were not shown"},
		{"batch: a node created earlier", batch(
			datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "html", Sheet: "0"}},
			update("n1", map[string]any{"process": "a()"}, map[string]any{"process": "whatever"})), true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			for _, via := range []string{"store", "mutable", "precondition"} {
				store, err := demo.New()
				if err != nil {
					t.Fatal(err)
				}
				var src datasource.Source = store
				switch via {
				case "mutable":
					src = mutableOnly{store}
				case "precondition":
					src = viaPrecondition{store}
				}
				var opts []datasource.ApplyOption
				if tt.expect {
					opts = append(opts, datasource.Expect(tt.action))
				}
				v0, _ := store.Version(demo.GraphKey)
				_, err = datasource.Apply(ctx, src, demo.GraphKey, tt.action, opts...)
				v1, _ := store.Version(demo.GraphKey)
				if tt.want == "" {
					if err != nil {
						t.Fatalf("%s: %v", via, err)
					}
					continue
				}
				for _, part := range strings.Split(tt.want, "; ") {
					if err == nil || !strings.Contains(err.Error(), part) {
						t.Fatalf("%s: err = %v, want it to say %q", via, err, part)
					}
				}
				if !datasource.IsConflict(err) || !errors.Is(err, datasource.ErrGraphChanged) {
					t.Errorf("%s: %v is not a conflict the model can act on", via, err)
				}
				if v1 != v0 {
					t.Errorf("%s: the graph changed (version %d → %d) although the apply was refused", via, v0, v1)
				}
			}
		})
	}
}
