package datasource_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// mutableOnly hides the store's ApplyAction, so Apply goes change by change.
type mutableOnly struct{ datasource.Mutable }

func TestApplyThroughMutable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	src := mutableOnly{store}
	nodes, err := src.Nodes(ctx, demo.GraphKey, "")
	if err != nil || len(nodes) < 2 {
		t.Fatalf("demo nodes: %d, %v", len(nodes), err)
	}
	a := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
		{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "html", Sheet: "0"}},
		{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{EdgeKey: "e-n1", SourceKey: "n1", TargetKey: "n1"}},
		{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "n1", PosX: 7, PosY: 8}},
	}}}
	res, err := datasource.Apply(ctx, src, demo.GraphKey, a)
	if err != nil {
		t.Fatal(err)
	}
	want := datasource.Created{Nodes: []string{"n1"}, Edges: []string{"e-n1"}}
	if !res.Applied || !reflect.DeepEqual(res.Created, want) {
		t.Errorf("result %+v, want created %+v", res, want)
	}
	if n, err := src.Node(ctx, demo.GraphKey, "n1"); err != nil || n.PosX != 7 || n.PosY != 8 {
		t.Errorf("moved node: %+v, %v", n, err)
	}

	// Actions come from the model and from stored threads: a missing payload or
	// batches nested without end are errors, never a panic.
	for _, bad := range []datasource.Action{
		{Type: datasource.CreateNodeAction},
		{Type: datasource.DeleteEdgeAction},
		{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{{Type: datasource.UpdateNodeAction}}}},
	} {
		if _, err := datasource.Apply(ctx, src, demo.GraphKey, bad); err == nil || !strings.Contains(err.Error(), "has no payload") {
			t.Errorf("%s without payload: err = %v", bad.Type, err)
		}
	}
	deep := datasource.Action{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "n1"}}
	for range datasource.MaxBatchDepth + 1 {
		deep = datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{deep}}}
	}
	if _, err := datasource.Apply(ctx, src, demo.GraphKey, deep); err == nil || !strings.Contains(err.Error(), "nested") {
		t.Errorf("deep batch: err = %v", err)
	}
}
