package demo_test

import (
	"context"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

func TestDemoGraphShape(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	var _ datasource.Mutable = src
	var _ datasource.Describer = src
	if got := src.Describe(); got != demo.Description {
		t.Errorf("Describe = %q", got)
	}
	snap, err := src.Snapshot(ctx, demo.GraphKey)
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Nodes) != 9 || len(snap.Edges) != 6 || len(snap.Configs) != 4 || len(snap.Graph.Sheets) != 2 {
		t.Fatalf("demo has %d nodes, %d edges, %d configs, %d sheets; want 9, 6, 4, 2",
			len(snap.Nodes), len(snap.Edges), len(snap.Configs), len(snap.Graph.Sheets))
	}
	wantEdges := map[string]string{
		"entry-form>root": "", "root>fetch-api": "", "fetch-api>filter-active": "success",
		"fetch-api>error-handler": "error", "filter-active>display-html": "", "display-html>return": "",
	}
	for _, e := range snap.Edges {
		label, ok := wantEdges[e.Source+">"+e.Target]
		if !ok || label != e.Label {
			t.Errorf("unexpected edge %s: %s -> %s (%q)", e.Key, e.Source, e.Target, e.Label)
		}
	}
	sheet1, err := src.Nodes(ctx, demo.GraphKey, "data-processing")
	if err != nil {
		t.Fatal(err)
	}
	if len(sheet1) != 2 || sheet1[0].Key != "sort-stats" || sheet1[1].Key != "disconnected-note" {
		t.Errorf("sheet 1 nodes = %v", sheet1)
	}
	types := map[string]bool{}
	for _, n := range snap.Nodes {
		types[n.Type] = true
		if n.Process == "" && (n.Type == "api-call" || n.Type == "filter" || n.Type == "transform" || n.Type == "log-node") {
			t.Errorf("node %s has no process", n.Key)
		}
	}
	for _, c := range snap.Configs {
		if !types[c.Key] {
			t.Errorf("config %s is not used by any node", c.Key)
		}
	}
	fetch, err := src.Node(ctx, demo.GraphKey, "fetch-api")
	if err != nil {
		t.Fatal(err)
	}
	if r := fetch.Handles["R"]; len(r.Point) != 2 || r.Point[1].ID != "1" || r.Point[1].Type != "out" {
		t.Errorf("fetch-api R handles = %+v", r)
	}
	hits, err := src.Search(ctx, demo.GraphKey, "fetch api", 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Errorf("search fetch api: %v", hits)
	}
}

func TestDemoChangesStayInProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.DeleteNode(ctx, demo.GraphKey, "fetch-api"); err != nil {
		t.Fatal(err)
	}
	b, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Node(ctx, demo.GraphKey, "fetch-api"); err != nil {
		t.Errorf("a fresh demo source lost fetch-api: %v", err)
	}
	res, err := datasource.Apply(ctx, a, demo.GraphKey, datasource.Action{Type: datasource.MoveNodeAction,
		MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: 1, PosY: 2}})
	if err != nil || res.Note == "" {
		t.Errorf("apply: %+v, %v", res, err)
	}
}
