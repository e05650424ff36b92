package memgraph_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

const g = demo.GraphKey

func newDemo(t *testing.T, opts ...memgraph.Option) *memgraph.Store {
	t.Helper()
	snap, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	s, err := memgraph.New([]datasource.Snapshot{snap}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keys(nodes []datasource.Node) string {
	ks := make([]string, len(nodes))
	for i, n := range nodes {
		ks[i] = n.Key
	}
	return strings.Join(ks, ",")
}

func edgeKeys(edges []datasource.Edge) string {
	ks := make([]string, len(edges))
	for i, e := range edges {
		ks[i] = e.Key
	}
	return strings.Join(ks, ",")
}

func TestInterfaces(t *testing.T) {
	t.Parallel()
	s := newDemo(t)
	var _ datasource.Mutable = s
	var _ datasource.Snapshotter = s
	var _ datasource.ActionApplier = s
	var _ datasource.Describer = s
	var _ datasource.VectorSearcher = s
}

func TestNew_Invalid(t *testing.T) {
	t.Parallel()
	node := func(k string) datasource.Node { return datasource.Node{Key: k, Type: "starter", Sheet: "0"} }
	tests := []struct {
		name string
		snap datasource.Snapshot
		want string
	}{
		{"no graph key", datasource.Snapshot{}, "no _key"},
		{"node without key", datasource.Snapshot{Graph: datasource.Graph{Key: "x"}, Nodes: []datasource.Node{node("")}}, "nodes[0] has no _key"},
		{"duplicate node", datasource.Snapshot{Graph: datasource.Graph{Key: "x"}, Nodes: []datasource.Node{node("a"), node("a")}}, `duplicate node key "a"`},
		{"dangling edge", datasource.Snapshot{Graph: datasource.Graph{Key: "x"}, Nodes: []datasource.Node{node("a")},
			Edges: []datasource.Edge{{Key: "e", Source: "a", Target: "b"}}}, `target node "b" does not exist`},
		{"duplicate edge", datasource.Snapshot{Graph: datasource.Graph{Key: "x"}, Nodes: []datasource.Node{node("a")},
			Edges: []datasource.Edge{{Key: "e", Source: "a", Target: "a"}, {Key: "e", Source: "a", Target: "a"}}}, `duplicate edge key "e"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := memgraph.New([]datasource.Snapshot{tt.snap})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDemo(t)
	tests := []struct {
		sheet string
		want  string
		err   bool
	}{
		{"", "entry-form,root,fetch-api,filter-active,display-html,return,error-handler,sort-stats,disconnected-note", false},
		{"0", "entry-form,root,fetch-api,filter-active,display-html,return,error-handler", false},
		{"main", "entry-form,root,fetch-api,filter-active,display-html,return,error-handler", false},
		{"1", "sort-stats,disconnected-note", false},
		{"nope", "", true},
	}
	for _, tt := range tests {
		nodes, err := s.Nodes(ctx, g, tt.sheet)
		if tt.err {
			if !errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("Nodes(%q) err = %v, want not found", tt.sheet, err)
			}
			continue
		}
		if err != nil || keys(nodes) != tt.want {
			t.Errorf("Nodes(%q) = %s, %v; want %s", tt.sheet, keys(nodes), err, tt.want)
		}
	}
	edges, err := s.Edges(ctx, g, "1")
	if err != nil || len(edges) != 0 {
		t.Errorf("Edges(1) = %v, %v", edges, err)
	}
	for _, call := range []func() error{
		func() error { _, err := s.Graph(ctx, "missing"); return err },
		func() error { _, err := s.Nodes(ctx, "missing", ""); return err },
		func() error { _, err := s.Edges(ctx, "missing", ""); return err },
		func() error { _, err := s.Configs(ctx, "missing"); return err },
		func() error { _, err := s.Search(ctx, "missing", "x", 5, nil); return err },
		func() error { _, err := s.Node(ctx, g, "missing"); return err },
		func() error { _, err := s.Neighborhood(ctx, g, "missing", 2, datasource.Any); return err },
		func() error { _, err := s.Snapshot(ctx, "missing"); return err },
	} {
		err := call()
		var nf *datasource.NotFoundError
		if !errors.Is(err, datasource.ErrNotFound) || !errors.As(err, &nf) {
			t.Errorf("err = %v, want a *NotFoundError", err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Nodes(cancelled, g, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestNeighborhood(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDemo(t)
	tests := []struct {
		start       string
		depth       int
		dir         datasource.Direction
		nodes, edge string
	}{
		{"fetch-api", 0, datasource.Any, "fetch-api", ""},
		{"fetch-api", 1, datasource.Any, "fetch-api,filter-active,error-handler,root", "e3,e4,e2"},
		{"fetch-api", 1, datasource.Outbound, "fetch-api,filter-active,error-handler", "e3,e4"},
		{"fetch-api", 1, datasource.Inbound, "fetch-api,root", "e2"},
		{"fetch-api", 2, datasource.Any, "fetch-api,filter-active,error-handler,root,display-html,entry-form", "e3,e4,e2,e5,e1"},
		{"return", 10, datasource.Inbound, "return,display-html,filter-active,fetch-api,root,entry-form", "e6,e5,e3,e2,e1"},
		{"return", 3, datasource.Outbound, "return", ""},
		{"disconnected-note", 2, datasource.Any, "disconnected-note", ""},
		{"root", 2, "", "root,fetch-api,entry-form,filter-active,error-handler", "e2,e1,e3,e4"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d/%s", tt.start, tt.depth, tt.dir), func(t *testing.T) {
			t.Parallel()
			nb, err := s.Neighborhood(ctx, g, tt.start, tt.depth, tt.dir)
			if err != nil {
				t.Fatal(err)
			}
			if keys(nb.Nodes) != tt.nodes || edgeKeys(nb.Edges) != tt.edge {
				t.Errorf("got nodes %s edges %s; want %s / %s", keys(nb.Nodes), edgeKeys(nb.Edges), tt.nodes, tt.edge)
			}
		})
	}
	if _, err := s.Neighborhood(ctx, g, "root", 1, "sideways"); err == nil {
		t.Error("bad direction accepted")
	}
}

func TestSearchFollowsChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDemo(t)
	hits, err := s.Search(ctx, g, "zebra", 5, nil)
	if err != nil || len(hits) != 0 {
		t.Fatalf("zebra before: %v %v", hits, err)
	}
	if _, err := s.CreateNode(ctx, g, datasource.Node{Key: "zoo", Type: "transform", Process: "const zebra = incoming[0].data;"}); err != nil {
		t.Fatal(err)
	}
	hits, err = s.Search(ctx, g, "zebra", 5, nil)
	if err != nil || len(hits) != 1 || hits[0].Node.Key != "zoo" {
		t.Fatalf("zebra after: %v %v", hits, err)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Error("hits not best first")
		}
	}
}

func TestCreateNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		node    datasource.Node
		wantErr string
		check   func(t *testing.T, n datasource.Node)
	}{
		{name: "generated key and config handles", node: datasource.Node{Type: "api-call", Sheet: "0"},
			check: func(t *testing.T, n datasource.Node) {
				if !strings.HasPrefix(n.Key, "ai_") || len(n.Handles["R"].Point) != 2 || n.Data == nil {
					t.Errorf("node = %+v", n)
				}
			}},
		{name: "builtin defaults", node: datasource.Node{Key: "start2", Type: "starter"},
			check: func(t *testing.T, n datasource.Node) {
				if n.Sheet != "0" || len(n.Handles["R"].Point) != 1 || n.Size != (datasource.Size{Width: 150, Height: 150, Dynamic: true}) {
					t.Errorf("node = %+v", n)
				}
			}},
		{name: "sheet by name", node: datasource.Node{Key: "x", Type: "html", Sheet: "data-processing"},
			check: func(t *testing.T, n datasource.Node) {
				if n.Sheet != "1" {
					t.Errorf("sheet = %q", n.Sheet)
				}
			}},
		{name: "unknown type", node: datasource.Node{Type: "teleport"}, wantErr: `unknown node type "teleport"`},
		{name: "unknown sheet", node: datasource.Node{Type: "html", Sheet: "9"}, wantErr: `sheet "9" does not exist`},
		{name: "duplicate key", node: datasource.Node{Key: "root", Type: "html"}, wantErr: `already exists`},
		{name: "bad key", node: datasource.Node{Key: "a b", Type: "html"}, wantErr: `may not contain spaces`},
		{name: "bad handle type", node: datasource.Node{Type: "html", Handles: map[string]datasource.HandleGroup{
			"L": {Point: []datasource.HandlePoint{{ID: "0", Type: "sideways"}}}}}, wantErr: `type must be "in" or "out"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newDemo(t)
			n, err := s.CreateNode(ctx, g, tt.node)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if v, _ := s.Version(g); v != 1 {
					t.Errorf("version moved to %d on a failed change", v)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Node(ctx, g, n.Key)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, got)
		})
	}
}

func TestUpdateNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		key     string
		changes map[string]any
		wantErr string
		check   func(t *testing.T, n datasource.Node)
	}{
		{name: "process", key: "fetch-api", changes: map[string]any{"process": "return 1;"},
			check: func(t *testing.T, n datasource.Node) {
				if n.Process != "return 1;" {
					t.Errorf("process = %q", n.Process)
				}
			}},
		{name: "nested data", key: "fetch-api", changes: map[string]any{"data.url": "https://x", "data.headers.Accept": "text/csv"},
			check: func(t *testing.T, n datasource.Node) {
				d := n.Data.(map[string]any)
				if d["url"] != "https://x" || d["headers"].(map[string]any)["Accept"] != "text/csv" || d["season"] == nil {
					t.Errorf("data = %v", d)
				}
			}},
		{name: "array index", key: "display-html", changes: map[string]any{"data.columns.0": "player"},
			check: func(t *testing.T, n datasource.Node) {
				if n.Data.(map[string]any)["columns"].([]any)[0] != "player" {
					t.Errorf("data = %v", n.Data)
				}
			}},
		{name: "whole data then nested", key: "root", changes: map[string]any{"data": map[string]any{"a": 1.0}, "data.b": "x"},
			check: func(t *testing.T, n datasource.Node) {
				d := n.Data.(map[string]any)
				if d["a"] != 1.0 || d["b"] != "x" {
					t.Errorf("data = %v", d)
				}
			}},
		{name: "type and position", key: "sort-stats", changes: map[string]any{"type": "filter", "posX": 5.0, "posY": 6.0},
			check: func(t *testing.T, n datasource.Node) {
				if n.Type != "filter" || n.PosX != 5 || n.PosY != 6 {
					t.Errorf("node = %+v", n)
				}
			}},
		{name: "sheet of an isolated node", key: "disconnected-note", changes: map[string]any{"sheet": "main"},
			check: func(t *testing.T, n datasource.Node) {
				if n.Sheet != "0" {
					t.Errorf("sheet = %q", n.Sheet)
				}
			}},
		{name: "sheet of a connected node", key: "fetch-api", changes: map[string]any{"sheet": "1"}, wantErr: "cannot move to sheet"},
		{name: "unknown path", key: "fetch-api", changes: map[string]any{"colour": "red"}, wantErr: "unknown field path"},
		{name: "key", key: "fetch-api", changes: map[string]any{"_key": "x"}, wantErr: "cannot be changed"},
		{name: "process not string", key: "fetch-api", changes: map[string]any{"process": 3.0}, wantErr: "expected a string, got a number"},
		{name: "unknown type", key: "fetch-api", changes: map[string]any{"type": "nope"}, wantErr: "unknown node type"},
		{name: "data into scalar", key: "fetch-api", changes: map[string]any{"data.url.x": 1.0}, wantErr: "cannot set"},
		{name: "no changes", key: "fetch-api", changes: map[string]any{}, wantErr: "no changes"},
		{name: "missing node", key: "ghost", changes: map[string]any{"process": ""}, wantErr: "node not found: ghost"},
		{name: "handles dropping a used point", key: "fetch-api", changes: map[string]any{"handles": map[string]any{
			"L": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in"}}},
			"R": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "out"}}},
		}}, wantErr: `drop output "1" used by edge "e4"`},
		{name: "handles ok", key: "sort-stats", changes: map[string]any{"handles": map[string]any{
			"L": map[string]any{"point": []any{map[string]any{"id": "in1", "type": "in"}}},
		}}, check: func(t *testing.T, n datasource.Node) {
			if p := n.Handles["L"].Point; len(p) != 1 || p[0].ID != "in1" || p[0].Accept != "any" || n.Handles["L"].Position != "separate" {
				t.Errorf("handles = %+v", n.Handles)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newDemo(t)
			before, _ := s.Snapshot(ctx, g)
			n, err := s.UpdateNode(ctx, g, tt.key, tt.changes)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := s.Node(ctx, g, tt.key)
			tt.check(t, n)
			tt.check(t, got)
			// The snapshot taken before the change is untouched.
			fresh, _ := demo.Snapshot()
			for i := range before.Nodes {
				a, _ := before.Nodes[i].MarshalJSON()
				b, _ := fresh.Nodes[i].MarshalJSON()
				if string(a) != string(b) {
					t.Errorf("old snapshot changed: %s", before.Nodes[i].Key)
				}
			}
		})
	}
}

