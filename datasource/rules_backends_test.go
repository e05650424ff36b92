package datasource_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// The rules a change must follow are the same on every backend: each action below
// is applied to the same graph in the in-memory store (the demo and file sources'
// store) and in ArangoDB (the fake server driving the real driver), and must give
// the same graph, or be refused by both with the same reason.

func rulesGraph() datasource.Snapshot {
	io := func(in, out string) map[string]datasource.HandleGroup {
		h := map[string]datasource.HandleGroup{}
		if in != "" {
			h["L"] = datasource.HandleGroup{Position: "separate", Point: []datasource.HandlePoint{{ID: in, Type: "in", Accept: "any"}}}
		}
		if out != "" {
			h["R"] = datasource.HandleGroup{Position: "separate", Point: []datasource.HandlePoint{{ID: out, Type: "out", Accept: "any"}}}
		}
		return h
	}
	node := func(key, typ, sheet string, h map[string]datasource.HandleGroup) datasource.Node {
		return datasource.Node{Key: key, Type: typ, Sheet: sheet, Handles: h, PosX: 10, PosY: 20,
			Data: map[string]any{"url": "https://x", "list": []any{"a", "b"}}, Size: datasource.Size{Width: 200, Height: 100}}
	}
	return datasource.Snapshot{
		Graph: datasource.Graph{Key: "g", Name: "Rules", Workspace: "ws", Sheets: map[string]string{"0": "main", "1": "side"}},
		Nodes: []datasource.Node{
			node("start", "starter", "0", datasource.DefaultHandles("starter", nil)),
			node("fetch", "api-call", "0", io("0", "0")),
			node("out", "return", "0", io("0", "")),
			node("lone", "api-call", "1", io("0", "0")),
		},
		Edges: []datasource.Edge{
			{Key: "e1", Sheet: "0", Source: "start", SourceHandle: "0", Target: "fetch", TargetHandle: "0"},
			{Key: "e2", Sheet: "0", Source: "fetch", SourceHandle: "0", Target: "out", TargetHandle: "0"},
		},
		Configs: []datasource.NodeConfig{{Key: "api-call", DisplayName: "API Call", Workspace: "ws", Handles: io("0", "0")}},
	}
}

// backend is one store holding rulesGraph, and how to read it back.
type backend struct {
	name string
	open func(t *testing.T) (datasource.Source, func(ctx context.Context) (datasource.Snapshot, error))
}

func backends() []backend {
	return []backend{
		{"memgraph", func(t *testing.T) (datasource.Source, func(context.Context) (datasource.Snapshot, error)) {
			s, err := memgraph.New([]datasource.Snapshot{rulesGraph()})
			if err != nil {
				t.Fatal(err)
			}
			return s, func(ctx context.Context) (datasource.Snapshot, error) { return s.Snapshot(ctx, "g") }
		}},
		{"arango", func(t *testing.T) (datasource.Source, func(context.Context) (datasource.Snapshot, error)) {
			f := arangotest.New(t)
			seedArango(t, f, rulesGraph())
			cfg, err := arango.ParseURL(f.URL("ws"))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s, err := arango.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s, func(ctx context.Context) (datasource.Snapshot, error) { return s.Snapshot(ctx, "g") }
		}},
	}
}

