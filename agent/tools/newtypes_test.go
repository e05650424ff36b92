package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// TestProposalsApplyAndUndo: what ParseProposal produces, for each proposal type, is
// applied to the in-memory store as an approval does (stored and read back, keys
// assigned, what was shown checked, the undo recorded), does what it says, and its
// undo puts the graph back.
func TestProposalsApplyAndUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name, tool, args string
		check            func(t *testing.T, src datasource.Source, a datasource.Action, res datasource.ApplyResult)
		// deletes: the change deletes a node or an edge, which undo puts back at the
		// end of the store's lists; every other undo keeps the order too.
		deletes bool
	}{
		{name: "node with edges", tool: ProposeCreateNodeWithEdges,
			args: `{"typeKey":"log-node","posX":900,"posY":300,"edges":[{"direction":"in","handleId":"0","targetNodeKey":"display-html","targetHandleId":"0","label":"ok"}],"reason":"log"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, res datasource.ApplyResult) {
				if len(res.Created.Nodes) != 1 || len(res.Created.Edges) != 1 {
					t.Fatalf("created %+v", res.Created)
				}
				n, err := src.Node(ctx, "demo", res.Created.Nodes[0])
				if err != nil || n.Type != "log-node" || n.PosX != 900 || n.Sheet != "0" {
					t.Errorf("node %+v %v", n, err)
				}
				// It runs its type's code: left empty, a Nodius-format file would
				// read that as the type's code changed to nothing.
				cfgs, _ := src.Configs(ctx, "demo")
				for _, c := range cfgs {
					if c.Key == "log-node" && (c.Process == "" || n.Process != c.Process) {
						t.Errorf("new node's code %q, its type's %q", n.Process, c.Process)
					}
				}
				edges, _ := src.Edges(ctx, "demo", "")
				found := false
				for _, e := range edges {
					found = found || (e.Source == "display-html" && e.Target == n.Key && e.Label == "ok")
				}
				if !found {
					t.Errorf("no edge display-html → %s", n.Key)
				}
			}},
		{name: "update name, description and size", tool: ProposeUpdateNode,
			args: `{"nodeKey":"fetch-api","updates":{"name":"Fetch stats","description":"Season averages","size":{"width":260,"height":90}},"reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, _ datasource.ApplyResult) {
				n, _ := src.Node(ctx, "demo", "fetch-api")
				if string(n.Extra["name"]) != `"Fetch stats"` || string(n.Extra["description"]) != `"Season averages"` || n.Size.Width != 260 {
					t.Errorf("node %+v", n)
				}
			}},
		{name: "reorganize layout", tool: ProposeReorganizeLayout, args: `{"nodeKeys":["root","fetch-api","filter-active"],"reason":"tidy"}`,
			check: func(t *testing.T, src datasource.Source, a datasource.Action, _ datasource.ApplyResult) {
				root, _ := src.Node(ctx, "demo", "root")
				fetch, _ := src.Node(ctx, "demo", "fetch-api")
				filter, _ := src.Node(ctx, "demo", "filter-active")
				if !(root.PosX < fetch.PosX && fetch.PosX < filter.PosX) || root.PosY != fetch.PosY {
					t.Errorf("not left to right along the flow: %v %v %v", root.PosX, fetch.PosX, filter.PosX)
				}
				if len(a.ReorganizeLayout.Moves) == 0 {
					t.Error("the proposal shows no move")
				}
			}},
		{name: "type code by patches", tool: ProposeConfigureNodeType,
			args: `{"mode":"update","typeKey":"api-call","displayName":"API Call","processPatches":[{"search":"// Fetch season averages","replace":"// Fetch v2 season averages"}],"reason":"v2"}`,
			check: func(t *testing.T, src datasource.Source, a datasource.Action, _ datasource.ApplyResult) {
				p := a.ConfigureNodeType
				if len(p.CodeDiffs) != 1 || !strings.Contains(p.CodeDiffs[0].Modified, "// Fetch v2 season") || strings.Contains(p.CodeDiffs[0].Original, "v2") {
					t.Errorf("code diff %+v", p.CodeDiffs)
				}
				if len(p.Nodes) != 1 || p.Nodes[0] != "fetch-api" {
					t.Errorf("nodes of the type %v", p.Nodes)
				}
				n, _ := src.Node(ctx, "demo", "fetch-api")
				if !strings.HasPrefix(n.Process, "// Fetch v2 season averages") {
					t.Errorf("process %q", n.Process)
				}
			}},
		{name: "batch insert node", deletes: true, tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","nodeKey":"sorter","typeKey":"transform","sheet":"main","posX":900,"posY":0,"data":{"by":"pts","n":1.50}},
				{"type":"delete_edge","edgeKey":"e5"},
				{"type":"create_edge","sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"sorter","targetHandle":"0"},
				{"type":"create_edge","sheet":"0","sourceKey":"sorter","sourceHandle":"R:0","targetKey":"display-html","targetHandle":"1"}],"reason":"sort"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, res datasource.ApplyResult) {
				n, err := src.Node(ctx, "demo", "sorter")
				if err != nil {
					t.Fatal(err)
				}
				if HandlesSummary(n.Handles) != "L:0:in, R:0:out" || n.Sheet != "0" {
					t.Errorf("created node = %+v", n)
				}
				if len(res.Created.Edges) != 2 {
					t.Errorf("created edges = %v", res.Created.Edges)
				}
			}},
		{name: "update handles and data path", tool: ProposeUpdateNode,
			args: `{"nodeKey":"fetch-api","updates":{"data":{"season":2025},"size":{"width":300,"height":90}},"reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, _ datasource.ApplyResult) {
				n, _ := src.Node(ctx, "demo", "fetch-api")
				if n.Size.Width != 300 || n.Size.Height != 90 {
					t.Errorf("size = %+v", n.Size)
				}
				if d, _ := n.Data.(map[string]any); d == nil || strings.TrimSpace(toString(d["season"])) != "2025" {
					t.Errorf("data = %v", n.Data)
				}
			}},
		{name: "delete edge", deletes: true, tool: ProposeDeleteEdge, args: `{"edgeKey":"e4","reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, _ datasource.ApplyResult) {
				edges, _ := src.Edges(ctx, "demo", "")
				if len(edges) != 5 {
					t.Errorf("%d edges left, want 5", len(edges))
				}
			}},
		{name: "batch: edge into a node then its deletion, two updates of one field", deletes: true, tool: ProposeBatch, args: `{"actions":[
				{"type":"create_edge","sheet":"0","sourceKey":"display-html","sourceHandle":"0","targetKey":"fetch-api","targetHandle":"0"},
				{"type":"update_node","nodeKey":"root","updates":{"data":{"a":1}}},
				{"type":"update_node","nodeKey":"root","updates":{"data":{"b":2}}},
				{"type":"delete_node","nodeKey":"fetch-api"}],"reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, _ datasource.ApplyResult) {
				if _, err := src.Node(ctx, "demo", "fetch-api"); err == nil {
					t.Error("fetch-api is still there")
				}
				if n, _ := src.Node(ctx, "demo", "root"); dataText(n.Data, 100) != `{"b":2}` {
					t.Errorf("root = %+v", n)
				}
			}},
		{name: "delete node", deletes: true, tool: ProposeDeleteNode, args: `{"nodeKey":"fetch-api","reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.Action, _ datasource.ApplyResult) {
				edges, _ := src.Edges(ctx, "demo", "")
				if len(edges) != 3 {
					t.Errorf("%d edges left, want 3", len(edges))
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src, err := demo.New()
			if err != nil {
				t.Fatal(err)
			}
			before, beforeOrdered := snapshotJSON(t, src), orderedJSON(t, src)
			a, _, err := ParseProposal(ctx, src, "demo", tc.tool, tc.args)
			if err != nil {
				t.Fatalf("ParseProposal: %v", err)
			}
			// Stored and read back, as a thread keeps it.
			b, _ := json.Marshal(a)
			var stored datasource.Action
			if err := json.Unmarshal(b, &stored); err != nil {
				t.Fatal(err)
			}
			planned := datasource.AssignKeys(stored, "op1")
			rec := undo.NewRecorder()
			res, err := datasource.Apply(ctx, src, "demo", planned, datasource.Expect(stored), datasource.Record(rec))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			tc.check(t, src, stored, res)
			rev, err := rec.Reversal()
			if err != nil {
				t.Fatal(err)
			}
			if err := undo.Belongs(rev, planned); err != nil {
				t.Fatal(err)
			}
			if _, err := undo.Apply(ctx, src, "demo", rev); err != nil {
				t.Fatalf("undo: %v", err)
			}
			if after := snapshotJSON(t, src); after != before {
				t.Errorf("undo did not put the graph back:\nbefore %s\nafter  %s", before, after)
			}
			if after := orderedJSON(t, src); !tc.deletes && after != beforeOrdered {
				t.Errorf("undo changed the order of the graph's nodes or edges:\nbefore %s\nafter  %s", beforeOrdered, after)
			}
		})
	}
}