func TestEdges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name    string
		edge    datasource.Edge
		wantErr string
		want    string // source:handle>target:handle
	}{
		{name: "ok with handles filled in", edge: datasource.Edge{Source: "root", Target: "filter-active"}, want: "root:0>filter-active:0"},
		{name: "explicit", edge: datasource.Edge{Key: "e9", Source: "fetch-api", SourceHandle: "1", Target: "return", TargetHandle: "0", Label: "error"}, want: "fetch-api:1>return:0"},
		{name: "several outputs", edge: datasource.Edge{Source: "fetch-api", Target: "return"}, wantErr: `several output points: "0" (side R), "1" (side R)`},
		{name: "input used as source", edge: datasource.Edge{Source: "return", SourceHandle: "0", Target: "root"}, wantErr: `source handle "0" of node "return" is an input point, but the source of an edge must be an output point`},
		{name: "output used as target", edge: datasource.Edge{Source: "root", Target: "fetch-api", TargetHandle: "1"}, wantErr: `target handle "1" of node "fetch-api" is an output point, but the target of an edge must be an input point`},
		{name: "unknown handle", edge: datasource.Edge{Source: "root", Target: "fetch-api", TargetHandle: "7"}, wantErr: `node "fetch-api" has no input handle "7"; its inputs are: "0" (side L)`},
		{name: "no output at all", edge: datasource.Edge{Source: "error-handler", Target: "return"}, wantErr: `has no output point`},
		{name: "missing source", edge: datasource.Edge{Source: "ghost", Target: "return"}, wantErr: "source: node not found: ghost"},
		{name: "missing target", edge: datasource.Edge{Source: "root", Target: "ghost"}, wantErr: "target: node not found: ghost"},
		{name: "cross sheet", edge: datasource.Edge{Source: "root", Target: "sort-stats"}, wantErr: "different sheets"},
		{name: "duplicate", edge: datasource.Edge{Source: "root", Target: "fetch-api"}, wantErr: "already joins root:0 to fetch-api:0 (e2)"},
		{name: "duplicate key", edge: datasource.Edge{Key: "e1", Source: "root", Target: "filter-active"}, wantErr: `edge with key "e1" already exists`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newDemo(t)
			e, err := s.CreateEdge(ctx, g, tt.edge)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(tt.wantErr, "not found") && !errors.Is(err, datasource.ErrNotFound) {
					t.Errorf("%v does not wrap ErrNotFound", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Source + ":" + e.SourceHandle + ">" + e.Target + ":" + e.TargetHandle; got != tt.want || e.Key == "" || e.Sheet != "0" {
				t.Fatalf("edge = %+v", e)
			}
			nb, _ := s.Neighborhood(ctx, g, e.Source, 1, datasource.Outbound)
			if !strings.Contains(edgeKeys(nb.Edges), e.Key) {
				t.Errorf("new edge not walked: %s", edgeKeys(nb.Edges))
			}
			if err := s.DeleteEdge(ctx, g, e.Key); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteEdge(ctx, g, e.Key); !errors.Is(err, datasource.ErrNotFound) {
				t.Errorf("second delete: %v", err)
			}
		})
	}
}

func TestDeleteNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var changes []string
	var mu sync.Mutex
	s := newDemo(t, memgraph.WithOnChange(func(key string, v uint64) {
		mu.Lock()
		changes = append(changes, fmt.Sprintf("%s@%d", key, v))
		mu.Unlock()
	}))
	removed, err := s.DeleteNode(ctx, g, "fetch-api")
	if err != nil {
		t.Fatal(err)
	}
	if edgeKeys(removed) != "e2,e3,e4" {
		t.Errorf("removed = %s", edgeKeys(removed))
	}
	snap, _ := s.Snapshot(ctx, g)
	if len(snap.Nodes) != 8 || edgeKeys(snap.Edges) != "e1,e5,e6" {
		t.Errorf("after delete: %s / %s", keys(snap.Nodes), edgeKeys(snap.Edges))
	}
	nb, err := s.Neighborhood(ctx, g, "filter-active", 3, datasource.Any)
	if err != nil || keys(nb.Nodes) != "filter-active,display-html,return" {
		t.Errorf("neighborhood after delete: %s %v", keys(nb.Nodes), err)
	}
	if _, err := s.DeleteNode(ctx, g, "fetch-api"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if v, _ := s.Version(g); v != 2 || strings.Join(changes, " ") != "demo@2" {
		t.Errorf("version %d, changes %v", v, changes)
	}
}

func TestApplyActionAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDemo(t, memgraph.WithKeyGenerator(func(kind string) string { return "gen-" + kind }))
	ok := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
		{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{TypeKey: "log-node", Sheet: "0", PosX: 1, PosY: 2}},
		{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{SourceKey: "display-html", SourceHandle: "0", TargetKey: "gen-node", TargetHandle: "0"}},
		{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: "gen-node", Changes: map[string]any{"process": "console.log(incoming[0].data)"}}},
		{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: 10, PosY: 20}},
		{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e6"}},
		{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: "disconnected-note"}},
	}}}
	res, err := s.ApplyAction(ctx, g, ok)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Applied || strings.Join(res.Created.Nodes, ",") != "gen-node" || strings.Join(res.Created.Edges, ",") != "gen-edge" {
		t.Errorf("result = %+v", res)
	}
	if v, _ := s.Version(g); v != 2 {
		t.Errorf("a batch should be one version, got %d", v)
	}
	bad := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
		{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: 99, PosY: 99}},
		{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "nope"}},
	}}}
	if _, err := s.ApplyAction(ctx, g, bad); err == nil || !strings.Contains(err.Error(), "batch step 2 (delete_edge): edge not found: nope") {
		t.Fatalf("err = %v", err)
	}
	root, _ := s.Node(ctx, g, "root")
	if root.PosX != 10 {
		t.Errorf("failed batch leaked a change: posX = %v", root.PosX)
	}
	for _, a := range []datasource.Action{{Type: datasource.CreateNodeAction}, {Type: "explode"}, {Type: datasource.BatchAction}} {
		if _, err := s.ApplyAction(ctx, g, a); err == nil {
			t.Errorf("action %+v accepted", a)
		}
	}
}

