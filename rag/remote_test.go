package rag

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// textSource is a source that ranks text on its side (as ArangoDB with its search
// View does) with a scripted answer, and counts the reads of the whole graph.
type textSource struct {
	datasource.Source // memgraph: Neighborhood, Node, Graph, Configs

	mu        sync.Mutex
	hits      []string            // keys the "server" ranks, best first
	answers   map[string][]string // when set: the keys it ranks for each query
	queries   []string            // the queries it was asked
	err       error
	searches  int
	wholeRead int // Nodes or Edges of the whole graph
}

func (s *textSource) TextSearch(ctx context.Context, graphKey, query string, limit int) ([]datasource.ScoredNode, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.searches++
	s.queries = append(s.queries, query)
	if s.err != nil {
		return nil, s.err
	}
	hits := s.hits
	if s.answers != nil {
		hits = s.answers[query]
	}
	var out []datasource.ScoredNode
	for i, k := range hits[:min(limit, len(hits))] {
		n, err := s.Source.Node(ctx, graphKey, k)
		if err != nil {
			return nil, err
		}
		out = append(out, datasource.ScoredNode{Node: n, Score: float64(10 - i)})
	}
	return out, nil
}

func (s *textSource) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	s.mu.Lock()
	s.wholeRead++
	s.mu.Unlock()
	return s.Source.Nodes(ctx, graphKey, sheet)
}

func (s *textSource) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	s.mu.Lock()
	s.wholeRead++
	s.mu.Unlock()
	return s.Source.Edges(ctx, graphKey, sheet)
}

func (s *textSource) reads() (searches, whole int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.searches, s.wholeRead
}

func newTextSource(t *testing.T, hits ...string) *textSource {
	t.Helper()
	mem, err := memgraph.New([]datasource.Snapshot{demoSnapshot(t)})
	if err != nil {
		t.Fatal(err)
	}
	return &textSource{Source: mem, hits: hits}
}

func TestRetrieverUsesTheSourcesTextSearch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := DefaultOptions()
	opts.CacheTTL = 0

	t.Run("server hits, only their part of the graph read", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t, "display-html", "sort-stats")
		c, err := New(src, opts, nil).Retrieve(ctx, "demo", "what shows the players")
		if err != nil {
			t.Fatal(err)
		}
		if got := hitKeys(c)[:2]; !slices.Equal(got, []string{"display-html", "sort-stats"}) {
			t.Errorf("hits = %v, want the source's ranking first", hitKeys(c))
		}
		if !c.Retrieval.Server {
			t.Error("Retrieval.Server not set")
		}
		if searches, whole := src.reads(); searches != 1 || whole != 0 {
			t.Errorf("%d searches, %d whole-graph reads; want 1 and 0", searches, whole)
		}
		// display-html's neighbours, two hops, with the edges between them.
		for _, k := range []string{"filter-active", "return", "fetch-api"} {
			if _, ok := findNode(c, k); !ok {
				t.Errorf("neighbour %s missing from %v", k, nodeKeys(c))
			}
		}
		hasEdge := false
		for _, e := range c.Edges {
			hasEdge = hasEdge || e.Source == "filter-active" && e.Target == "display-html"
		}
		if !hasEdge {
			t.Errorf("edge filter-active → display-html missing: %+v", c.Edges)
		}
		if c.Graph.Name == "" || len(c.Configs) == 0 {
			t.Errorf("graph or types missing: %+v, %d configs", c.Graph, len(c.Configs))
		}
	})

	t.Run("a node named by key comes first", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t, "error-handler", "fetch-api")
		c, err := New(src, opts, nil).Retrieve(ctx, "demo", "what does fetch-api call")
		if err != nil {
			t.Fatal(err)
		}
		if hitKeys(c)[0] != "fetch-api" {
			t.Errorf("hits = %v, want fetch-api (named) first", hitKeys(c))
		}
	})

	t.Run("relational questions over the part read", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t, "filter-active", "display-html")
		c, err := New(src, opts, nil).Retrieve(ctx, "demo", "what runs after filter-active?")
		if err != nil {
			t.Fatal(err)
		}
		if hitKeys(c)[0] != "display-html" {
			t.Errorf("hits = %v, want filter-active's successor first", hitKeys(c))
		}
	})

	t.Run("mentions are read and kept in full", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t, "return")
		c, err := New(src, opts, nil).RetrieveWith(ctx, "demo", "how does it end", []string{"entry-form", "no-such-node"})
		if err != nil {
			t.Fatal(err)
		}
		if nodeKeys(c)[0] != "entry-form" {
			t.Errorf("nodes = %v, want the mentioned node first", nodeKeys(c))
		}
		if _, ok := findNode(c, "root"); !ok {
			t.Errorf("the mentioned node's neighbour is missing: %v", nodeKeys(c))
		}
	})
}

