package arango_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/internal/fault"
)

func openFake(t *testing.T, f *arangotest.Server, ws string) *arango.Source {
	t.Helper()
	cfg, err := arango.ParseURL(f.URL(ws))
	if err != nil {
		t.Fatal(err)
	}
	src, err := arango.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// TestCreateGraphInArango: an approved create_graph inserts what the Nodius
// server's /api/graph/create does, in the real schema (nodius_graphs with
// sheetsList, nodes {graphKey}-root and -return without code, the HTML class in
// nodius_html_class linking both ways); undo removes it only while unchanged.
func TestCreateGraphInArango(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := arangotest.New(t)
	src := openFake(t, f, "ws1")
	res, err := datasource.Apply(ctx, src, "home", datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph", Description: "bills", Key: "inv"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Graph == nil || res.Graph.Key != "inv" || res.Graph.Digest == "" {
		t.Fatalf("result %+v", res)
	}
	g := f.Doc(arangotest.Graphs, "inv")
	if g["workspace"] != "ws1" || g["name"] != "Invoices" || g["category"] != "default" || g["sheetsList"].(map[string]any)["0"] != "main" {
		t.Errorf("graph document %v", g)
	}
	root, ret := f.Doc(arangotest.Nodes, "inv-root"), f.Doc(arangotest.Nodes, "inv-return")
	if root["type"] != "starter" || root["graphKey"] != "inv" || ret["type"] != "return" || ret["posX"] != 300.0 {
		t.Errorf("nodes %v %v", root, ret)
	}
	if _, ok := root["process"]; ok {
		t.Errorf("a new node carries code: %v", root)
	}
	// The source reads it as any graph of the workspace.
	if nodes, err := src.Nodes(ctx, "inv", ""); err != nil || len(nodes) != 2 {
		t.Errorf("nodes read back: %v %v", nodes, err)
	}

	// Changed since: left.
	f.Update(arangotest.Nodes, "inv-return", map[string]any{"posX": 500})
	var changed *datasource.GraphChangedError
	if err := src.DeleteCreatedGraph(ctx, *res.Graph, false); !errors.As(err, &changed) {
		t.Fatalf("delete of a changed graph: %v", err)
	}
	if f.Doc(arangotest.Graphs, "inv") == nil {
		t.Fatal("a changed graph was deleted")
	}

	// An HTML class, unchanged: removed whole.
	h, err := src.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "Page", Type: "htmlClass", Description: "home page"}, "pg")
	if err != nil {
		t.Fatal(err)
	}
	class := f.Doc(arangotest.HTMLClasses, "html_pg")
	if class["graphKeyLinked"] != "pg" || class["htmlNodeKey"] != "pg-root" || class["description"] != "home page" ||
		f.Doc(arangotest.Graphs, "pg")["htmlKeyLinked"] != "html_pg" || f.Doc(arangotest.Nodes, "pg-root")["type"] != "html" {
		t.Errorf("HTML class %v", class)
	}
	if err := src.DeleteCreatedGraph(ctx, h, true); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if err := src.DeleteCreatedGraph(ctx, h, false); err != nil {
		t.Fatal(err)
	}
	if f.Doc(arangotest.Graphs, "pg") != nil || f.Doc(arangotest.Nodes, "pg-root") != nil || f.Doc(arangotest.HTMLClasses, "html_pg") != nil {
		t.Error("undo left documents of the HTML class")
	}
	if err := src.DeleteCreatedGraph(ctx, h, false); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	// Another workspace never sees, nor removes, it.
	other := openFake(t, f, "ws2")
	if err := other.DeleteCreatedGraph(ctx, *res.Graph, false); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("delete from another workspace: %v", err)
	}
}

// TestCreateGraphRefusedWhileAServerRuns: nothing is written while a Nodius server
// runs on the database, and the error says what to do.
func TestCreateGraphRefusedWhileAServerRuns(t *testing.T) {
	t.Parallel()
	f := arangotest.New(t)
	f.Insert(arangotest.Cluster, map[string]any{"_key": "s1", "host": "10.0.0.5", "port": 8426, "status": "online",
		"lastRefresh": float64(time.Now().UnixMilli())})
	src := openFake(t, f, "ws1")
	_, err := src.CreateGraph(context.Background(), datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}, "inv")
	fe, ok := fault.As(err)
	if !ok || fe.Code != fault.Config || !strings.Contains(fe.Message, "arango_ignore_server") || !strings.Contains(fe.Message, "10.0.0.5") {
		t.Fatalf("error %v", err)
	}
	if len(f.Docs(arangotest.Graphs)) != 0 || len(f.Docs(arangotest.Nodes)) != 0 {
		t.Error("documents were written while a server runs")
	}
}

// TestCreatedGraphUndoOnlyWhileUnchanged: the undo of a created graph leaves it,
// and says why, when it got an edge or a node since, or while a Nodius server
// runs on the database (the dry run, which writes nothing, still answers).
func TestCreatedGraphUndoOnlyWhileUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name     string
		change   func(f *arangotest.Server)
		dryRunOK bool // the dry run passes (else it reports the change)
		want     func(error) bool
	}{
		{"edge added", func(f *arangotest.Server) {
			f.Insert(arangotest.Edges, map[string]any{"_key": "inv-e1", "graphKey": "inv", "sheet": "0",
				"_from": "nodius_nodes/inv-root", "_to": "nodius_nodes/inv-return", "source": "root", "target": "return"})
		}, false, isChanged},
		{"node added", func(f *arangotest.Server) {
			f.Insert(arangotest.Nodes, map[string]any{"_key": "inv-extra", "graphKey": "inv", "type": "starter", "sheet": "0"})
		}, false, isChanged},
		{"server running", func(f *arangotest.Server) {
			f.Insert(arangotest.Cluster, map[string]any{"_key": "s1", "host": "10.0.0.5", "port": 8426, "status": "online",
				"lastRefresh": float64(time.Now().UnixMilli())})
		}, true, func(err error) bool { fe, ok := fault.As(err); return ok && fe.Code == fault.Config }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := arangotest.New(t)
			src := openFake(t, f, "ws1")
			g, err := src.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}, "inv")
			if err != nil {
				t.Fatal(err)
			}
			tc.change(f)
			if err := src.DeleteCreatedGraph(ctx, g, true); tc.dryRunOK && err != nil || !tc.dryRunOK && !isChanged(err) {
				t.Errorf("dry run: %v", err)
			}
			if err := src.DeleteCreatedGraph(ctx, g, false); !tc.want(err) {
				t.Errorf("undo: %v", err)
			}
			if f.Doc(arangotest.Graphs, "inv") == nil || f.Doc(arangotest.Nodes, "inv-root") == nil {
				t.Error("the graph was removed")
			}
		})
	}
}

func isChanged(err error) bool {
	var changed *datasource.GraphChangedError
	return errors.As(err, &changed)
}
