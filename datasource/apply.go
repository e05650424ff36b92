package datasource

import (
	"context"
	"fmt"
)

// Apply carries out an approved action on src: through ActionApplier when the source
// has it, else change by change through Mutable. A source that is neither gives
// ErrReadOnly. The result lists the keys created.
func Apply(ctx context.Context, src Source, graphKey string, a Action) (ApplyResult, error) {
	if ap, ok := src.(ActionApplier); ok {
		return ap.ApplyAction(ctx, graphKey, a)
	}
	m, ok := src.(Mutable)
	if !ok {
		return ApplyResult{}, ErrReadOnly
	}
	res := ApplyResult{Applied: true, Created: Created{Nodes: []string{}, Edges: []string{}}}
	if err := applyOne(ctx, m, graphKey, a, &res); err != nil {
		return ApplyResult{}, err
	}
	return res, nil
}

func applyOne(ctx context.Context, m Mutable, graphKey string, a Action, res *ApplyResult) error {
	switch a.Type {
	case CreateNodeAction:
		p := a.CreateNode
		n, err := m.CreateNode(ctx, graphKey, NodeFromPayload(*p))
		if err != nil {
			return err
		}
		res.Created.Nodes = append(res.Created.Nodes, n.Key)
	case UpdateNodeAction:
		_, err := m.UpdateNode(ctx, graphKey, a.UpdateNode.NodeKey, a.UpdateNode.Changes)
		return err
	case MoveNodeAction:
		return m.MoveNode(ctx, graphKey, a.MoveNode.NodeKey, a.MoveNode.PosX, a.MoveNode.PosY)
	case DeleteNodeAction:
		_, err := m.DeleteNode(ctx, graphKey, a.DeleteNode.NodeKey)
		return err
	case CreateEdgeAction:
		p := a.CreateEdge
		e, err := m.CreateEdge(ctx, graphKey, Edge{
			Key: p.EdgeKey, Sheet: p.Sheet, Source: p.SourceKey, SourceHandle: p.SourceHandle,
			Target: p.TargetKey, TargetHandle: p.TargetHandle, Label: p.Label,
		})
		if err != nil {
			return err
		}
		res.Created.Edges = append(res.Created.Edges, e.Key)
	case DeleteEdgeAction:
		return m.DeleteEdge(ctx, graphKey, a.DeleteEdge.EdgeKey)
	case BatchAction:
		for i, sub := range a.Batch.Actions {
			if err := applyOne(ctx, m, graphKey, sub, res); err != nil {
				return fmt.Errorf("batch step %d (%s): %w", i+1, sub.Type, err)
			}
		}
	default:
		return fmt.Errorf("unknown action type %q", a.Type)
	}
	return nil
}

// NodeFromPayload builds the node a create_node action describes (key may be empty).
func NodeFromPayload(p CreateNodePayload) Node {
	return Node{
		Key: p.NodeKey, Type: p.TypeKey, Sheet: p.Sheet, Process: p.Process,
		Handles: p.Handles, Data: p.Data, PosX: p.PosX, PosY: p.PosY,
		Size: Size{Width: 200, Height: 100},
	}
}