func TestRetrieverFallsBackToRankingInProcess(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	opts := DefaultOptions()
	opts.CacheTTL = 0
	tests := []struct {
		name string
		src  func(t *testing.T) *textSource
	}{
		{"no text index", func(t *testing.T) *textSource {
			s := newTextSource(t)
			s.err = errors.Join(errors.New("no view"), datasource.ErrNoTextIndex)
			return s
		}},
		{"no hits", func(t *testing.T) *textSource { return newTextSource(t) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := tc.src(t)
			c, err := New(src, opts, nil).Retrieve(ctx, "demo", "fetch api")
			if err != nil {
				t.Fatal(err)
			}
			if c.Retrieval.Server || hitKeys(c)[0] != "fetch-api" {
				t.Errorf("server %v, hits %v; want the in-process ranking", c.Retrieval.Server, hitKeys(c))
			}
			if _, whole := src.reads(); whole == 0 {
				t.Error("the in-process ranking did not read the graph")
			}
		})
	}

	t.Run("a failing search is the question's error", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t)
		boom := errors.New("connection cut")
		src.err = boom
		_, err := New(src, opts, nil).Retrieve(ctx, "demo", "fetch api")
		if !errors.Is(err, boom) {
			t.Errorf("err = %v, want the source's", err)
		}
		src.err = &datasource.NotFoundError{Kind: "graph", Key: "nope"}
		if _, err := New(src, opts, nil).Retrieve(ctx, "nope", "x"); !errors.Is(err, datasource.ErrNotFound) {
			t.Errorf("unknown graph: %v", err)
		}
	})
}

// The question's expansion (retrieval.expand) is asked once, whichever path ranks,
// and its terms are searched by the source too.
func TestRemoteRankingWithExpansion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	retrieve := func(t *testing.T, src *textSource, x *fakeExpander) *Context {
		t.Helper()
		opts := DefaultOptions()
		opts.CacheTTL = 0
		opts.Expander = x
		c, err := New(src, opts, nil).Retrieve(ctx, "demo", "zorglub quux")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("the source searches the terms", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t)
		src.answers = map[string][]string{"html display": {"display-html"}}
		x := &fakeExpander{terms: []string{"html", "display"}}
		c := retrieve(t, src, x)
		if len(c.Hits) == 0 || c.Hits[0].Key != "display-html" || !c.Retrieval.Server {
			t.Fatalf("hits %v (server %v), want display-html from the expansion", hitKeys(c), c.Retrieval.Server)
		}
		if !slices.Equal(src.queries, []string{"zorglub quux", "html display"}) {
			t.Errorf("the source was asked %q", src.queries)
		}
		if x.calls.Load() != 1 || c.Retrieval.ExpandUsage.PromptTokens == 0 || len(c.Retrieval.Expansion) != 2 {
			t.Errorf("expander calls %d, usage %+v, expansion %v", x.calls.Load(), c.Retrieval.ExpandUsage, c.Retrieval.Expansion)
		}
	})

	t.Run("nothing found: in process, the expansion not asked twice", func(t *testing.T) {
		t.Parallel()
		src := newTextSource(t)
		src.answers = map[string][]string{}
		x := &fakeExpander{terms: []string{"html", "display"}}
		c := retrieve(t, src, x)
		if c.Retrieval.Server || len(c.Hits) == 0 || c.Hits[0].Key != "display-html" {
			t.Fatalf("hits %v (server %v), want the in-process ranking with the expansion", hitKeys(c), c.Retrieval.Server)
		}
		if x.calls.Load() != 1 || c.Retrieval.ExpandUsage.PromptTokens == 0 {
			t.Errorf("expander calls %d, usage %+v; want one call, counted", x.calls.Load(), c.Retrieval.ExpandUsage)
		}
	})
}
