package datasource

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestActionJSONRoundTrip: every action type is stored and read back as it was
// (each payload decodes into its own field), and ActionTypes lists every type, so a
// [policy] setting accepts each of them.
func TestActionJSONRoundTrip(t *testing.T) {
	x, y := 10.0, 20.0
	actions := []Action{
		{Type: CreateNodeAction, CreateNode: &CreateNodePayload{NodeKey: "n", TypeKey: "starter", Sheet: "0", PosX: 1, PosY: 2}},
		{Type: UpdateNodeAction, UpdateNode: &UpdateNodePayload{NodeKey: "n", Changes: map[string]any{"name": "x"}}},
		{Type: MoveNodeAction, MoveNode: &MoveNodePayload{NodeKey: "n", PosX: 3, PosY: 4}},
		{Type: DeleteNodeAction, DeleteNode: &DeleteNodePayload{NodeKey: "n"}},
		{Type: CreateEdgeAction, CreateEdge: &CreateEdgePayload{SourceKey: "a", SourceHandle: "0", TargetKey: "b", TargetHandle: "0"}},
		{Type: DeleteEdgeAction, DeleteEdge: &DeleteEdgePayload{EdgeKey: "e"}},
		{Type: BatchAction, Batch: &BatchPayload{Actions: []Action{{Type: MoveNodeAction, MoveNode: &MoveNodePayload{NodeKey: "n"}}}}},
		{Type: CreateNodeWithEdgesAction, CreateNodeWithEdges: &CreateNodeWithEdgesPayload{TypeKey: "t", PosX: &x, PosY: &y}},
		{Type: ConfigureNodeTypeAction, ConfigureNodeType: &ConfigureNodeTypePayload{Mode: "update", TypeKey: "t", DisplayName: "T"}},
		{Type: ReorganizeLayoutAction, ReorganizeLayout: &ReorganizeLayoutPayload{NodeKeys: []string{"n"}, Strategy: "tree"}},
		{Type: CreateGraphAction, CreateGraph: &CreateGraphPayload{Name: "Invoices", Type: "graph"}},
	}
	var types []ActionType
	for _, a := range actions {
		types = append(types, a.Type)
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatalf("%s: %v", a.Type, err)
		}
		var back Action
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%s: %v", a.Type, err)
		}
		if !reflect.DeepEqual(back, a) {
			t.Errorf("%s: read back %+v, stored %+v", a.Type, back, a)
		}
	}
	if !slices.Equal(types, ActionTypes) {
		t.Errorf("ActionTypes = %v, want every type: %v", ActionTypes, types)
	}
}
