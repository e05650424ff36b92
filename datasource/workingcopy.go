package datasource

import "context"

// WorkingCopy is one graph being changed as a unit: reads see the changes made so
// far. Undo checks each step against it before making the step, so that what it
// checked is what it changes.
type WorkingCopy interface {
	Changes
	// LookupNode returns the node with that key, if there is one.
	LookupNode(key string) (Node, bool)
	// LookupEdge returns the edge with that key, if there is one.
	LookupEdge(key string) (Edge, bool)
	// EdgesOf lists the edges whose source or target is the node.
	EdgesOf(nodeKey string) []Edge
}

// EdgeRestorer is implemented by working copies that can put an edge back exactly
// as it was recorded (undo), without the rules a new edge must follow (one sheet for
// both ends, handles the types declare): the graph held it, so it may hold it again.
// Both nodes must exist and the key be free.
type EdgeRestorer interface {
	RestoreEdge(e Edge) (Edge, error)
}

// WorkingCopyChanger is implemented by sources that run a function over one working
// copy of a graph and publish all of its changes or none (the in-memory store, and
// the file source under its lock). An error from fn publishes nothing.
type WorkingCopyChanger interface {
	Change(ctx context.Context, graphKey string, fn func(WorkingCopy) error) error
}

// MutableCopy makes a WorkingCopy of a Mutable source: each change is made at once,
// each read asks the source. It is not atomic: callers make every step idempotent.
func MutableCopy(ctx context.Context, m Mutable, graphKey string) WorkingCopy {
	return mutableCopy{mutableChanges{ctx: ctx, m: m, graphKey: graphKey}}
}

type mutableCopy struct{ mutableChanges }

func (c mutableCopy) LookupNode(key string) (Node, bool) {
	n, err := c.m.Node(c.ctx, c.graphKey, key)
	return n, err == nil
}

func (c mutableCopy) LookupEdge(key string) (Edge, bool) {
	edges, err := c.m.Edges(c.ctx, c.graphKey, "")
	if err != nil {
		return Edge{}, false
	}
	for _, e := range edges {
		if e.Key == key {
			return e, true
		}
	}
	return Edge{}, false
}

func (c mutableCopy) EdgesOf(nodeKey string) []Edge {
	edges, err := c.m.Edges(c.ctx, c.graphKey, "")
	if err != nil {
		return nil
	}
	var out []Edge
	for _, e := range edges {
		if e.Source == nodeKey || e.Target == nodeKey {
			out = append(out, e)
		}
	}
	return out
}
