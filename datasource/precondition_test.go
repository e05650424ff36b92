package datasource_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// viaPrecondition applies as a server honouring "expect" would: the expectation
// travels as a Precondition in JSON and is checked against the graph, then the
// action is applied without it. TestApplyExpectShown runs its table through it, so
// the precondition says what CheckShown checks.
type viaPrecondition struct{ *memgraph.Store }

func (s viaPrecondition) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	o := datasource.ApplyOptionsOf(opts)
	if o.Expect != nil {
		wire, err := json.Marshal(datasource.PreconditionOf(*o.Expect))
		if err != nil {
			return datasource.ApplyResult{}, err
		}
		var pre datasource.Precondition
		if err := json.Unmarshal(wire, &pre); err != nil {
			return datasource.ApplyResult{}, err
		}
		snap, err := s.Snapshot(ctx, graphKey)
		if err != nil {
			return datasource.ApplyResult{}, err
		}
		if err := pre.Check(datasource.SnapshotLookup(snap)); err != nil {
			return datasource.ApplyResult{}, &datasource.ConflictError{Err: err}
		}
	}
	return s.Store.ApplyAction(ctx, graphKey, a)
}

// The precondition's JSON is the shape documented for the server: local keys,
// edges in the graph file's format, field paths with their shown values.
func TestPreconditionShape(t *testing.T) {
	t.Parallel()
	e2 := datasource.Edge{Key: "e2", Source: "root", SourceHandle: "0", Target: "fetch-api", TargetHandle: "0", Sheet: "0"}
	a := batch(
		deleteNode("fetch-api", []datasource.Edge{e2}),
		update("root", map[string]any{"data.url": "u"}, map[string]any{"data.url": nil}),
		datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e7", Edge: &datasource.Edge{
			Key: "e7", Source: "a", SourceHandle: "1", Target: "b", TargetHandle: "0"}}},
		datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "html", Sheet: "0"}},
	)
	b, err := json.Marshal(datasource.PreconditionOf(a))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"nodeEdges":{"fetch-api":[{"_key":"e2","sheet":"0","source":"root","sourceHandle":"0","target":"fetch-api","targetHandle":"0"`,
		`"fields":{"root":{"data.url":null}}`,
		`"edges":{"e7":{"_key":"e7"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("precondition %s\nlacks %s", b, want)
		}
	}
	create := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1"}}
	if p := datasource.PreconditionOf(create); !p.Empty() {
		t.Errorf("a creation depends on %+v", p)
	}
	// A deletion of a node shown without edges expects none.
	if b, _ := json.Marshal(datasource.PreconditionOf(deleteNode("lonely", nil))); string(b) != `{"nodeEdges":{"lonely":[]}}` {
		t.Errorf("lonely node: %s", b)
	}
	store, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	snap, _ := store.Snapshot(context.Background(), demo.GraphKey)
	if err := datasource.PreconditionOf(a).Check(datasource.SnapshotLookup(snap)); err == nil || !strings.Contains(err.Error(), "edge e7 is gone") {
		t.Errorf("check: %v", err)
	}
}
