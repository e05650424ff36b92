// Package memgraph keeps whole graphs in memory and serves them as a
// datasource.Source and datasource.Mutable. It is the engine under the embedded demo
// graph and the file source, and a fast fake for tests.
//
// Each graph is held as an immutable view (nodes, edges, configs, lookup maps,
// adjacency lists, a lazily built search index). Readers take the current view under
// a read lock and never wait for writers; a change builds a new view (copy on write)
// and publishes it in one step, so a reader never sees half of a batch. Views are
// numbered: Version tells callers (retrieval caches) when to drop what they derived.
package memgraph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
)

// CommitFunc is called with the graph as it will be after a change, before the change
// is published. Returning an error discards the change (the file source persists the
// graph here, so a change that cannot be written is not kept in memory either).
type CommitFunc func(ctx context.Context, graphKey string, next datasource.Snapshot) error

// Option configures a Store.
type Option func(*Store)

// WithDescription sets what Describe returns ("demo (embedded; changes are kept in
// memory only)").
func WithDescription(desc string) Option { return func(s *Store) { s.desc = desc } }

// WithOnChange registers fn, called after every published change (mutation, applied
// action, Replace) with the graph key and its new version. It runs after the store's
// locks are released, so it may read the store; it must not block for long.
func WithOnChange(fn func(graphKey string, version uint64)) Option {
	return func(s *Store) { s.onChange = fn }
}

// WithCommit registers fn, called under the write lock with the changed graph before
// it is published; an error from fn discards the change.
func WithCommit(fn CommitFunc) Option { return func(s *Store) { s.commit = fn } }

// WithKeyGenerator replaces the generator of keys for created nodes and edges
// (kind is "node" or "edge"); tests use it for stable keys. The store still checks
// that a generated key is free and asks again when it is not.
func WithKeyGenerator(fn func(kind string) string) Option { return func(s *Store) { s.newKey = fn } }

// WithApplyNote sets the Note of every ApplyResult the store returns ("applied in
// memory only (demo source)").
func WithApplyNote(note string) Option { return func(s *Store) { s.applyNote = note } }

// Store is an in-memory, concurrency-safe set of graphs.
type Store struct {
	mu     sync.RWMutex // guards graphs (the map and which view each key points to)
	graphs map[string]*view
	wmu    sync.Mutex // serialises writers, so a slow commit does not block readers

	desc      string
	applyNote string
	onChange  func(string, uint64)
	commit    CommitFunc
	newKey    func(kind string) string
}

// New builds a store holding the given graphs (keyed by Graph.Key). It checks that
// keys are present and unique and that every edge joins two existing nodes.
func New(snaps []datasource.Snapshot, opts ...Option) (*Store, error) {
	s := &Store{graphs: make(map[string]*view, len(snaps)), newKey: defaultKey}
	for _, o := range opts {
		o(s)
	}
	for _, snap := range snaps {
		if snap.Graph.Key == "" {
			return nil, fmt.Errorf("memgraph: a graph has no _key")
		}
		if _, dup := s.graphs[snap.Graph.Key]; dup {
			return nil, fmt.Errorf("memgraph: graph %q given twice", snap.Graph.Key)
		}
		v, err := newView(snap.Graph, snap.Nodes, snap.Edges, snap.Configs, 1)
		if err != nil {
			return nil, fmt.Errorf("memgraph: graph %q: %w", snap.Graph.Key, err)
		}
		s.graphs[snap.Graph.Key] = v
	}
	return s, nil
}

// Replace puts snap in place of the graph with the same key (or adds it), as one
// new version. The commit hook is not called: the file source uses Replace to take
// in a file changed on disk.
func (s *Store) Replace(snap datasource.Snapshot) error {
	if snap.Graph.Key == "" {
		return fmt.Errorf("memgraph: a graph has no _key")
	}
	s.wmu.Lock()
	version := uint64(1)
	if old := s.view(snap.Graph.Key); old != nil {
		version = old.version + 1
	}
	v, err := newView(snap.Graph, snap.Nodes, snap.Edges, snap.Configs, version)
	if err != nil {
		s.wmu.Unlock()
		return fmt.Errorf("memgraph: graph %q: %w", snap.Graph.Key, err)
	}
	s.mu.Lock()
	s.graphs[snap.Graph.Key] = v
	s.mu.Unlock()
	s.wmu.Unlock()
	if s.onChange != nil {
		s.onChange(snap.Graph.Key, version)
	}
	return nil
}

// GraphKeys lists the graphs held, sorted.
func (s *Store) GraphKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := slices.Collect(maps.Keys(s.graphs))
	sort.Strings(keys)
	return keys
}

// Version returns the current version of a graph: it grows by one with every
// published change, so a cache keyed by (graph, version) is never stale.
func (s *Store) Version(graphKey string) (uint64, error) {
	v, err := s.get(graphKey)
	if err != nil {
		return 0, err
	}
	return v.version, nil
}

