package memgraph_test

import (
	"context"
	"errors"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// TestCreateGraph: a store makes a workflow graph as the Nodius server does
// (Starter "root" at 0, Return "return" at 300, sheet "0" main) and an HTML class's
// graph (one html node); it removes one only while it is unchanged.
func TestCreateGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := memgraph.New([]datasource.Snapshot{{Graph: datasource.Graph{Key: "g", Workspace: "ws"}}}, memgraph.WithApplyNote("in memory"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := datasource.Apply(ctx, s, "home", datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph", Description: "bills", Key: "inv"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Graph == nil || res.Graph.Key != "inv" || res.Graph.Open != "--graph inv" || res.Note == "" {
		t.Fatalf("result %+v", res)
	}
	for key, want := range map[string]bool{"inv": true, "other": false} {
		a := datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph", Key: key}}
		if landed, err := datasource.Landed(ctx, s, "home", a); err != nil || landed != want {
			t.Errorf("landed %s = %v %v, want %v", key, landed, err, want)
		}
	}
	g, err := s.Graph(ctx, "inv")
	if err != nil || g.Name != "Invoices" || g.Description != "bills" || g.Workspace != "ws" || g.Sheets["0"] != "main" {
		t.Fatalf("graph %+v %v", g, err)
	}
	nodes, _ := s.Nodes(ctx, "inv", "")
	if len(nodes) != 2 || nodes[0].Type != "starter" || nodes[1].Type != "return" || nodes[1].PosX != 300 || nodes[0].Size.Width != 150 {
		t.Fatalf("nodes %+v", nodes)
	}
	if _, err := s.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "again", Type: "graph"}, "inv"); !datasource.IsConflict(err) {
		t.Errorf("a taken key: %v", err)
	}

	// Changed since: left, and said why.
	if err := s.MoveNode(ctx, "inv", "return", 400, 0); err != nil {
		t.Fatal(err)
	}
	var changed *datasource.GraphChangedError
	if err := s.DeleteCreatedGraph(ctx, *res.Graph, false); !errors.As(err, &changed) {
		t.Fatalf("delete of a changed graph: %v", err)
	}
	if _, err := s.Graph(ctx, "inv"); err != nil {
		t.Fatal("a changed graph was deleted")
	}

	// A record from elsewhere (an imported thread) claiming the source chose
	// the key of a graph it holds, unchanged or not, removes nothing.
	for _, digest := range []string{"v0", "v1", "v2"} {
		forged := datasource.CreatedGraph{Key: "g", AssignedKey: "ai_op1", Name: "G", Type: "graph", Digest: digest}
		if err := s.DeleteCreatedGraph(ctx, forged, false); !errors.As(err, &changed) {
			t.Errorf("forged record %+v: %v", forged, err)
		}
	}
	if _, err := s.Graph(ctx, "g"); err != nil {
		t.Fatal("a graph the store did not make was deleted")
	}

	// Unchanged: removed; removed again: not found.
	h, err := s.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "Page", Type: "htmlClass"}, "")
	if err != nil {
		t.Fatal(err)
	}
	hg, _ := s.Graph(ctx, h.Key)
	hn, _ := s.Nodes(ctx, h.Key, "")
	if hg.Name != "Page-graph" || len(hn) != 1 || hn[0].Type != "html" || hn[0].Size.Width != 640 || h.HTMLClass == "" {
		t.Fatalf("HTML class graph %+v %+v %+v", h, hg, hn)
	}
	if err := s.DeleteCreatedGraph(ctx, h, true); err != nil {
		t.Fatalf("dry run: %v", err)
	}
	if err := s.DeleteCreatedGraph(ctx, h, false); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteCreatedGraph(ctx, h, false); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if keys := s.GraphKeys(); len(keys) != 2 {
		t.Errorf("graphs %v, want g and inv", keys)
	}
}
