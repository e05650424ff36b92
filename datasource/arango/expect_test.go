package arango_test

import (
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// Over ArangoDB, what the person approving was shown is checked with the fixed
// read queries inside the transaction that writes: an edge added to a node since
// its deletion was shown stops the deletion, and nothing is written.
func TestApplyExpectOverArango(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	edges, err := h.src.Edges(ctx, "g1", "")
	if err != nil {
		t.Fatal(err)
	}
	var shown []datasource.Edge
	for _, e := range edges {
		if e.Source == "transform" || e.Target == "transform" {
			shown = append(shown, e)
		}
	}
	del := datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: "transform", RemovedEdges: shown}}

	// Another client adds an edge to transform after the proposal was shown.
	h.fake.Insert(arangotest.Edges, map[string]any{"_key": "g1-e9", "graphKey": "g1", "sheet": "0",
		"_from": "nodius_nodes/g1-root", "_to": "nodius_nodes/g1-transform",
		"source": "root", "sourceHandle": "0", "target": "transform", "targetHandle": "0", "label": ""})
	before := len(h.fake.Queries())
	_, err = datasource.Apply(ctx, h.src, "g1", del, datasource.Expect(del))
	if !datasource.IsConflict(err) || !strings.Contains(err.Error(), "e9: root:0 → transform:0") {
		t.Fatalf("apply: %v", err)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-transform") == nil || h.fake.Doc(arangotest.Edges, "g1-e9") == nil {
		t.Fatal("the node or the edge added meanwhile was deleted")
	}
	for _, q := range h.fake.Queries()[before:] {
		if strings.Contains(q.Query, "REMOVE") || strings.Contains(q.Query, "UPDATE") || strings.Contains(q.Query, "INSERT") {
			t.Errorf("a write was sent although the check failed: %s", q.Query)
		}
	}

	// Shown as it is now, it applies.
	edges, _ = h.src.Edges(ctx, "g1", "")
	shown = shown[:0]
	for _, e := range edges {
		if e.Source == "transform" || e.Target == "transform" {
			shown = append(shown, e)
		}
	}
	del.DeleteNode.RemovedEdges = shown
	if _, err := datasource.Apply(ctx, h.src, "g1", del, datasource.Expect(del)); err != nil {
		t.Fatal(err)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-transform") != nil || h.fake.Doc(arangotest.Edges, "g1-e9") != nil {
		t.Fatal("the node and its three edges should be gone")
	}
	if unknown := h.fake.Unknown(); len(unknown) > 0 {
		t.Errorf("queries outside the fixed set: %q", unknown)
	}
}