// Describe says what the store is, for headers and messages.
func (s *Store) Describe() string {
	if s.desc == "" {
		return "memory"
	}
	return s.desc
}

func (s *Store) view(graphKey string) *view {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.graphs[graphKey]
}

func (s *Store) get(graphKey string) (*view, error) {
	if v := s.view(graphKey); v != nil {
		return v, nil
	}
	return nil, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
}

func (s *Store) getCtx(ctx context.Context, graphKey string) (*view, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.get(graphKey)
}

// Graph returns the graph's metadata. Its maps are shared: treat them as read-only.
func (s *Store) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return datasource.Graph{}, err
	}
	return v.graph, nil
}

// Nodes lists the nodes in their stored order, of one sheet when sheet is not empty
// (a sheet id, or a sheet name). An unknown sheet is a not-found error.
func (s *Store) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	if sheet == "" {
		return slices.Clone(v.nodes), nil
	}
	id, err := v.resolveSheet(sheet)
	if err != nil {
		return nil, err
	}
	out := []datasource.Node{}
	for _, n := range v.nodes {
		if n.Sheet == id {
			out = append(out, n)
		}
	}
	return out, nil
}

// Edges lists the edges in their stored order, of one sheet when sheet is not empty.
func (s *Store) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	if sheet == "" {
		return slices.Clone(v.edges), nil
	}
	id, err := v.resolveSheet(sheet)
	if err != nil {
		return nil, err
	}
	out := []datasource.Edge{}
	for _, e := range v.edges {
		if e.Sheet == id {
			out = append(out, e)
		}
	}
	return out, nil
}

// Node returns one node. Its Data and Handles are shared: treat them as read-only.
func (s *Store) Node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return datasource.Node{}, err
	}
	i, ok := v.nodeIdx[nodeKey]
	if !ok {
		return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
	}
	return v.nodes[i], nil
}

// Configs lists the graph's custom node type configs.
func (s *Store) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	return slices.Clone(v.configs), nil
}

// Snapshot hands over the whole graph without copying: the slices are the store's
// own current view, which is never modified once published. Callers must treat them
// as read-only (copy a node before changing it; never write into Data or Handles).
func (s *Store) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	return v.snapshot(), nil
}

// Search ranks the graph's nodes against query with the text index of the current
// version (built on first use after each change, not per query), best first, at most
// limit (all matches when limit <= 0). queryEmbedding is not used here: fusing vector
// similarity is retrieval's job (see VectorSearch).
func (s *Store) Search(ctx context.Context, graphKey, query string, limit int, _ []float32) ([]datasource.ScoredNode, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	hits := v.searchIndex().Search(query, limit)
	out := make([]datasource.ScoredNode, 0, len(hits))
	for _, h := range hits {
		if h.Index < 0 || h.Index >= len(v.nodes) {
			continue
		}
		out = append(out, datasource.ScoredNode{Node: v.nodes[h.Index], Score: h.Score})
	}
	return out, nil
}

// Neighborhood walks edges breadth first from nodeKey up to depth hops (0: the node
// alone) in the given direction. Nodes come in the order reached (start first), edges
// in the order walked; both are deterministic for a given graph version.
func (s *Store) Neighborhood(ctx context.Context, graphKey, nodeKey string, depth int, dir datasource.Direction) (datasource.Neighborhood, error) {
	v, err := s.getCtx(ctx, graphKey)
	if err != nil {
		return datasource.Neighborhood{}, err
	}
	if dir, err = datasource.ParseDirection(string(dir)); err != nil {
		return datasource.Neighborhood{}, err
	}
	start, ok := v.nodeIdx[nodeKey]
	if !ok {
		return datasource.Neighborhood{}, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
	}
	seen := map[int32]bool{start: true}
	seenEdge := map[int32]bool{}
	order := []int32{start}
	var walked []int32
	frontier := []int32{start}
	for d := 0; d < depth && len(frontier) > 0; d++ {
		if err := ctx.Err(); err != nil {
			return datasource.Neighborhood{}, err
		}
		var next []int32
		for _, u := range frontier {
			visit := func(edges []int32, outgoing bool) {
				for _, ei := range edges {
					if seenEdge[ei] {
						continue
					}
					seenEdge[ei] = true
					walked = append(walked, ei)
					e := v.edges[ei]
					other := e.Target
					if !outgoing {
						other = e.Source
					}
					oi, ok := v.nodeIdx[other]
					if !ok || seen[oi] {
						continue
					}
					seen[oi] = true
					order = append(order, oi)
					next = append(next, oi)
				}
			}
			if dir == datasource.Any || dir == datasource.Outbound {
				visit(v.out[u], true)
			}
			if dir == datasource.Any || dir == datasource.Inbound {
				visit(v.in[u], false)
			}
		}
		frontier = next
	}
	nb := datasource.Neighborhood{Nodes: make([]datasource.Node, len(order)), Edges: make([]datasource.Edge, len(walked))}
	for i, ni := range order {
		nb.Nodes[i] = v.nodes[ni]
	}
	for i, ei := range walked {
		nb.Edges[i] = v.edges[ei]
	}
	return nb, nil
}

