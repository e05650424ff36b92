package datasource

import (
	"context"
	"errors"
)

// ErrNoTextIndex is returned by a TextSearcher whose store has no text index for
// it to use (an ArangoDB without the search view `nodius-ai arango setup`
// creates). Callers then rank in process, over the whole graph.
var ErrNoTextIndex = errors.New("the data source has no text search index")

// TextSearcher is implemented by sources that rank nodes by text on their side,
// so that a question does not need the whole graph in memory (ArangoSearch with
// BM25). It returns at most limit hits, best first, each node in full; no hits is
// not an error. An error wrapping ErrNoTextIndex means "rank in process instead";
// any other error is the source's, classified, as Search would return it.
type TextSearcher interface {
	TextSearch(ctx context.Context, graphKey, query string, limit int) ([]ScoredNode, error)
}
