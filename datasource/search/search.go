// Package search ranks a graph's nodes against a free-text query. The index is built
// once per graph snapshot and queried many times.
//
// TODO(rag): BM25-style scoring with field weights and identifier splitting. This
// placeholder only counts query words, so that the packages built on it compile.
package search

import (
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// Hit is one ranked node: its index in the slice given to New, and its score.
type Hit struct {
	Index int
	Score float64
}

// Index is an immutable search index over one snapshot's nodes.
type Index struct {
	texts []string
}

// New indexes nodes (and the configs that name their types).
func New(nodes []datasource.Node, configs []datasource.NodeConfig) *Index {
	ix := &Index{texts: make([]string, len(nodes))}
	for i, n := range nodes {
		ix.texts[i] = strings.ToLower(n.Key + " " + n.Type + " " + n.Process)
	}
	return ix
}

// Search returns at most limit hits, best first; nothing when the query has no
// searchable word.
func (ix *Index) Search(query string, limit int) []Hit {
	var hits []Hit
	words := strings.Fields(strings.ToLower(query))
	for i, t := range ix.texts {
		s := 0.0
		for _, w := range words {
			if strings.Contains(t, w) {
				s++
			}
		}
		if s > 0 {
			hits = append(hits, Hit{Index: i, Score: s})
		}
	}
	sort.SliceStable(hits, func(a, b int) bool { return hits[a].Score > hits[b].Score })
	if limit > 0 && len(hits) > limit {
		hits = hits[:limit]
	}
	return hits
}