// view is one immutable version of a graph.
type view struct {
	graph   datasource.Graph
	nodes   []datasource.Node
	edges   []datasource.Edge
	configs []datasource.NodeConfig
	nodeIdx map[string]int32
	edgeIdx map[string]int32
	cfgIdx  map[string]int32
	out     [][]int32 // per node index: indices of edges leaving it
	in      [][]int32 // per node index: indices of edges entering it
	version uint64

	indexOnce sync.Once
	index     *search.Index
}

// newView indexes a graph; it fails on missing or duplicate keys and dangling edges.
func newView(g datasource.Graph, nodes []datasource.Node, edges []datasource.Edge, configs []datasource.NodeConfig, version uint64) (*view, error) {
	v := &view{graph: g, nodes: nodes, edges: edges, configs: configs, version: version}
	if v.nodes == nil {
		v.nodes = []datasource.Node{}
	}
	if v.edges == nil {
		v.edges = []datasource.Edge{}
	}
	if v.configs == nil {
		v.configs = []datasource.NodeConfig{}
	}
	v.nodeIdx = make(map[string]int32, len(nodes))
	for i, n := range v.nodes {
		if n.Key == "" {
			return nil, fmt.Errorf("nodes[%d] has no _key", i)
		}
		if _, dup := v.nodeIdx[n.Key]; dup {
			return nil, fmt.Errorf("nodes[%d]: duplicate node key %q", i, n.Key)
		}
		v.nodeIdx[n.Key] = int32(i)
	}
	v.edgeIdx = make(map[string]int32, len(edges))
	for i, e := range v.edges {
		if e.Key == "" {
			return nil, fmt.Errorf("edges[%d] has no _key", i)
		}
		if _, dup := v.edgeIdx[e.Key]; dup {
			return nil, fmt.Errorf("edges[%d]: duplicate edge key %q", i, e.Key)
		}
		if _, ok := v.nodeIdx[e.Source]; !ok {
			return nil, fmt.Errorf("edges[%d] (%s): source node %q does not exist", i, e.Key, e.Source)
		}
		if _, ok := v.nodeIdx[e.Target]; !ok {
			return nil, fmt.Errorf("edges[%d] (%s): target node %q does not exist", i, e.Key, e.Target)
		}
		v.edgeIdx[e.Key] = int32(i)
	}
	v.cfgIdx = make(map[string]int32, len(configs))
	for i, c := range v.configs {
		v.cfgIdx[c.Key] = int32(i) // a repeated config key: the last one wins
	}
	v.buildAdjacency()
	return v, nil
}

func (v *view) buildAdjacency() {
	outDeg := make([]int32, len(v.nodes))
	inDeg := make([]int32, len(v.nodes))
	for _, e := range v.edges {
		outDeg[v.nodeIdx[e.Source]]++
		inDeg[v.nodeIdx[e.Target]]++
	}
	// One backing array for all lists: two allocations instead of one per node.
	backing := make([]int32, 2*len(v.edges))
	v.out = make([][]int32, len(v.nodes))
	v.in = make([][]int32, len(v.nodes))
	pos := 0
	for i := range v.nodes {
		v.out[i] = backing[pos : pos : pos+int(outDeg[i])]
		pos += int(outDeg[i])
		v.in[i] = backing[pos : pos : pos+int(inDeg[i])]
		pos += int(inDeg[i])
	}
	for ei, e := range v.edges {
		s, t := v.nodeIdx[e.Source], v.nodeIdx[e.Target]
		v.out[s] = append(v.out[s], int32(ei))
		v.in[t] = append(v.in[t], int32(ei))
	}
}

func (v *view) snapshot() datasource.Snapshot {
	return datasource.Snapshot{Graph: v.graph, Nodes: v.nodes, Edges: v.edges, Configs: v.configs}
}

// searchIndex builds the text index of this version once, on first use.
func (v *view) searchIndex() *search.Index {
	v.indexOnce.Do(func() { v.index = search.New(v.nodes, v.configs) })
	return v.index
}

// resolveSheet accepts a sheet id or a sheet name and returns the id.
func (v *view) resolveSheet(sheet string) (string, error) {
	return datasource.ResolveSheet(v.graph, sheet, func(id string) bool {
		for _, n := range v.nodes {
			if n.Sheet == id {
				return true
			}
		}
		return false
	})
}
