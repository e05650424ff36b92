package file

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/embedding"
)

// The file source stores embeddings in the graph file itself, so `embed --source
// file:PATH` works offline and the vectors travel with the file.
var _ embedding.Source = (*Source)(nil)

// SetEmbeddings writes each update's vector to the node's "embedding" and its hash to
// embedding.HashField, in one atomic write of the whole file: the embed command
// stores a batch at a time, and a crash must leave either the old file or the new one.
// Every other field, known or not, is kept. Keys of nodes the graph does not hold
// (deleted since they were embedded) are ignored. Like every change, it first takes
// in edits made to the file on disk meanwhile, so none are overwritten.
func (s *Source) SetEmbeddings(ctx context.Context, graphKey string, updates map[string]embedding.Update) error {
	if len(updates) == 0 {
		return ctx.Err()
	}
	return s.write(ctx, func() error {
		snap, err := s.store.Snapshot(ctx, graphKey)
		if err != nil {
			return err
		}
		// The snapshot's slices are shared with readers: build new ones.
		nodes := make([]datasource.Node, len(snap.Nodes))
		changed := 0
		for i, n := range snap.Nodes {
			if u, ok := updates[n.Key]; ok {
				h, err := json.Marshal(u.Hash)
				if err != nil {
					return fmt.Errorf("graph file %s: node %s: embedding hash: %w", s.path, n.Key, err)
				}
				n.Embedding = append([]float32(nil), u.Vector...)
				n.Extra = maps.Clone(n.Extra)
				if n.Extra == nil {
					n.Extra = map[string]json.RawMessage{}
				}
				n.Extra[embedding.HashField] = h
				changed++
			}
			nodes[i] = n
		}
		if changed == 0 {
			return nil
		}
		next := snap
		next.Nodes = nodes
		// Disk first: when the file cannot be written, memory keeps the old graph too.
		if err := s.persist(ctx, graphKey, next); err != nil {
			return err
		}
		if err := s.store.Replace(next); err != nil {
			return fmt.Errorf("graph file %s: %w", s.path, err)
		}
		return nil
	})
}
