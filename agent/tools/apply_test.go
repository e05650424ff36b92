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
				{"type":"create_edge","sheet":"0","sourceKey":"entry-form","sourceHandle":"0:0","targetKey":"root","targetHandle":"0:1"}],"reason":"r"}`},
		// The common mistake: the entry form aimed at the starter's "0", its output.
		{name: "edge into the starter's output", tool: ProposeBatch, args: `{"actions":[
				{"type":"delete_edge","edgeKey":"e1"},
				{"type":"create_edge","sheet":"0","sourceKey":"entry-form","sourceHandle":"0","targetKey":"root","targetHandle":"0"}],"reason":"r"}`,
			parseErr: `target handle "0" of node "root" is an output point, but the target of an edge must be an input point; its inputs are: "1" (side 0, accepts entryType)`},
		{name: "edge custom to builtin", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"fetch-api","sourceHandle":"1","targetKey":"display-html","targetHandle":"1","reason":"r"}`},
		{name: "create starter, default handles", tool: ProposeCreateNode, args: `{"nodeKey":"s2","typeKey":"starter","sheet":"0","posX":0,"posY":0,"reason":"r"}`},
		{name: "batch new starter and return joined", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","nodeKey":"s2","typeKey":"starter","sheet":"1","posX":0,"posY":0},
				{"type":"create_node","nodeKey":"r2","typeKey":"return","sheet":"1","posX":300,"posY":0},
				{"type":"create_node","nodeKey":"f2","typeKey":"entryType","sheet":"1","posX":-300,"posY":0},
				{"type":"create_edge","sheet":"1","sourceKey":"f2","sourceHandle":"0","targetKey":"s2","targetHandle":"1"},
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
					for _, sh := range []string{"0", "1", "R:0", "0:0"} {
						for _, th := range []string{"0", "L:0", "0:1"} {
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
