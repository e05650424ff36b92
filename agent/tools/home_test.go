package tools

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

// TestHomeToolsParity checks home mode against the Nodius server's home tools
// (testdata/home-tools.json, recorded): an editor is offered exactly those names,
// each with the server's required set and every argument it takes.
func TestHomeToolsParity(t *testing.T) {
	if real, ours := checkParity(t, "testdata/home-tools.json", HomeToolDefs(RoleEditor, nil)); real != ours {
		t.Errorf("home mode offers %d tools, the server %d", ours, real)
	}
}

// TestHomeToolsByRole: a viewer lists but is offered no creation; the graph tools
// are not home tools, and create_graph denied by policy drops the proposals.
func TestHomeToolsByRole(t *testing.T) {
	names := func(role string, allowed func(datasource.ActionType) bool) []string {
		var n []string
		for _, d := range HomeToolDefs(role, allowed) {
			n = append(n, d.Name)
		}
		return n
	}
	if got := names(RoleViewer, nil); !slices.Equal(got, []string{ListUserGraphs, ListUserHTMLClasses, ListNodeConfigs}) {
		t.Errorf("viewer: %v", got)
	}
	deny := func(a datasource.ActionType) bool { return a != datasource.CreateGraphAction }
	if got := names(RoleEditor, deny); slices.Contains(got, ProposeCreateGraph) {
		t.Errorf("create_graph denied, still offered: %v", got)
	}
	for _, d := range ToolDefs(RoleEditor, nil) {
		if strings.HasPrefix(d.Name, "list_user") || d.Name == ProposeCreateGraph {
			t.Errorf("graph mode offers the home tool %s", d.Name)
		}
	}
}

func TestHomeExecutor(t *testing.T) {
	ctx := context.Background()
	x := NewExecutor(loadDemo(t), HomeGraphKey)
	out, err := x.Run(ctx, ListUserGraphs, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "demo") {
		t.Errorf("list_user_graphs does not list the demo graph:\n%s", out)
	}
	out, err = x.Run(ctx, ListNodeConfigs, `{}`)
	if err != nil || !strings.Contains(out, "starter") {
		t.Errorf("list_node_configs: %v\n%s", err, out)
	}
	if _, err := x.Run(ctx, ReadGraphOverview, `{"graphKey":"demo"}`); err == nil || !strings.Contains(err.Error(), "home mode") {
		t.Errorf("a graph tool in home mode: %v", err)
	}
	// A source that cannot list its graphs says so instead of failing.
	out, err = NewExecutor(loadFakeDemo(t), HomeGraphKey).Run(ctx, ListUserGraphs, `{}`)
	if err != nil || !strings.Contains(out, "cannot list") {
		t.Errorf("unlisting source: %v\n%s", err, out)
	}
}

func TestParseHomeProposal(t *testing.T) {
	ctx := context.Background()
	src := loadDemo(t)
	tests := []struct {
		name, tool, args, graph string
		want                    *datasource.CreateGraphPayload
		wantErr                 string
	}{
		{"graph", ProposeCreateGraph, `{"name":" Invoices ","description":"bills","reason":"asked"}`, HomeGraphKey,
			&datasource.CreateGraphPayload{Name: "Invoices", Type: "graph", Description: "bills"}, ""},
		{"html class", ProposeCreateHTMLClass, `{"name":"Landing","reason":"asked"}`, HomeGraphKey,
			&datasource.CreateGraphPayload{Name: "Landing", Type: "htmlClass"}, ""},
		{"no name", ProposeCreateGraph, `{"name":"  ","reason":"r"}`, HomeGraphKey, nil, "name"},
		{"no reason", ProposeCreateGraph, `{"name":"x"}`, HomeGraphKey, nil, "reason"},
		{"unknown argument", ProposeCreateGraph, `{"name":"x","reason":"r","nodes":[]}`, HomeGraphKey, nil, "nodes"},
		{"inside a graph", ProposeCreateGraph, `{"name":"x","reason":"r"}`, "demo", nil, "home mode only"},
		{"graph edit at home", ProposeDeleteNode, `{"nodeKey":"a","reason":"r"}`, HomeGraphKey, nil, "not available in home mode"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, _, err := ParseProposal(ctx, src, tc.graph, tc.tool, tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Type != datasource.CreateGraphAction || *a.CreateGraph != *tc.want {
				t.Errorf("got %+v %+v", a.Type, a.CreateGraph)
			}
		})
	}
}

// remoteHome is a source that lists its graphs and node types without reading a
// graph (as the server: source does); reading one fails the test.
type remoteHome struct {
	datasource.Source
	t *testing.T
}

func (r remoteHome) ListGraphs(context.Context) ([]datasource.Graph, error) {
	return []datasource.Graph{{Key: "zeta", Name: "Zeta"}, {Key: "alpha", Name: "Alpha", Description: "first"}}, nil
}

func (r remoteHome) ListGraphKeys(context.Context) ([]string, error) {
	return []string{"zeta", "alpha"}, nil
}

func (r remoteHome) WorkspaceConfigs(context.Context) ([]datasource.NodeConfig, error) {
	return []datasource.NodeConfig{{Key: "fetchApi", DisplayName: "Fetch API"}}, nil
}

func (r remoteHome) Graph(context.Context, string) (datasource.Graph, error) {
	r.t.Error("a graph was read to list the graphs")
	return datasource.Graph{}, datasource.ErrNotFound
}

func (r remoteHome) Configs(context.Context, string) ([]datasource.NodeConfig, error) {
	r.t.Error("a graph was read to list the node types")
	return nil, datasource.ErrNotFound
}

// TestHomeExecutorRemoteLists: a source that lists names and node types itself is
// asked for them, sorted by key, and no graph of it is read.
func TestHomeExecutorRemoteLists(t *testing.T) {
	ctx := context.Background()
	x := NewExecutor(remoteHome{Source: loadDemo(t), t: t}, HomeGraphKey)
	out, err := x.Run(ctx, ListUserGraphs, `{}`)
	if err != nil || !strings.Contains(out, "alpha,Alpha,first") || strings.Index(out, "alpha") > strings.Index(out, "zeta") {
		t.Errorf("list_user_graphs: %v\n%s", err, out)
	}
	out, err = x.Run(ctx, ListNodeConfigs, `{}`)
	if err != nil || !strings.Contains(out, "fetchApi") || !strings.Contains(out, "starter") {
		t.Errorf("list_node_configs: %v\n%s", err, out)
	}
}