// snapshotJSON is the demo graph's nodes and edges, each sorted by key: undo puts a
// deleted node or edge back at the end of the store's list, and the order of a
// graph's nodes carries no meaning. The slices are copied before sorting, as the
// store may hand out its own.
func snapshotJSON(t *testing.T, src datasource.Source) string {
	t.Helper()
	s, err := datasource.LoadSnapshot(context.Background(), src, "demo")
	if err != nil {
		t.Fatal(err)
	}
	s.Nodes = slices.Clone(s.Nodes)
	slices.SortFunc(s.Nodes, func(a, b datasource.Node) int { return strings.Compare(a.Key, b.Key) })
	s.Edges = slices.Clone(s.Edges)
	slices.SortFunc(s.Edges, func(a, b datasource.Edge) int { return strings.Compare(a.Key, b.Key) })
	b, _ := json.Marshal(struct {
		N []datasource.Node
		E []datasource.Edge
	}{s.Nodes, s.Edges})
	return string(b)
}

// TestServerProposalTypesRefused: what cannot be applied from here is refused when
// proposed, with what to do instead.
func TestServerProposalTypesRefused(t *testing.T) {
	t.Parallel()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, tool, args, errHas string }{
		{"type create over an existing one", ProposeConfigureNodeType, `{"mode":"create","typeKey":"api-call","displayName":"X","process":"1","reason":"r"}`, "already exists"},
		{"type create with patches", ProposeConfigureNodeType, `{"mode":"create","displayName":"X","processPatches":[{"search":"a","replace":"b"}],"reason":"r"}`, "no code to patch"},
		{"type bad handles", ProposeConfigureNodeType, `{"mode":"update","typeKey":"api-call","displayName":"API Call","handles":{"L":{"position":"separate","point":[{"id":"0","type":"in","accept":"any"}]},"T":{"position":"separate","point":[{"id":"0","type":"in","accept":"any"}]}},"reason":"r"}`, "distinct id"},
		{"type unchanged", ProposeConfigureNodeType, `{"mode":"update","typeKey":"api-call","displayName":"API Call","reason":"r"}`, "changes nothing"},
		{"patch not found", ProposeConfigureNodeType, `{"mode":"update","typeKey":"api-call","displayName":"API Call","processPatches":[{"search":"nope","replace":""}],"reason":"r"}`, "not in the current code"},
		{"update without typeKey", ProposeConfigureNodeType, `{"mode":"update","displayName":"API Call","process":"x","reason":"r"}`, "needs the typeKey"},
		{"builtin", ProposeConfigureNodeType, `{"mode":"update","typeKey":"html","displayName":"html","process":"x","reason":"r"}`, "built-in"},
		{"patch missing replace", ProposeConfigureNodeType, `{"mode":"update","typeKey":"api-call","displayName":"API Call","processPatches":[{"search":"a"}],"reason":"r"}`, `missing required argument "processPatches[0].replace"`},
		{"edge to other sheet", ProposeCreateNodeWithEdges, `{"typeKey":"log-node","sheet":"1","edges":[{"direction":"out","handleId":"0","targetNodeKey":"return","targetHandleId":"0"}],"reason":"r"}`, "same sheet"},
		{"edge bad direction", ProposeCreateNodeWithEdges, `{"typeKey":"log-node","edges":[{"direction":"up","handleId":"0","targetNodeKey":"root","targetHandleId":"0"}],"reason":"r"}`, "must be one of in, out"},
		{"layout unknown node", ProposeReorganizeLayout, `{"nodeKeys":["nope"],"reason":"r"}`, `"nope"`},
		{"layout empty", ProposeReorganizeLayout, `{"nodeKeys":[],"reason":"r"}`, "between 1 and"},
		{"layout strategy", ProposeReorganizeLayout, `{"nodeKeys":["root"],"strategy":"grid","reason":"r"}`, "must be one of"},
		{"update html on a non-html node", ProposeUpdateNode, `{"nodeKey":"root","updates":{"html":"<p>"},"reason":"r"}`, "html nodes only"},
	}
	for _, tc := range tests {
		_, _, err := ParseProposal(context.Background(), src, "demo", tc.tool, tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.errHas)
		}
	}
}

// orderedJSON is the demo graph's nodes and edges in the store's order.
func orderedJSON(t *testing.T, src datasource.Source) string {
	t.Helper()
	s, err := datasource.LoadSnapshot(context.Background(), src, "demo")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(struct {
		N []datasource.Node
		E []datasource.Edge
	}{s.Nodes, s.Edges})
	return string(b)
}
