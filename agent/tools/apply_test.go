package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// TestParsedProposalsApply checks that what ParseProposal produces is accepted by the
// real in-memory store and does what the proposal said, with what it shows checked
// (datasource.Expect) as an approval does: a proposal made on the graph as it is
// always matches it.
func TestParsedProposalsApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name, tool, args string
		check            func(t *testing.T, src datasource.Source, res datasource.ApplyResult)
	}{
		{name: "batch insert node", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","nodeKey":"sorter","typeKey":"transform","sheet":"main","posX":900,"posY":0,"data":{"by":"pts","n":1.50}},
				{"type":"delete_edge","edgeKey":"e5"},
				{"type":"create_edge","sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"sorter","targetHandle":"0"},
				{"type":"create_edge","sheet":"0","sourceKey":"sorter","sourceHandle":"R:0","targetKey":"display-html","targetHandle":"0"}],"reason":"sort"}`,
			check: func(t *testing.T, src datasource.Source, res datasource.ApplyResult) {
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
			check: func(t *testing.T, src datasource.Source, _ datasource.ApplyResult) {
				n, _ := src.Node(ctx, "demo", "fetch-api")
				if n.Size.Width != 300 || n.Size.Height != 90 {
					t.Errorf("size = %+v", n.Size)
				}
				if d, _ := n.Data.(map[string]any); d == nil || strings.TrimSpace(toString(d["season"])) != "2025" {
					t.Errorf("data = %v", n.Data)
				}
			}},
		{name: "delete edge", tool: ProposeDeleteEdge, args: `{"edgeKey":"e4","reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.ApplyResult) {
				edges, _ := src.Edges(ctx, "demo", "")
				if len(edges) != 5 {
					t.Errorf("%d edges left, want 5", len(edges))
				}
			}},
		{name: "batch: edge into a node then its deletion, two updates of one field", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_edge","sheet":"0","sourceKey":"display-html","sourceHandle":"0","targetKey":"fetch-api","targetHandle":"0"},
				{"type":"update_node","nodeKey":"root","updates":{"data":{"a":1}}},
				{"type":"update_node","nodeKey":"root","updates":{"data":{"b":2}}},
				{"type":"delete_node","nodeKey":"fetch-api"}],"reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.ApplyResult) {
				if _, err := src.Node(ctx, "demo", "fetch-api"); err == nil {
					t.Error("fetch-api is still there")
				}
				if n, _ := src.Node(ctx, "demo", "root"); dataText(n.Data, 100) != `{"b":2}` {
					t.Errorf("root = %+v", n)
				}
			}},
		{name: "delete node", tool: ProposeDeleteNode, args: `{"nodeKey":"fetch-api","reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.ApplyResult) {
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
			a, _, err := ParseProposal(ctx, src, "demo", tc.tool, tc.args)
			if err != nil {
				t.Fatalf("ParseProposal: %v", err)
			}
			res, err := datasource.Apply(ctx, src, "demo", a, datasource.Expect(a))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			tc.check(t, src, res)
		})
	}
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	return strings.Trim(strings.TrimSpace(fmtAny(v)), `"`)
}

