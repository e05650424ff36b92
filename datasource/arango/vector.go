package arango

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource"
)

// MinVectorScore is the cosine similarity under which a node is not a hit, the Nodius
// server's floor, so both rank alike.
const MinVectorScore = 0.3

// ErrNoVectors is returned by VectorSearch when the graph has no embedded node that
// matches: the retriever then ranks by text alone.
var ErrNoVectors = errors.New("no embedded node matches")

// vectorSupport is what the server offers for vector search, asked once.
type vectorSupport struct {
	approx    bool // ArangoDB 3.12.4+ with a usable cosine vector index on embedding
	dimension int  // the index's dimension; APPROX_NEAR_COSINE needs queries of that size
}

// VectorSearch ranks the graph's nodes by cosine similarity to queryEmbedding on the
// server: APPROX_NEAR_COSINE through a vector index when the server has one (3.12.4+),
// else COSINE_SIMILARITY over the graph's nodes (3.9+). Scores at or below
// MinVectorScore are dropped. Any error (old server, no embeddings, vectors of another
// size) is returned as is: the retriever falls back to text ranking.
func (s *Source) VectorSearch(ctx context.Context, graphKey string, queryEmbedding []float32, limit int) ([]datasource.ScoredNode, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	return s.vectorSearch(ctx, graphKey, queryEmbedding, limit)
}

func (s *Source) vectorSearch(ctx context.Context, graphKey string, qe []float32, limit int) ([]datasource.ScoredNode, error) {
	if len(qe) == 0 {
		return nil, fmt.Errorf("vector search: empty query embedding")
	}
	if limit <= 0 {
		limit = 10
	}
	var hits []datasource.ScoredNode
	var err error
	if vs := s.vectorSupport(ctx); vs.approx && vs.dimension == len(qe) {
		hits, err = s.runVector(ctx, graphKey, qVectorApprox, map[string]any{
			"qe": qe, "gk": graphKey, "min": MinVectorScore, "limit": limit, "candidates": max(limit*20, 200)})
		if err == nil && len(hits) > 0 {
			return hits, nil
		}
	}
	hits, err = s.runVector(ctx, graphKey, qVectorExact, map[string]any{
		"qe": qe, "gk": graphKey, "dim": len(qe), "min": MinVectorScore, "limit": limit})
	if err != nil {
		return nil, s.classify(err, "rank the nodes of graph "+graphKey+" by similarity")
	}
	if len(hits) == 0 {
		return nil, ErrNoVectors
	}
	return hits, nil
}

func (s *Source) runVector(ctx context.Context, graphKey, q string, bind map[string]any) ([]datasource.ScoredNode, error) {
	var hits []datasource.ScoredNode
	err := s.query(ctx, q, bind, func(raw json.RawMessage) error {
		var row struct {
			Node  json.RawMessage `json:"node"`
			Score float64         `json:"score"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return fmt.Errorf("decode vector hit: %w", err)
		}
		n, err := decodeNode(graphKey, row.Node)
		if err != nil {
			return err
		}
		hits = append(hits, datasource.ScoredNode{Node: n, Score: row.Score})
		return nil
	})
	return hits, err
}

// vectorSupport asks once whether APPROX_NEAR_COSINE can be used: a 3.12.4+ server
// and a ready cosine vector index on nodius_nodes.embedding. Failures to ask mean
// "no" (exact search still works) and are not retried within this Source's life,
// except a cancelled context, which says nothing about the server.
func (s *Source) vectorSupport(ctx context.Context) vectorSupport {
	s.vectorMu.Lock()
	defer s.vectorMu.Unlock()
	if s.vectorInfo != nil {
		return *s.vectorInfo
	}
	vs := s.detectVector(ctx)
	if ctx.Err() == nil {
		s.vectorInfo = &vs
	}
	return vs
}

func (s *Source) detectVector(ctx context.Context) vectorSupport {
	v, err := s.client.Version(ctx)
	if err != nil || !versionAtLeast(string(v.Version), 3, 12, 4) {
		return vectorSupport{}
	}
	col, err := s.db.GetCollection(ctx, collNodes, &arangodb.GetCollectionOptions{SkipExistCheck: true})
	if err != nil {
		return vectorSupport{}
	}
	idxs, err := col.Indexes(ctx)
	if err != nil {
		return vectorSupport{}
	}
	for _, ix := range idxs {
		if ix.Type != arangodb.VectorIndexType || ix.VectorIndex == nil {
			continue
		}
		if !fieldsAre(ix, "embedding") {
			continue
		}
		if m := ix.VectorIndex.Metric; m == nil || *m != arangodb.VectorMetricCosine {
			continue
		}
		if ix.VectorErrorMessage != nil || (ix.TrainingState != nil && *ix.TrainingState != arangodb.VectorIndexTrainingStateReady) {
			continue
		}
		if ix.VectorIndex.Dimension != nil {
			return vectorSupport{approx: true, dimension: *ix.VectorIndex.Dimension}
		}
	}
	return vectorSupport{}
}

func fieldsAre(ix arangodb.IndexResponse, field string) bool {
	if len(ix.VectorFields) == 1 && ix.VectorFields[0] == field {
		return true
	}
	return ix.RegularIndex != nil && len(ix.RegularIndex.Fields) == 1 && ix.RegularIndex.Fields[0] == field
}

// versionAtLeast compares "major.minor.patch[-suffix]" with a minimum.
func versionAtLeast(v string, major, minor, patch int) bool {
	parts := strings.SplitN(v, ".", 3)
	nums := [3]int{}
	for i := 0; i < len(parts) && i < 3; i++ {
		p := parts[i]
		if j := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			p = p[:j]
		}
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		nums[i] = n
	}
	want := [3]int{major, minor, patch}
	for i := range nums {
		if nums[i] != want[i] {
			return nums[i] > want[i]
		}
	}
	return true
}