// seedArango stores snap as the Nodius server stores a graph: composite node and
// edge keys, _from/_to, the graph's workspace on the graph and its types.
func seedArango(t *testing.T, f *arangotest.Server, snap datasource.Snapshot) {
	t.Helper()
	doc := func(v any) map[string]any {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	gk := snap.Graph.Key
	g := doc(snap.Graph)
	g["workspace"] = snap.Graph.Workspace
	f.Insert(arangotest.Graphs, g)
	for _, n := range snap.Nodes {
		d := doc(n)
		d["_key"], d["graphKey"] = gk+"-"+n.Key, gk
		delete(d, "process")
		f.Insert(arangotest.Nodes, d)
	}
	for _, e := range snap.Edges {
		d := doc(e)
		d["_key"], d["graphKey"] = gk+"-"+e.Key, gk
		d["_from"], d["_to"] = "nodius_nodes/"+gk+"-"+e.Source, "nodius_nodes/"+gk+"-"+e.Target
		f.Insert(arangotest.Edges, d)
	}
	for _, c := range snap.Configs {
		f.Insert(arangotest.Configs, doc(c))
	}
}

// shape is what both backends must agree on after an action: every node's and
// edge's fields that a change can touch, as JSON, sorted by key.
func shape(t *testing.T, s datasource.Snapshot) string {
	t.Helper()
	var lines []string
	for _, n := range s.Nodes {
		b, _ := json.Marshal(map[string]any{"key": n.Key, "type": n.Type, "sheet": n.Sheet, "handles": n.Handles,
			"data": n.Data, "pos": []float64{n.PosX, n.PosY}, "size": n.Size})
		lines = append(lines, "node "+string(b))
	}
	for _, e := range s.Edges {
		lines = append(lines, fmt.Sprintf("edge %s %s:%s->%s:%s sheet %s", e.Key, e.Source, e.SourceHandle, e.Target, e.TargetHandle, e.Sheet))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func TestRulesAreTheSameOnEveryBackend(t *testing.T) {
	t.Parallel()
	update := func(key string, changes map[string]any) datasource.Action {
		return datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: key, Changes: changes}}
	}
	create := func(key, typ, sheet string) datasource.Action {
		return datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: key, TypeKey: typ, Sheet: sheet, PosX: 1, PosY: 2}}
	}
	edge := func(key, from, fromHandle, to, toHandle string) datasource.Action {
		return datasource.Action{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{EdgeKey: key,
			SourceKey: from, SourceHandle: fromHandle, TargetKey: to, TargetHandle: toHandle}}
	}
	tests := []struct {
		name    string
		action  datasource.Action
		refusal string // "" when the action applies
	}{
		{"a data entry", update("fetch", map[string]any{"data.url": "https://y"}), ""},
		{"a nested data entry created", update("fetch", map[string]any{"data.headers.auth": "k"}), ""},
		{"an array item", update("fetch", map[string]any{"data.list.1": "c"}), ""},
		{"an array index past the end", update("fetch", map[string]any{"data.list.5": "c"}), "is not an index"},
		{"inside a string", update("fetch", map[string]any{"data.url.x": 1.0}), "cannot set"},
		{"the whole data", update("fetch", map[string]any{"data": map[string]any{"k": "v"}}), ""},
		{"an unknown type", update("fetch", map[string]any{"type": "nope"}), "unknown node type"},
		{"a known type", update("lone", map[string]any{"type": "starter"}), ""},
		{"a new type keeps the node's own handles", update("fetch", map[string]any{"type": "return"}), ""},
		{"another sheet with edges", update("fetch", map[string]any{"sheet": "1"}), "cannot move to sheet"},
		{"another sheet by name, no edges", update("lone", map[string]any{"sheet": "main"}), ""},
		{"a sheet that does not exist", update("lone", map[string]any{"sheet": "9"}), "does not exist"},
		{"handles that drop an edge's point", update("fetch", map[string]any{"handles": map[string]any{
			"L": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "any"}}}}}), "would drop output"},
		{"a negative size", update("fetch", map[string]any{"size.width": -1.0}), "size must be positive"},
		{"a position that is not a number", update("fetch", map[string]any{"posX": "left"}), "expected a number"},
		{"the key", update("fetch", map[string]any{"_key": "other"}), "cannot be changed"},
		{"an unknown path", update("fetch", map[string]any{"color": "red"}), "unknown field path"},
		{"a new node", create("n1", "api-call", "side"), ""},
		{"a new node of an unknown type", create("n1", "nope", "0"), "unknown node type"},
		{"a new node on no sheet", create("n1", "api-call", "9"), "does not exist"},
		{"a new node with a bad key", create("a/b", "api-call", "0"), "may not contain"},
		{"a new edge", edge("e9", "fetch", "", "out", ""), "already joins"},
		{"an edge across sheets", edge("e9", "fetch", "0", "lone", "0"), "different sheets"},
		{"an edge from a node without outputs", edge("e9", "out", "", "fetch", ""), "no output point"},
		{"an edge to a point that is not there", edge("e9", "start", "0", "fetch", "7"), "no input handle"},
		{"an edge into the entry form's point", edge("e9", "fetch", "0", "start", ""), ""},
		{"a batch", datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
			create("n2", "api-call", "0"), edge("e8", "n2", "0", "out", "0"), update("n2", map[string]any{"data.k": "v"})}}}, ""},
		{"a batch with one bad step", datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
			create("n2", "api-call", "0"), update("n2", map[string]any{"type": "nope"})}}}, "unknown node type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var shapes []string
			for _, b := range backends() {
				src, read := b.open(t)
				_, err := datasource.Apply(ctx, src, "g", tc.action)
				switch {
				case tc.refusal == "" && err != nil:
					t.Fatalf("%s refused it: %v", b.name, err)
				case tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)):
					t.Fatalf("%s: err = %v, want a refusal with %q", b.name, err, tc.refusal)
				case tc.refusal != "" && !datasource.IsConflict(err):
					t.Errorf("%s: refusal %v is not a conflict (the model and the person cannot act on it)", b.name, err)
				}
				snap, err := read(ctx)
				if err != nil {
					t.Fatalf("%s: read back: %v", b.name, err)
				}
				shapes = append(shapes, shape(t, snap))
			}
			for i := 1; i < len(shapes); i++ {
				if shapes[i] != shapes[0] {
					t.Errorf("the backends disagree:\n%s:\n%s\n%s:\n%s", backends()[0].name, shapes[0], backends()[i].name, shapes[i])
				}
			}
			if tc.refusal != "" && shapes[0] != shape(t, mustMem(t)) {
				t.Errorf("a refused action changed the graph:\n%s", shapes[0])
			}
		})
	}
}

func mustMem(t *testing.T) datasource.Snapshot {
	t.Helper()
	s, err := memgraph.New([]datasource.Snapshot{rulesGraph()})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := s.Snapshot(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// The rules compare equal values the same way on both stores: a graph read back
// from ArangoDB must have what the store made (a guard for the test itself).
func TestRulesGraphReadsBackTheSame(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var shapes []string
	for _, b := range backends() {
		_, read := b.open(t)
		snap, err := read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		shapes = append(shapes, shape(t, snap))
	}
	if !reflect.DeepEqual(shapes[0], shapes[1]) {
		t.Errorf("seeded graphs differ:\n%s\n---\n%s", shapes[0], shapes[1])
	}
}
