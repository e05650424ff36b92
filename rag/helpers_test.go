package rag

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// loadDoc reads a graph file (the file:PATH format, datasource.Document) into a snapshot.
func loadDoc(t testing.TB, path string) datasource.Snapshot {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d datasource.Document
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return d.Snapshot()
}

// demoSnapshot is the embedded demo graph (the NBA workflow), a fresh copy.
func demoSnapshot(t testing.TB) datasource.Snapshot {
	t.Helper()
	s, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fakeSource is a Source + Snapshotter over snapshots it owns; it counts loads so
// tests can see when the retriever goes back to the source.
type fakeSource struct {
	mu    sync.Mutex
	snaps map[string]datasource.Snapshot
	loads int
	fail  error // returned by Snapshot when set
}

func newFakeSource(snaps ...datasource.Snapshot) *fakeSource {
	f := &fakeSource{snaps: make(map[string]datasource.Snapshot)}
	for _, s := range snaps {
		f.snaps[s.Graph.Key] = s
	}
	return f
}

func (f *fakeSource) Loads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.loads
}

// setProcess changes one node's code, as an applied proposal would.
func (f *fakeSource) setProcess(graph, node, process string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.snaps[graph]
	nodes := append([]datasource.Node(nil), s.Nodes...)
	for i := range nodes {
		if nodes[i].Key == node {
			nodes[i].Process = process
		}
	}
	s.Nodes = nodes
	f.snaps[graph] = s
}

func (f *fakeSource) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return datasource.Snapshot{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.loads++
	if f.fail != nil {
		return datasource.Snapshot{}, f.fail
	}
	s, ok := f.snaps[graphKey]
	if !ok {
		return datasource.Snapshot{}, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
	}
	return s, nil
}

func (f *fakeSource) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	s, err := f.Snapshot(ctx, graphKey)
	return s.Graph, err
}

func (f *fakeSource) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	s, err := f.Snapshot(ctx, graphKey)
	return s.Nodes, err
}

func (f *fakeSource) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	s, err := f.Snapshot(ctx, graphKey)
	return s.Edges, err
}

func (f *fakeSource) Node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	s, err := f.Snapshot(ctx, graphKey)
	if err != nil {
		return datasource.Node{}, err
	}
	for _, n := range s.Nodes {
		if n.Key == nodeKey {
			return n, nil
		}
	}
	return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
}

func (f *fakeSource) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	s, err := f.Snapshot(ctx, graphKey)
	return s.Configs, err
}

func (f *fakeSource) Search(context.Context, string, string, int, []float32) ([]datasource.ScoredNode, error) {
	return nil, errors.New("fakeSource.Search: not used by retrieval")
}

func (f *fakeSource) Neighborhood(context.Context, string, string, int, datasource.Direction) (datasource.Neighborhood, error) {
	return datasource.Neighborhood{}, errors.New("fakeSource.Neighborhood: not used by retrieval")
}

// vectorSource adds a server-side VectorSearch with canned results.
type vectorSource struct {
	*fakeSource
	results []datasource.ScoredNode
	err     error
	calls   int
}

func (v *vectorSource) VectorSearch(_ context.Context, _ string, _ []float32, limit int) ([]datasource.ScoredNode, error) {
	v.calls++
	if v.err != nil {
		return nil, v.err
	}
	return v.results[:min(limit, len(v.results))], nil
}

// fakeEmbedder maps known texts to vectors; unknown texts get def.
type fakeEmbedder struct {
	mu      sync.Mutex
	vectors map[string][]float32
	def     []float32
	err     error
	calls   int
}

func (e *fakeEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	if e.err != nil {
		return nil, e.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if v, ok := e.vectors[t]; ok {
			out[i] = v
		} else {
			out[i] = e.def
		}
	}
	return out, nil
}

func (e *fakeEmbedder) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// clock is a settable time source for cache and snapshot expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func nodeKeys(c *Context) []string {
	out := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = n.Key
	}
	return out
}

func hitKeys(c *Context) []string {
	out := make([]string, len(c.Hits))
	for i, h := range c.Hits {
		out[i] = h.Key
	}
	return out
}

func findNode(c *Context, key string) (ContextNode, bool) {
	for _, n := range c.Nodes {
		if n.Key == key {
			return n, true
		}
	}
	return ContextNode{}, false
}