func TestCommitHookVeto(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	veto := errors.New("disk full")
	s := newDemo(t, memgraph.WithCommit(func(ctx context.Context, key string, next datasource.Snapshot) error {
		if len(next.Nodes) > 9 {
			return veto
		}
		return nil
	}))
	if _, err := s.CreateNode(ctx, g, datasource.Node{Type: "html"}); !errors.Is(err, veto) {
		t.Fatalf("err = %v", err)
	}
	if n, _ := s.Nodes(ctx, g, ""); len(n) != 9 {
		t.Errorf("vetoed node kept: %d nodes", len(n))
	}
	if err := s.MoveNode(ctx, g, "root", 3, 4); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentReadsAndWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newDemo(t)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range 20 {
				n, err := s.CreateNode(ctx, g, datasource.Node{Key: fmt.Sprintf("n-%d-%d", w, i), Type: "transform", Process: "sort players"})
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := s.UpdateNode(ctx, g, n.Key, map[string]any{"data.k": float64(i)}); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := s.Search(ctx, g, "sort players", 5, nil); err != nil {
					t.Error(err)
				}
				if _, err := s.Neighborhood(ctx, g, "root", 2, datasource.Any); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if n, _ := s.Nodes(ctx, g, ""); len(n) != 9+80 {
		t.Errorf("%d nodes", len(n))
	}
}

// TestNodesWithoutHandles: a node stored without handles has its type's default
// handles (datasource.EffectiveHandles) for edges and for the checks of UpdateNode.
func TestNodesWithoutHandles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bare := func(t *testing.T) *memgraph.Store {
		snap, err := demo.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		for i := range snap.Nodes {
			snap.Nodes[i].Handles = nil
		}
		s, err := memgraph.New([]datasource.Snapshot{snap})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("edge starter to return", func(t *testing.T) {
		t.Parallel()
		e, err := bare(t).CreateEdge(ctx, g, datasource.Edge{Source: "root", Target: "return"})
		if err != nil || e.SourceHandle != "0" || e.TargetHandle != "0" {
			t.Fatalf("edge = %+v, err = %v", e, err)
		}
	})
	t.Run("edge into the starter's input", func(t *testing.T) {
		t.Parallel()
		s := bare(t)
		if err := s.DeleteEdge(ctx, g, "e1"); err != nil {
			t.Fatal(err)
		}
		// Nodius's starter takes the entry form on its middle input "1"; its "0" is
		// the output on the right, so naming it is refused with the inputs listed.
		_, err := s.CreateEdge(ctx, g, datasource.Edge{Source: "entry-form", SourceHandle: "0", Target: "root", TargetHandle: "0"})
		if err == nil || !strings.Contains(err.Error(), `its inputs are: "1" (side 0, accepts entryType)`) {
			t.Fatalf("edge into the starter's output: err = %v", err)
		}
		e, err := s.CreateEdge(ctx, g, datasource.Edge{Source: "entry-form", SourceHandle: "0", Target: "root", TargetHandle: "1"})
		if err != nil || e.SourceHandle != "0" || e.TargetHandle != "1" {
			t.Fatalf("edge = %+v, err = %v", e, err)
		}
		// With no handle named, each end has one point of the right type.
		if err := s.DeleteEdge(ctx, g, e.Key); err != nil {
			t.Fatal(err)
		}
		e, err = s.CreateEdge(ctx, g, datasource.Edge{Source: "entry-form", Target: "root"})
		if err != nil || e.SourceHandle != "0" || e.TargetHandle != "1" {
			t.Fatalf("edge without handles = %+v, err = %v", e, err)
		}
	})
	t.Run("custom type's second output", func(t *testing.T) {
		t.Parallel()
		if _, err := bare(t).CreateEdge(ctx, g, datasource.Edge{Source: "fetch-api", SourceHandle: "1", Target: "return"}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("type change dropping a used point", func(t *testing.T) {
		t.Parallel()
		// display-html (html: 0:0:out, 0:1:in) has edge e5 arriving at its input
		// "1"; a return's only input is L:0.
		_, err := bare(t).UpdateNode(ctx, g, "display-html", map[string]any{"type": "return"})
		if err == nil || !strings.Contains(err.Error(), `drop input "1" used by edge "e5"`) {
			t.Fatalf("err = %v", err)
		}
		// entry-form (entryType: 0:0:out) has edge e1 leaving its output; a return
		// has no output.
		_, err = bare(t).UpdateNode(ctx, g, "entry-form", map[string]any{"type": "return"})
		if err == nil || !strings.Contains(err.Error(), `drop output "0" used by edge "e1"`) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("type change keeping used points", func(t *testing.T) {
		t.Parallel()
		n, err := bare(t).UpdateNode(ctx, g, "display-html", map[string]any{"type": "starter"})
		if err != nil || len(n.Handles) != 0 {
			t.Fatalf("node = %+v, err = %v", n, err)
		}
	})
}