func fmtAny(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestPlainSource runs the tools on a Source without Snapshotter.
func TestPlainSource(t *testing.T) {
	t.Parallel()
	src := loadFakeDemo(t)
	x := NewExecutor(src, "demo")
	for _, c := range [][2]string{{ReadGraphOverview, `{"graphKey":"g"}`}, {SearchNodes, `{"query":"fetch"}`}, {ExploreNeighborhood, `{"nodeKey":"root","maxDepth":2}`}} {
		if _, err := x.Run(context.Background(), c[0], c[1]); err != nil {
			t.Errorf("%s: %v", c[0], err)
		}
	}
	if _, _, err := ParseProposal(context.Background(), src, "demo", ProposeDeleteEdge, `{"edgeKey":"e1","reason":"r"}`); err != nil {
		t.Errorf("ParseProposal: %v", err)
	}
}

// graphVariants are the demo graph as stored, and the same graph with every node
// stored without handles (each node then has its type's default handles). A
// proposal ParseProposal accepts must apply on both.
func graphVariants(t *testing.T) map[string]datasource.Snapshot {
	t.Helper()
	stored, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	bare, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	for i := range bare.Nodes {
		bare.Nodes[i].Handles = nil
	}
	return map[string]datasource.Snapshot{"stored handles": stored, "no handles": bare}
}

// parseThenApply parses a proposal against a fresh store holding snap and, when it is
// accepted, applies it to that store. It returns the parse error; an apply failure
// of an accepted proposal fails the test.
func parseThenApply(t *testing.T, snap datasource.Snapshot, tool, args string) error {
	t.Helper()
	ctx := context.Background()
	store, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := ParseProposal(ctx, store, "demo", tool, args)
	if err != nil {
		return err
	}
	if _, err := datasource.Apply(ctx, store, "demo", a); err != nil {
		t.Errorf("%s %s: accepted by ParseProposal, but Apply failed: %v", tool, args, err)
	}
	return nil
}

// TestAcceptedProposalsApply: what ParseProposal accepts, the store applies — on the
// demo graph and on the same graph stored without handles. parseErr marks proposals
// ParseProposal must refuse (so that they never reach Apply).
func TestAcceptedProposalsApply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args string
		parseErr         string
		only             string // a graph variant: the case runs on it alone
	}{
		{name: "edge starter to return", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"root","sourceHandle":"0","targetKey":"return","targetHandle":"0","reason":"r"}`},
		{name: "edge into the starter's input", tool: ProposeBatch, args: `{"actions":[
				{"type":"delete_edge","edgeKey":"e1"},
				{"type":"create_edge","sheet":"0","sourceKey":"entry-form","sourceHandle":"R:0","targetKey":"root","targetHandle":"L:0"}],"reason":"r"}`},
		{name: "edge custom to builtin", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"fetch-api","sourceHandle":"1","targetKey":"display-html","targetHandle":"0","reason":"r"}`},
		{name: "create starter, default handles", tool: ProposeCreateNode, args: `{"nodeKey":"s2","typeKey":"starter","sheet":"0","posX":0,"posY":0,"reason":"r"}`},
		{name: "batch new starter and return joined", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","nodeKey":"s2","typeKey":"starter","sheet":"1","posX":0,"posY":0},
				{"type":"create_node","nodeKey":"r2","typeKey":"return","sheet":"1","posX":300,"posY":0},
				{"type":"create_node","nodeKey":"f2","typeKey":"entryType","sheet":"1","posX":-300,"posY":0},
				{"type":"create_edge","sheet":"1","sourceKey":"f2","sourceHandle":"0","targetKey":"s2","targetHandle":"0"},
				{"type":"create_edge","sheet":"1","sourceKey":"s2","sourceHandle":"0","targetKey":"r2","targetHandle":"0"}],"reason":"r"}`},
		{name: "update data", tool: ProposeUpdateNode, args: `{"nodeKey":"return","updates":{"data":{"a":{"b":1}}},"reason":"r"}`},
		{name: "move", tool: ProposeMoveNode, args: `{"nodeKey":"root","posX":5,"posY":6,"reason":"r"}`},
		{name: "delete node", tool: ProposeDeleteNode, args: `{"nodeKey":"root","reason":"r"}`},
		{name: "delete edge", tool: ProposeDeleteEdge, args: `{"edgeKey":"e6","reason":"r"}`},
	}
	for vname, snap := range graphVariants(t) {
		for _, tc := range tests {
			if tc.only != "" && tc.only != vname {
				continue
			}
			t.Run(vname+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				err := parseThenApply(t, snap, tc.tool, tc.args)
				if tc.parseErr == "" && err != nil {
					t.Fatalf("ParseProposal: %v", err)
				}
				if tc.parseErr != "" && (err == nil || !strings.Contains(err.Error(), tc.parseErr)) {
					t.Fatalf("ParseProposal err = %v, want %q", err, tc.parseErr)
				}
			})
		}
	}
}

// TestAcceptedEdgesAndTypesApply sweeps create_edge over every pair of nodes and
// handle names, and update_node over every node and type: whatever ParseProposal
// accepts must apply.
func TestAcceptedEdgesAndTypesApply(t *testing.T) {
	t.Parallel()
	for vname, snap := range graphVariants(t) {
		t.Run(vname, func(t *testing.T) {
			t.Parallel()
			types := append([]string{}, datasource.BuiltinTypes...)
			for _, c := range snap.Configs {
				types = append(types, c.Key)
			}
			accepted := 0
			for _, src := range snap.Nodes {
				for _, typ := range types {
					args := fmt.Sprintf(`{"nodeKey":%q,"updates":{"data":{"t":%q}},"reason":"r"}`, src.Key, typ)
					if parseThenApply(t, snap, ProposeUpdateNode, args) == nil {
						accepted++
					}
				}
				for _, dst := range snap.Nodes {
					for _, sh := range []string{"0", "1", "R:0"} {
						for _, th := range []string{"0", "L:0"} {
							args := fmt.Sprintf(`{"sheet":"0","sourceKey":%q,"sourceHandle":%q,"targetKey":%q,"targetHandle":%q,"reason":"r"}`, src.Key, sh, dst.Key, th)
							if parseThenApply(t, snap, ProposeCreateEdge, args) == nil {
								accepted++
							}
						}
					}
				}
			}
			if accepted < 50 {
				t.Errorf("only %d proposals accepted: the sweep tests little", accepted)
			}
		})
	}
}
