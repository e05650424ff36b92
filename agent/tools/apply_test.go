package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// TestParsedProposalsApply checks that what ParseProposal produces is accepted by the
// real in-memory store and does what the proposal said.
func TestParsedProposalsApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name, tool, args string
		check            func(t *testing.T, src datasource.Source, res datasource.ApplyResult)
	}{
		{name: "batch insert node", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","payload":{"nodeKey":"sorter","typeKey":"transform","sheet":"main","posX":900,"posY":0,"data":{"by":"pts","n":1.50}}},
				{"type":"delete_edge","payload":{"edgeKey":"e5"}},
				{"type":"create_edge","payload":{"sourceKey":"filter-active","sourceHandle":"0","targetKey":"sorter","targetHandle":"0"}},
				{"type":"create_edge","payload":{"sourceKey":"sorter","sourceHandle":"R:0","targetKey":"display-html","targetHandle":"0"}}],"reason":"sort"}`,
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
			args: `{"nodeKey":"fetch-api","changes":{"data.season":2025,"handles":{"L":{"point":[{"id":"0","type":"in"}]},"R":{"point":[{"id":"0","type":"out"},{"id":"1","type":"out"},{"id":"2","type":"out","accept":"json"}]}}},"reason":"r"}`,
			check: func(t *testing.T, src datasource.Source, _ datasource.ApplyResult) {
				n, _ := src.Node(ctx, "demo", "fetch-api")
				if got := HandlesSummary(n.Handles); got != "L:0:in, R:0:out, R:1:out, R:2:out(json)" {
					t.Errorf("handles = %q", got)
				}
				if d, _ := n.Data.(map[string]any); d == nil || strings.TrimSpace(toString(d["season"])) != "2025" {
					t.Errorf("data = %v", n.Data)
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
			res, err := datasource.Apply(ctx, src, "demo", a)
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
	for _, c := range [][2]string{{ReadGraphOverview, `{}`}, {SearchNodes, `{"query":"fetch"}`}, {ExploreNeighborhood, `{"nodeKey":"root","maxDepth":2}`}} {
		if _, err := x.Run(context.Background(), c[0], c[1]); err != nil {
			t.Errorf("%s: %v", c[0], err)
		}
	}
	if _, _, err := ParseProposal(context.Background(), src, "demo", ProposeDeleteEdge, `{"edgeKey":"e1","reason":"r"}`); err != nil {
		t.Errorf("ParseProposal: %v", err)
	}
}
