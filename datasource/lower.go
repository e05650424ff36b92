package datasource

import "fmt"

// Lower turns a proposal of one of the server's own types into the single changes
// it comes down to on a source that stores nodes and edges, so that applying,
// checking what was shown, recording the undo and undoing go through the same
// steps as every other change:
//   - create_node_with_edges: a batch creating the node (key from newKey) and then
//     each of its edges;
//   - reorganize_layout with Moves: a batch of move_node;
//   - configure_node_type of mode "update" with a new Process and the type's Nodes:
//     a batch setting every node's process to the type's new code. Only a source
//     that keeps no node types (no ConfigChanges: the Nodius server source) applies
//     it this way; the others write the type itself (applyConfigure). The picture
//     of a proposal draws it this way, every node of the type changed.
//
// Anything else is returned as is, with false: it has no local form.
func Lower(a Action, newKey func() string) (Action, bool) {
	switch {
	case a.Type == CreateNodeWithEdgesAction && a.CreateNodeWithEdges != nil:
		p := a.CreateNodeWithEdges
		sheet := p.Sheet
		if sheet == "" {
			sheet = "0"
		}
		n := CreateNodePayload{NodeKey: newKey(), TypeKey: p.TypeKey, Sheet: sheet, Data: p.Data}
		if p.PosX != nil {
			n.PosX = *p.PosX
		}
		if p.PosY != nil {
			n.PosY = *p.PosY
		}
		steps := []Action{{Type: CreateNodeAction, CreateNode: &n}}
		for _, c := range p.Edges {
			e := CreateEdgePayload{SourceKey: n.NodeKey, SourceHandle: c.HandleID, TargetKey: c.TargetNodeKey,
				TargetHandle: c.TargetHandleID, Sheet: sheet, Label: c.Label}
			if c.Direction == "in" {
				e.SourceKey, e.SourceHandle, e.TargetKey, e.TargetHandle = c.TargetNodeKey, c.TargetHandleID, n.NodeKey, c.HandleID
			}
			steps = append(steps, Action{Type: CreateEdgeAction, CreateEdge: &e})
		}
		return Action{Type: BatchAction, Batch: &BatchPayload{Actions: steps}}, true
	case a.Type == ReorganizeLayoutAction && a.ReorganizeLayout != nil && len(a.ReorganizeLayout.Moves) > 0:
		steps := make([]Action, len(a.ReorganizeLayout.Moves))
		for i, m := range a.ReorganizeLayout.Moves {
			steps[i] = Action{Type: MoveNodeAction, MoveNode: &m}
		}
		return Action{Type: BatchAction, Batch: &BatchPayload{Actions: steps}}, true
	case a.Type == ConfigureNodeTypeAction && a.ConfigureNodeType != nil:
		c := a.ConfigureNodeType
		if c.Mode != "update" || c.Process == "" || len(c.Nodes) == 0 {
			return a, false
		}
		old := ""
		for _, d := range c.CodeDiffs {
			if d.Field == "process" {
				old = d.Original
			}
		}
		steps := make([]Action, len(c.Nodes))
		for i, k := range c.Nodes {
			steps[i] = Action{Type: UpdateNodeAction, UpdateNode: &UpdateNodePayload{NodeKey: k,
				Changes: map[string]any{"process": c.Process}, Before: map[string]any{"process": old}}}
		}
		return Action{Type: BatchAction, Batch: &BatchPayload{Actions: steps}}, true
	}
	return a, false
}

// notLocal explains why an action of the server's own types cannot be applied to a
// source that stores nodes and edges.
func notLocal(a Action) error {
	switch a.Type {
	case ConfigureNodeTypeAction:
		return fmt.Errorf("%s: this source does not keep node types, so only the code of an existing type that has nodes in this graph can be changed here", Describe(a))
	case ReorganizeLayoutAction:
		return fmt.Errorf("%s: the proposal carries no positions (the Nodius server computes them when it applies it)", Describe(a))
	case CreateGraphAction:
		return fmt.Errorf("%s: this source cannot create graphs (the Nodius server, ArangoDB, file: and the demo can)", Describe(a))
	}
	return fmt.Errorf("unknown action type %q", a.Type)
}
