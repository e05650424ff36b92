package memgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/nodius/nodius-ai/datasource"
)

// Node type configs on a working copy (datasource.ConfigChanges): a type change
// is made on the same copy as the graph's other changes, and published with them.

var (
	_ datasource.ConfigChanges = (*txn)(nil)
	_ datasource.ConfigWriter  = (*Store)(nil)
)

// LookupConfig returns the working copy's config of that type.
func (tx *txn) LookupConfig(key string) (datasource.NodeConfig, bool) {
	i, ok := tx.cfgIdx[key]
	if !ok {
		return datasource.NodeConfig{}, false
	}
	return tx.configs[i], true
}

// writeConfigs makes the config list and its index the transaction's own.
func (tx *txn) writeConfigs() {
	tx.configs = slices.Clone(tx.configs)
	tx.cfgIdx = maps.Clone(tx.cfgIdx)
	if tx.cfgIdx == nil {
		tx.cfgIdx = map[string]int32{}
	}
}

// PutConfig creates or replaces the config of c.Key. A built-in type has none to
// replace. Where the code changes, every node of the type gets it (a node's code
// is its type's). New handles must keep the points that the edges of the type's
// nodes without handles of their own use.
func (tx *txn) PutConfig(c datasource.NodeConfig) (datasource.NodeConfig, error) {
	if c.Key == "" {
		return datasource.NodeConfig{}, fmt.Errorf("a node type needs a key")
	}
	if err := datasource.CheckKey("node type", c.Key); err != nil {
		return datasource.NodeConfig{}, err
	}
	if datasource.IsBuiltinType(c.Key) {
		return datasource.NodeConfig{}, fmt.Errorf("%q is a built-in node type: it has no config to write", c.Key)
	}
	if len(c.Handles) > 0 {
		h, err := datasource.CheckHandles(c.Handles)
		if err != nil {
			return datasource.NodeConfig{}, fmt.Errorf("node type %s: handles: %w", c.Key, err)
		}
		c.Handles = h
	}
	old, existed := tx.LookupConfig(c.Key)
	if c.Workspace == "" && !existed {
		c.Workspace = tx.graph.Workspace // a type belongs to the graph's workspace
	}
	tx.writeConfigs()
	if existed {
		tx.configs[tx.cfgIdx[c.Key]] = c
	} else {
		tx.cfgIdx[c.Key] = int32(len(tx.configs))
		tx.configs = append(tx.configs, c)
	}
	for _, n := range tx.nodes {
		if n.Type == c.Key && len(n.Handles) == 0 {
			if err := datasource.CheckEdgesKeepHandles(n, datasource.EffectiveHandles(n, tx.configs), tx.edges); err != nil {
				return datasource.NodeConfig{}, fmt.Errorf("node type %s: %w", c.Key, err)
			}
		}
	}
	if !existed || old.Process != c.Process {
		written := false
		for i, n := range tx.nodes {
			if n.Type != c.Key || n.Process == c.Process {
				continue
			}
			if !written {
				tx.writeNodes()
				written = true
			}
			tx.nodes[i].Process = c.Process
		}
	}
	return c, nil
}

// DeleteConfig removes the config of a type no node uses.
func (tx *txn) DeleteConfig(key string) error {
	i, ok := tx.cfgIdx[key]
	if !ok {
		return &datasource.NotFoundError{Kind: "node type", Key: key}
	}
	if used := datasource.NodesOfType(tx.nodes, key); len(used) > 0 {
		return fmt.Errorf("node type %s still has %d node(s) (%s): delete them first", key, len(used), used[0])
	}
	tx.writeConfigs()
	tx.configs = slices.Delete(tx.configs, int(i), int(i)+1)
	tx.cfgIdx = make(map[string]int32, len(tx.configs))
	for j, c := range tx.configs {
		tx.cfgIdx[c.Key] = int32(j)
	}
	return nil
}

// PutConfig creates or replaces a node type config of the graph as one change.
func (s *Store) PutConfig(ctx context.Context, graphKey string, c datasource.NodeConfig) (datasource.NodeConfig, error) {
	var out datasource.NodeConfig
	err := s.mutate(ctx, graphKey, func(tx *txn) error {
		var err error
		out, err = tx.PutConfig(c)
		return err
	})
	return out, err
}

// DeleteConfig removes a node type config of the graph as one change.
func (s *Store) DeleteConfig(ctx context.Context, graphKey, key string) error {
	return s.mutate(ctx, graphKey, func(tx *txn) error { return tx.DeleteConfig(key) })
}
