package memgraph

import (
	"context"

	"github.com/nodius/nodius-ai/datasource"
)

// Change runs fn over one working copy of the graph and publishes its changes at
// once, or none of them when fn (or the commit hook) fails.
func (s *Store) Change(ctx context.Context, graphKey string, fn func(datasource.WorkingCopy) error) error {
	return s.mutate(ctx, graphKey, func(tx *txn) error { return fn(tx) })
}

// LookupNode returns the node of the working copy with that key.
func (tx *txn) LookupNode(key string) (datasource.Node, bool) {
	i, ok := tx.nodeIdx[key]
	if !ok {
		return datasource.Node{}, false
	}
	return tx.nodes[i], true
}

// LookupEdge returns the edge of the working copy with that key.
func (tx *txn) LookupEdge(key string) (datasource.Edge, bool) {
	i, ok := tx.edgeIdx[key]
	if !ok {
		return datasource.Edge{}, false
	}
	return tx.edges[i], true
}

// EdgesOf lists the working copy's edges that start or end at the node.
func (tx *txn) EdgesOf(nodeKey string) []datasource.Edge {
	var out []datasource.Edge
	for _, e := range tx.edges {
		if e.Source == nodeKey || e.Target == nodeKey {
			out = append(out, e)
		}
	}
	return out
}

// Graph is the working copy's graph metadata (datasource.Scope).
func (tx *txn) Graph() datasource.Graph { return tx.graph }

// ConfigKeys lists the working copy's node types (datasource.Scope).
func (tx *txn) ConfigKeys() []string {
	keys := make([]string, len(tx.configs))
	for i, c := range tx.configs {
		keys[i] = c.Key
	}
	return keys
}
