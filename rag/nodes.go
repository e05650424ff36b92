package rag

import (
	"context"

	"github.com/nodius/nodius-ai/datasource"
)

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

// Configs returns the graph's node type configs from the indexed graph (see
// NodeKeys): the agent's system prompt lists them, and reading them from the
// source would parse a large file graph the index cache answers.
func (r *Retriever) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	st, err := r.state(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return st.snap.Configs, nil
}
