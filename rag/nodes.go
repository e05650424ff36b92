package rag

import "context"

// NodeKeys returns the keys and types of the graph's nodes, in the graph's order,
// from the indexed graph: loading it when needed (from the index store when it
// has it), which also readies it for the first question. @ completion uses this
// instead of reading every node from the source.
func (r *Retriever) NodeKeys(ctx context.Context, graphKey string) (keys, types []string, err error) {
	st, err := r.state(ctx, graphKey)
	if err != nil {
		return nil, nil, err
	}
	keys, types = make([]string, len(st.snap.Nodes)), make([]string, len(st.snap.Nodes))
	for i, n := range st.snap.Nodes {
		keys[i], types[i] = n.Key, n.Type
	}
	return keys, types, nil
}
