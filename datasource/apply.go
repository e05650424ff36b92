package datasource

import (
	"context"
	"fmt"
)

// Apply carries out an approved action on src: through ActionApplier when the source
// has it, else change by change through Mutable. A source that is neither gives
// ErrReadOnly. The result lists the keys created. opts (Expect, Record) are passed on
// to an ActionApplier; through Mutable, an expectation is checked right before the
// first change and a recorder reads the source right before each change. A
// create_graph makes a new graph through GraphCreator (see applyCreateGraph).
func Apply(ctx context.Context, src Source, graphKey string, a Action, opts ...ApplyOption) (ApplyResult, error) {
	if a.Type == CreateGraphAction {
		return applyCreateGraph(ctx, src, a, opts) // a new graph: graphKey is home mode's
	}
	if ap, ok := src.(ActionApplier); ok {
		return ap.ApplyAction(ctx, graphKey, a, opts...)
	}
	m, ok := src.(Mutable)
	if !ok {
		return ApplyResult{}, ErrReadOnly
	}
	o := ApplyOptionsOf(opts)
	if o.Expect != nil {
		if err := CheckShownNow(ctx, src, graphKey, *o.Expect); err != nil {
			return ApplyResult{}, err
		}
	}
	res := ApplyResult{Applied: true, Created: Created{Nodes: []string{}, Edges: []string{}}}
	// A recorder reads the source right before each change it makes.
	if err := ApplyChanges(o.Changes(MutableCopy(ctx, m, graphKey)), a, &res); err != nil {
		return ApplyResult{}, err
	}
	return res, nil
}

// Changes makes single changes to one graph: what applying an action comes down to.
// Apply adapts a Mutable to it; an in-memory store implements it on a working copy,
// so that a whole batch is published at once. The methods mean what Mutable's do.
type Changes interface {
	CreateNode(n Node) (Node, error)
	UpdateNode(nodeKey string, changes map[string]any) (Node, error)
	MoveNode(nodeKey string, posX, posY float64) error
	DeleteNode(nodeKey string) ([]Edge, error)
	CreateEdge(e Edge) (Edge, error)
	DeleteEdge(edgeKey string) error
}

// MaxBatchDepth bounds how deeply batches may nest inside batches.
const MaxBatchDepth = 8

// ApplyChanges carries out a through c, batch steps in order, and appends the keys
// of what it creates to res. An action without the payload its type needs is an
// error, not a panic: actions come from the model and from stored threads.
func ApplyChanges(c Changes, a Action, res *ApplyResult) error {
	return applyChanges(c, a, res, 0)
}

func applyChanges(c Changes, a Action, res *ApplyResult, depth int) error {
	missing := func() error { return fmt.Errorf("action %s has no payload", a.Type) }
	switch a.Type {
	case CreateNodeAction:
		if a.CreateNode == nil {
			return missing()
		}
		n, err := c.CreateNode(sizedByType(c, NodeFromPayload(*a.CreateNode)))
		if err != nil {
			return err
		}
		res.Created.Nodes = append(res.Created.Nodes, n.Key)
	case UpdateNodeAction:
		if a.UpdateNode == nil {
			return missing()
		}
		_, err := c.UpdateNode(a.UpdateNode.NodeKey, a.UpdateNode.Changes)
		return err
	case MoveNodeAction:
		if a.MoveNode == nil {
			return missing()
		}
		return c.MoveNode(a.MoveNode.NodeKey, a.MoveNode.PosX, a.MoveNode.PosY)
	case DeleteNodeAction:
		if a.DeleteNode == nil {
			return missing()
		}
		_, err := c.DeleteNode(a.DeleteNode.NodeKey)
		return err
	case CreateEdgeAction:
		if a.CreateEdge == nil {
			return missing()
		}
		e, err := c.CreateEdge(EdgeFromPayload(*a.CreateEdge))
		if err != nil {
			return err
		}
		res.Created.Edges = append(res.Created.Edges, e.Key)
	case DeleteEdgeAction:
		if a.DeleteEdge == nil {
			return missing()
		}
		return c.DeleteEdge(a.DeleteEdge.EdgeKey)
	case BatchAction:
		if a.Batch == nil {
			return missing()
		}
		if depth >= MaxBatchDepth {
			return fmt.Errorf("batches nested more than %d deep", MaxBatchDepth)
		}
		for i, sub := range a.Batch.Actions {
			if err := applyChanges(c, sub, res, depth+1); err != nil {
				return fmt.Errorf("batch step %d (%s): %w", i+1, sub.Type, err)
			}
		}
	case ConfigureNodeTypeAction:
		if a.ConfigureNodeType == nil {
			return missing()
		}
		return applyConfigure(c, a, res, depth)
	default:
		// A key left empty is the source's to choose: the node is created first and
		// its edges get the key it was given.
		var made string
		l, ok := Lower(a, func() string { return "" })
		if ok && a.Type == CreateNodeWithEdgesAction {
			steps := l.Batch.Actions
			n, err := c.CreateNode(sizedByType(c, NodeFromPayload(*steps[0].CreateNode)))
			if err != nil {
				return err
			}
			res.Created.Nodes = append(res.Created.Nodes, n.Key)
			made = n.Key
			for _, s := range steps[1:] {
				e := *s.CreateEdge
				if e.SourceKey == "" {
					e.SourceKey = made
				} else {
					e.TargetKey = made
				}
				if err := applyChanges(c, Action{Type: CreateEdgeAction, CreateEdge: &e}, res, depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		if !ok {
			return notLocal(a)
		}
		return applyChanges(c, l, res, depth+1)
	}
	return nil
}

// mutableChanges binds a Mutable to one graph and one context.
type mutableChanges struct {
	ctx      context.Context
	m        Mutable
	graphKey string
}

func (c mutableChanges) CreateNode(n Node) (Node, error) { return c.m.CreateNode(c.ctx, c.graphKey, n) }
func (c mutableChanges) UpdateNode(key string, changes map[string]any) (Node, error) {
	return c.m.UpdateNode(c.ctx, c.graphKey, key, changes)
}
func (c mutableChanges) MoveNode(key string, x, y float64) error {
	return c.m.MoveNode(c.ctx, c.graphKey, key, x, y)
}
func (c mutableChanges) DeleteNode(key string) ([]Edge, error) {
	return c.m.DeleteNode(c.ctx, c.graphKey, key)
}
func (c mutableChanges) CreateEdge(e Edge) (Edge, error) { return c.m.CreateEdge(c.ctx, c.graphKey, e) }
func (c mutableChanges) DeleteEdge(key string) error     { return c.m.DeleteEdge(c.ctx, c.graphKey, key) }

// NodeFromPayload builds the node a create_node action describes (key may be
// empty). Its size is the payload's; without one it is left zero, for the source
// to take from the node's type (see sizedByType).
func NodeFromPayload(p CreateNodePayload) Node {
	n := Node{
		Key: p.NodeKey, Type: p.TypeKey, Sheet: p.Sheet, Process: p.Process,
		Handles: p.Handles, Data: p.Data, PosX: p.PosX, PosY: p.PosY,
	}
	if p.Size != nil {
		n.Size = *p.Size
	}
	return n
}

// EdgeFromPayload builds the edge a create_edge action describes (key may be empty).
func EdgeFromPayload(p CreateEdgePayload) Edge {
	return Edge{
		Key: p.EdgeKey, Sheet: p.Sheet, Source: p.SourceKey, SourceHandle: p.SourceHandle,
		Target: p.TargetKey, TargetHandle: p.TargetHandle, Label: p.Label,
	}
}
