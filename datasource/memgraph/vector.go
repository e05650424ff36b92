package memgraph

import (
	"context"
	"errors"
	"math"
	"sort"

	"github.com/nodius/nodius-ai/datasource"
)

// VectorSearch ranks the nodes that have an embedding of the query's dimension by
// cosine similarity to queryEmbedding, best first, at most limit (all when <= 0).
// Nodes without an embedding are left out. It is a brute-force scan, fine for the
// graph sizes a memory store holds.
func (s *Store) VectorSearch(ctx context.Context, graphKey string, queryEmbedding []float32, limit int) ([]datasource.ScoredNode, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	if len(queryEmbedding) == 0 {
		return nil, errors.New("vector search needs a query embedding")
	}
	qn := norm(queryEmbedding)
	if qn == 0 {
		return []datasource.ScoredNode{}, nil
	}
	type hit struct {
		i     int
		score float64
	}
	var hits []hit
	for i, n := range v.nodes {
		if len(n.Embedding) != len(queryEmbedding) {
			continue
		}
		nn := norm(n.Embedding)
		if nn == 0 {
			continue
		}
		var dot float64
		for j, x := range n.Embedding {
			dot += float64(x) * float64(queryEmbedding[j])
		}
		hits = append(hits, hit{i, dot / (qn * nn)})
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	out := make([]datasource.ScoredNode, len(hits))
	for k, h := range hits {
		out[k] = datasource.ScoredNode{Node: v.nodes[h.i], Score: h.score}
	}
	return out, nil
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
