package undo_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// TestUndoCreatedGraph: the apply of a create_graph records the removal of the
// graph it made; the reversal parses, belongs to the action, is checked and applied
// through the source (a new graph file removed), and is then found done. A plan made
// before the apply names the key only: undo from it leaves the graph, saying why.
func TestUndoCreatedGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := graphFile(t)
	a := datasource.AssignKeys(datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}, "op1")
	if a.CreateGraph.Key != "ai_op1" {
		t.Fatalf("assigned key %q", a.CreateGraph.Key)
	}
	planned, err := undo.Plan(ctx, src, "home", a)
	if err != nil || len(planned.Steps) != 1 || planned.Steps[0].Op != undo.RemoveGraph {
		t.Fatalf("plan %+v %v", planned, err)
	}
	rec := undo.NewRecorder()
	res, err := datasource.Apply(ctx, src, "home", a, datasource.Record(rec))
	if err != nil {
		t.Fatal(err)
	}
	rev, err := rec.Reversal()
	if err != nil || len(rev.Steps) != 1 || rev.Steps[0].Graph == nil || rev.Steps[0].Graph.File != res.Graph.File {
		t.Fatalf("recorded %+v %v", rev, err)
	}
	b, _ := json.Marshal(rev)
	if _, err := undo.Parse(b); err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := undo.Belongs(rev, a); err != nil {
		t.Errorf("belongs: %v", err)
	}
	other := datasource.AssignKeys(datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}, "op2")
	if err := undo.Belongs(rev, other); err == nil {
		t.Error("a reversal removing another graph belongs")
	}
	// A record (an imported thread's) is tied to the action by key, name and type:
	// an action with no key assigned, or one asking for another graph, made
	// nothing it may remove.
	unkeyed := a
	unkeyed.CreateGraph = &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}
	renamed := a
	renamed.CreateGraph = &datasource.CreateGraphPayload{Name: "Other", Type: "graph", Key: a.CreateGraph.Key}
	for _, b := range []datasource.Action{unkeyed, renamed} {
		if err := undo.Belongs(rev, b); err == nil {
			t.Errorf("the reversal belongs to %+v", *b.CreateGraph)
		}
	}

	// From the plan alone (what was made not recorded): left, with why.
	if _, err := undo.Check(ctx, src, "home", planned, false); err == nil || !strings.Contains(err.Error(), "not recorded") {
		t.Errorf("check of the planned reversal: %v", err)
	}
	rep, err := undo.Check(ctx, src, "home", rev, false)
	if err != nil || len(rep.Reversed) != 1 {
		t.Fatalf("check: %+v %v", rep, err)
	}
	if _, err := os.Stat(res.Graph.File); err != nil {
		t.Fatal("the check removed the file")
	}
	if _, err := undo.Apply(ctx, src, "home", rep.Plan); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(res.Graph.File); !os.IsNotExist(err) {
		t.Errorf("the graph file is still there: %v", err)
	}
	if rep, err := undo.Check(ctx, src, "home", rev, false); err != nil || len(rep.Already) != 1 {
		t.Errorf("check after the undo: %+v %v", rep, err)
	}
}

// TestUndoGraphKeyChosenBySource: a graph whose source chose its key (a Nodius
// server) belongs to the action whose assigned key it records, not to another.
func TestUndoGraphKeyChosenBySource(t *testing.T) {
	t.Parallel()
	a := datasource.AssignKeys(datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}, "op1")
	other := datasource.AssignKeys(datasource.Action{Type: datasource.CreateGraphAction,
		CreateGraph: &datasource.CreateGraphPayload{Name: "Invoices", Type: "graph"}}, "op2")
	for _, tc := range []struct {
		assigned string
		belongs  bool
	}{{a.CreateGraph.Key, true}, {other.CreateGraph.Key, false}, {"", false}} {
		g := datasource.CreatedGraph{Key: "srv123", AssignedKey: tc.assigned, Name: "Invoices", Type: "graph"}
		rev := undo.Reversal{Steps: []undo.Step{{Op: undo.RemoveGraph, Key: "srv123", Graph: &g}}}
		if err := undo.Belongs(rev, a); (err == nil) != tc.belongs {
			t.Errorf("assigned %q: belongs %v, want %v", tc.assigned, err, tc.belongs)
		}
	}
}
