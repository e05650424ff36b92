// Package rag builds, for one question, the small part of a graph the model gets as
// context (the Nodius server's GraphRAGRetriever does the same job): rank nodes against the question (BM25F
// text search, fused with embedding similarity when available), take the best as
// seeds, expand their neighbourhood breadth-first, keep a bounded set of nodes with
// the edges between them and the configs of their types, and condense it all.
//
// Per graph, the retriever keeps the snapshot with its search index and adjacency,
// built once and reused by every question until the graph changes (Invalidate) or
// the snapshot ages out; finished contexts are cached by (graph, question).
package rag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
)

// Defaults of Options, the Nodius server's own (GraphRAGOptions), so that both give the
// model a context of the same size.
const (
	DefaultMaxNodes        = 20
	DefaultMaxDepth        = 2
	DefaultSeeds           = 5
	DefaultTruncateProcess = 500
	DefaultTruncateData    = 200
	DefaultCacheTTL        = 2 * time.Minute
	DefaultMaxCacheEntries = 256
)

// Options tune retrieval. Integer fields left at zero (or negative) take their
// default. CacheTTL is different, because "no cache" must be expressible: zero or
// negative disables the context cache, so start from DefaultOptions() to get the
// default two minutes.
type Options struct {
	MaxNodes        int // nodes kept in a context (mentioned nodes come on top)
	MaxDepth        int // BFS depth from each seed, edges followed in any direction
	Seeds           int // best-ranked nodes the expansion starts from
	TruncateProcess int // characters of code kept per node
	TruncateData    int // characters of compact JSON data kept per node
	// CacheTTL is how long a context is reused for the same (graph, question).
	// It also bounds the age of a graph snapshot (DefaultCacheTTL when the cache
	// is disabled), so changes made outside this process show up in time.
	CacheTTL        time.Duration
	MaxCacheEntries int              // oldest contexts are evicted past this many
	Now             func() time.Time // clock, for tests; time.Now when nil
	// Store keeps indexed graphs between processes (nil: none). A graph found
	// there is neither loaded from the source nor indexed again.
	Store IndexStore
	// Progress, when set, is told what a slow graph load is doing ("reading the
	// graph", "indexing 100000 nodes", ...), and "" when it is done, so that a
	// terminal can show it.
	Progress func(stage string)
	// Expander, when set, adds the chat model's rewording of each question to its
	// text search (retrieval.expand = "llm"); nil searches the question as asked.
	Expander Expander
}

// DefaultOptions returns the Nodius server's defaults: 20 nodes, depth 2, 5 seeds, 500 and
// 200 characters, a two-minute cache of at most 256 contexts.
func DefaultOptions() Options {
	return Options{
		MaxNodes:        DefaultMaxNodes,
		MaxDepth:        DefaultMaxDepth,
		Seeds:           DefaultSeeds,
		TruncateProcess: DefaultTruncateProcess,
		TruncateData:    DefaultTruncateData,
		CacheTTL:        DefaultCacheTTL,
		MaxCacheEntries: DefaultMaxCacheEntries,
	}
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxNodes, DefaultMaxNodes)
	def(&o.MaxDepth, DefaultMaxDepth)
	def(&o.Seeds, DefaultSeeds)
	def(&o.TruncateProcess, DefaultTruncateProcess)
	def(&o.TruncateData, DefaultTruncateData)
	def(&o.MaxCacheEntries, DefaultMaxCacheEntries)
	if o.CacheTTL < 0 {
		o.CacheTTL = 0
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Embedder turns texts into vectors (one per text, same order). Retrieval embeds
// the question with it; a failure only costs the vector half of the ranking.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Retriever builds question contexts over one data source. It is safe for
// concurrent use.
type Retriever struct {
	src   datasource.Source
	opts  Options
	emb   Embedder
	cache *contextCache

	mu     sync.Mutex
	graphs map[string]*graphState
}

// New returns a retriever over src. emb may be nil (text ranking only).
func New(src datasource.Source, opts Options, emb Embedder) *Retriever {
	opts = opts.withDefaults()
	return &Retriever{
		src:    src,
		opts:   opts,
		emb:    emb,
		cache:  newContextCache(opts.CacheTTL, opts.MaxCacheEntries),
		graphs: make(map[string]*graphState),
	}
}

// Options returns the effective options (defaults filled in).
func (r *Retriever) Options() Options { return r.opts }

// HasEmbedder reports whether questions are embedded for vector similarity (an
// embedding model is configured), so callers can say which ranking answered.
func (r *Retriever) HasEmbedder() bool { return r.emb != nil }

// Retrieve returns the context for a question about a graph. An unknown graph gives
// an error wrapping datasource.ErrNotFound.
func (r *Retriever) Retrieve(ctx context.Context, graphKey, query string) (*Context, error) {
	return r.RetrieveWith(ctx, graphKey, query, nil)
}

// RetrieveWith is Retrieve with node keys the user mentioned explicitly (`@key`):
// they are always in the context, in full (code and data not truncated), ahead of
// the ranked seeds, and expanded like them. Unknown keys are ignored.
//
// The returned Context is the caller's to keep or change; the cache holds its own
// copy.
func (r *Retriever) RetrieveWith(ctx context.Context, graphKey, query string, mentions []string) (*Context, error) {
	return r.RetrieveRequest(ctx, Request{GraphKey: graphKey, Question: query, Mentions: mentions})
}

// Request is one retrieval with its per-call choices (RetrieveRequest).
type Request struct {
	GraphKey string
	Question string
	// Mentions are node keys the user named (`@key`), as in RetrieveWith.
	Mentions []string
	// NoExpand searches the question as asked, without the Expander's model call: for
	// a caller that words its own query (an MCP client's agent calling graph_context),
	// where that call would spend tokens no run counts. The agent's own runs expand.
	NoExpand bool
}

// RetrieveRequest is RetrieveWith with per-call choices.
func (r *Retriever) RetrieveRequest(ctx context.Context, req Request) (*Context, error) {
	graphKey, query, mentions := req.GraphKey, req.Question, req.Mentions
	ckey := cacheKey(graphKey, query, mentions)
	if req.NoExpand && r.opts.Expander != nil {
		ckey = "\x01unexpanded\x00" + ckey // never served to a caller that expands
	}
	if c, ok := r.cache.get(ckey, r.opts.Now()); ok {
		c.Retrieval.CacheHit = true
		c.Retrieval.ExpandUsage = Usage{} // no call was made this time
		return c, nil
	}
	epoch := r.cache.currentEpoch()
	var x *expanded // the question's expansion, asked once whichever path ranks
	if ts, ok := r.src.(datasource.TextSearcher); ok {
		c, rx, err := r.retrieveRemote(ctx, ts, graphKey, query, mentions, req.NoExpand)
		if err != nil {
			return nil, err
		}
		if c != nil {
			r.cache.put(ckey, graphKey, c, r.opts.Now(), epoch)
			return c, nil
		}
		x = rx
	}
	st, err := r.state(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	if x == nil {
		if x, err = r.expandQuestion(ctx, query, req.NoExpand); err != nil {
			return nil, err
		}
	}
	c, err := r.build(ctx, st, graphKey, query, mentions, x)
	if err != nil {
		return nil, err
	}
	r.cache.put(ckey, graphKey, c, r.opts.Now(), epoch)
	return c, nil
}

// Invalidate drops the cached contexts and the snapshot (with its index) of a
// graph, or of every graph when graphKey is empty. Call it after a change is
// applied: the next question reloads the graph.
func (r *Retriever) Invalidate(graphKey string) {
	r.cache.invalidate(graphKey)
	r.mu.Lock()
	defer r.mu.Unlock()
	if graphKey == "" {
		clear(r.graphs)
		return
	}
	delete(r.graphs, graphKey)
}

// CacheSize is the number of live cached contexts.
func (r *Retriever) CacheSize() int { return r.cache.size(r.opts.Now()) }

// snapshotTTL bounds how long a loaded graph is trusted without an Invalidate.
func (r *Retriever) snapshotTTL() time.Duration {
	if r.opts.CacheTTL > 0 {
		return r.opts.CacheTTL
	}
	return DefaultCacheTTL
}

// Versioner is implemented by sources that number their graph's changes
// (datasource/memgraph, the file source). For them a snapshot is kept exactly as long
// as the graph's version is unchanged: every question sees the latest graph, and an
// unchanged graph is never indexed again. Other sources rely on Invalidate and the TTL.
type Versioner interface {
	Version(graphKey string) (uint64, error)
}

// stale reports whether a loaded snapshot must be loaded again.
func (r *Retriever) stale(st *graphState, graphKey string) bool {
	if st.err != nil {
		return true
	}
	if v, ok := r.src.(Versioner); ok && st.versioned {
		cur, err := v.Version(graphKey)
		return err != nil || cur != st.version
	}
	return r.opts.Now().Sub(st.loaded) > r.snapshotTTL()
}

// state returns the graph's indexed snapshot, loading it when missing or stale.
// Concurrent questions about the same graph share one load.
func (r *Retriever) state(ctx context.Context, graphKey string) (*graphState, error) {
	for attempt := 0; ; attempt++ {
		r.mu.Lock()
		st := r.graphs[graphKey]
		if st != nil && st.isReady() && r.stale(st, graphKey) {
			delete(r.graphs, graphKey)
			st = nil
		}
		if st == nil {
			st = &graphState{ready: make(chan struct{})}
			r.graphs[graphKey] = st
			r.mu.Unlock()
			st.load(ctx, r.src, r.opts.Store, r.opts.Progress, graphKey, r.opts.Now())
			if st.err != nil {
				r.mu.Lock()
				if r.graphs[graphKey] == st {
					delete(r.graphs, graphKey)
				}
				r.mu.Unlock()
				return nil, st.err
			}
			return st, nil
		}
		r.mu.Unlock()
		select {
		case <-st.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if st.err == nil {
			return st, nil
		}
		// Another question's load failed, perhaps only because its context was
		// cancelled: load again with ours, once.
		if attempt > 0 || !isContextErr(st.err) {
			return nil, st.err
		}
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// graphState is one graph snapshot with what retrieval derives from it once.
type graphState struct {
	ready  chan struct{} // closed when load has finished
	err    error
	loaded time.Time
	// version of the graph when it was loaded, for a Versioner source.
	version   uint64
	versioned bool

	snap    datasource.Snapshot
	index   *search.Index
	byKey   map[string]int
	adj     [][]neighbor // by node index, in edge order
	configs map[string]int
	vecs    [][]float32 // unit-length node embeddings, nil where a node has none

	// remote, when set, is the source's own ranking of the one question this
	// state was built for (retrieveRemote); snap then holds only the part of the
	// graph around its hits.
	remote *remoteRanking

	// Set when the state comes from an IndexStore: snap.Nodes then hold only keys,
	// types and sheets, snap.Edges is empty, and full records are read on demand.
	records  Records
	edgeEnds [][2]int32
}

type neighbor struct {
	node int32
	edge int32
}

func (st *graphState) isReady() bool {
	select {
	case <-st.ready:
		return true
	default:
		return false
	}
}

func (st *graphState) load(ctx context.Context, src datasource.Source, store IndexStore, progress func(string), graphKey string, now time.Time) {
	defer close(st.ready)
	if progress == nil {
		progress = func(string) {}
	}
	defer progress("")
	if v, ok := src.(Versioner); ok {
		// Read before the snapshot: a change in between makes the next question
		// reload, never keep a stale graph.
		if ver, err := v.Version(graphKey); err == nil {
			st.version, st.versioned = ver, true
		}
	}
	if store != nil {
		if g, ok := store.Load(ctx, src, graphKey); ok {
			st.loaded = now
			st.fromStored(g)
			return
		}
	}
	progress("reading graph " + graphKey)
	snap, err := datasource.LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		if errors.Is(err, datasource.ErrNotFound) {
			// Whatever the source's wording, say it the one way callers expect.
			st.err = &datasource.NotFoundError{Kind: "graph", Key: graphKey}
		} else {
			st.err = fmt.Errorf("load graph %s: %w", graphKey, err)
		}
		return
	}
	st.loaded = now
	progress(fmt.Sprintf("indexing %d nodes", len(snap.Nodes)))
	st.fill(snap)
	if store != nil {
		progress("saving the index for the next command")
		store.Save(ctx, src, graphKey, st.stored())
	}
}

// fill derives from a snapshot what retrieval needs: the search index, the key
// maps, the adjacency and the unit-length embeddings.
func (st *graphState) fill(snap datasource.Snapshot) {
	st.snap = snap
	indexed := make(chan *search.Index, 1)
	go func() { indexed <- search.NewGraph(snap) }() // the longest part: alongside the rest
	defer func() { st.index = <-indexed }()
	st.indexMaps()
	st.adj = make([][]neighbor, len(snap.Nodes))
	for ei, e := range snap.Edges {
		s, ok1 := st.byKey[e.Source]
		t, ok2 := st.byKey[e.Target]
		if !ok1 || !ok2 {
			continue // dangling edge: nothing to walk to
		}
		st.adj[s] = append(st.adj[s], neighbor{node: int32(t), edge: int32(ei)})
		if s != t {
			st.adj[t] = append(st.adj[t], neighbor{node: int32(s), edge: int32(ei)})
		}
	}
	for i, n := range snap.Nodes {
		if v := unit(n.Embedding); v != nil {
			if st.vecs == nil {
				st.vecs = make([][]float32, len(snap.Nodes))
			}
			st.vecs[i] = v
		}
	}
}

// indexMaps builds the key → index maps of the state's nodes and configs.
func (st *graphState) indexMaps() {
	st.byKey = make(map[string]int, len(st.snap.Nodes))
	for i, n := range st.snap.Nodes {
		if _, dup := st.byKey[n.Key]; !dup {
			st.byKey[n.Key] = i
		}
	}
	st.configs = make(map[string]int, len(st.snap.Configs))
	for i, c := range st.snap.Configs {
		if _, dup := st.configs[c.Key]; !dup {
			st.configs[c.Key] = i
		}
	}
}

// unit returns v scaled to length 1, or nil for an empty or zero vector.
func unit(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return nil
	}
	inv := 1 / math.Sqrt(ss)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

func cacheKey(graphKey, query string, mentions []string) string {
	var b strings.Builder
	b.WriteString(graphKey)
	b.WriteByte(0)
	b.WriteString(query)
	for _, m := range mentions {
		b.WriteByte(0)
		b.WriteString(m)
	}
	return b.String()
}

// candidateDepth is how deep each ranking (text, vector) is read before fusion.
func (r *Retriever) candidateDepth() int {
	return max(50, r.opts.MaxNodes, r.opts.Seeds)
}

// build runs the pipeline after the cache: rank, pick seeds, expand, assemble.
func (r *Retriever) build(ctx context.Context, st *graphState, graphKey, query string, mentions []string, x *expanded) (*Context, error) {
	ranked, info, err := r.rank(ctx, st, graphKey, query, x)
	if err != nil {
		return nil, err
	}
	o := r.opts

	hits := make([]Hit, 0, min(len(ranked), o.MaxNodes))
	for _, h := range ranked[:min(len(ranked), o.MaxNodes)] {
		hits = append(hits, Hit{Key: st.snap.Nodes[h.idx].Key, Score: h.score}) // keys are always in memory
	}

	full := make(map[int]bool) // mentioned nodes: kept whole
	var seeds []int
	for _, m := range mentions {
		if i, ok := st.byKey[m]; ok && !full[i] {
			full[i] = true
			seeds = append(seeds, i)
		}
	}
	limit := max(o.MaxNodes, len(seeds))
	switch {
	case len(ranked) > 0:
		n := 0
		for _, h := range ranked {
			if n == o.Seeds {
				break
			}
			if !full[h.idx] {
				seeds = append(seeds, h.idx)
				n++
			}
		}
	case len(seeds) == 0:
		// Nothing matched and nothing was named (a "describe this graph" question):
		// the first nodes, as the Nodius server does: an overview is better than nothing.
		info.Fallback = true
		for i := 0; i < len(st.snap.Nodes) && i < o.MaxNodes; i++ {
			seeds = append(seeds, i)
		}
	}

	kept := expand(st.adj, seeds, o.MaxDepth, limit)
	c := r.assemble(st, query, hits, kept, full)
	c.Retrieval = info
	return c, nil
}

// expand walks edges breadth-first from all seeds at once, level by level, so a
// node one hop from any seed comes before any node two hops away; it stops when
// limit nodes are kept. Seeds come first, in their order.
func expand(adj [][]neighbor, seeds []int, depth, limit int) []int {
	kept := make([]int, 0, limit)
	seen := make(map[int]bool, limit)
	var frontier []int
	for _, s := range seeds {
		if len(kept) == limit {
			return kept
		}
		if !seen[s] {
			seen[s] = true
			kept = append(kept, s)
			frontier = append(frontier, s)
		}
	}
	for d := 0; d < depth && len(frontier) > 0; d++ {
		var next []int
		for _, f := range frontier {
			for _, nb := range adj[f] {
				n := int(nb.node)
				if seen[n] {
					continue
				}
				if len(kept) == limit {
					return kept
				}
				seen[n] = true
				kept = append(kept, n)
				next = append(next, n)
			}
		}
		frontier = next
	}
	return kept
}

// rankedNode is one entry of the fused ranking.
type rankedNode struct {
	idx   int
	score float64
	named bool // the question names the node's key outright
}

// rank orders the graph's nodes for the question, best first. Text ranking alone
// when there is no embedder, no usable vector, or the question is blank.
func (r *Retriever) rank(ctx context.Context, st *graphState, graphKey, query string, x *expanded) ([]rankedNode, RetrievalInfo, error) {
	depth := r.candidateDepth()
	info := x.info
	var text []search.Hit
	var vec []rankedNode
	if rr := st.remote; rr != nil { // ranked by the source (retrieveRemote), expansion included
		text, vec = rr.text, rr.vec
		info.Server, info.Vector, info.EmbedError = true, len(vec) > 0, rr.embedErr
	} else {
		text = textSearch(st.index, query, x.terms, depth)
	}
	if st.remote == nil && r.emb != nil && strings.TrimSpace(query) != "" {
		qv, err := r.embedQuery(ctx, query)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return nil, info, ctxErr
			}
			info.EmbedError = err.Error()
		} else {
			vec, err = r.vectorRank(ctx, st, graphKey, qv, depth)
			if err != nil {
				if ctxErr := ctx.Err(); ctxErr != nil {
					return nil, info, ctxErr
				}
				info.EmbedError = err.Error()
			}
			info.Vector = len(vec) > 0
		}
	}
	// Text scores, fused with vector similarity when there is some, are comparable
	// across nodes, so a share of them can spread along the edges.
	ranked := propagate(st, fuse(text, vec))
	if dir, anchorQuery := relation(query); dir != noRelation {
		// A relational question describes the node it starts from (the anchor), not
		// the one it asks for. The anchor is found by the words of that description,
		// and the anchor's neighbours in the asked direction are ordered by the
		// question's words too; only when no node shares a word with the description
		// is the anchor found by meaning, and then the meaning orders its neighbours
		// as well. The nodes after them follow the question's ranking, words and
		// meaning fused, as for any question.
		//
		// Why meaning does not join words here as it does for any other question:
		// an anchor is described in a few words that fit two or three nodes about as
		// well, and what the stand-in model read in them moved a wrong anchor up as
		// often as the right one on sets nobody had tuned on. With the anchor and
		// the order fused, hybrid lost relational questions to text alone on each
		// of the six sets first measured after that choice (0.744 → 0.742, 0.693 →
		// 0.628, 0.742 → 0.722, 0.630 → 0.616 on the last four), while winning on
		// the sets it was chosen on. Found by words, with meaning as the fallback,
		// hybrid ties or beats text on relational questions on those sets but for
		// questions it does not read as relational, and gains as much over the
		// twelve sets together (MRR 0.711 → 0.723). On the two sets measured after,
		// it tied (0.706) and won (0.634 → 0.674). Ranking the nodes after the
		// neighbours and the anchors by the fused ranking rather than by words then
		// raised hybrid's relational MRR on eight of the fourteen sets and lowered
		// it on one (0.692 → 0.689), 0.718 → 0.721 over all of them.
		var anchors, order []rankedNode
		if hits := st.index.Search(anchorQuery, depth); len(hits) > 0 {
			anchors = fuse(hits, nil)
			order = ranked
			if len(vec) > 0 {
				order = propagate(st, fuse(text, nil))
			}
		} else {
			anchors, order = fuse(nil, vec), ranked
		}
		if rel := r.relationalRank(st, dir, anchors, order, ranked); rel != nil {
			return rel, info, nil
		}
	}
	return ranked, info, nil
}

func (r *Retriever) embedQuery(ctx context.Context, query string) ([]float32, error) {
	vs, err := r.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed question: %w", err)
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, fmt.Errorf("embed question: got %d vectors", len(vs))
	}
	return vs[0], nil
}

// minCosine is the Nodius server's similarity floor: below it a node is not "similar" at
// all, and letting it into the fusion would only add noise.
const minCosine = 0.3

// vectorRank ranks nodes by similarity to the question's vector: on the source's
// side when it can (VectorSearcher), else in memory over the nodes' embeddings.
func (r *Retriever) vectorRank(ctx context.Context, st *graphState, graphKey string, qv []float32, limit int) ([]rankedNode, error) {
	if vs, ok := r.src.(datasource.VectorSearcher); ok {
		res, err := vs.VectorSearch(ctx, graphKey, qv, limit)
		if err == nil {
			out := make([]rankedNode, 0, len(res))
			seen := make(map[int]bool, len(res))
			for _, sn := range res {
				if i, ok := st.byKey[sn.Node.Key]; ok && !seen[i] {
					seen[i] = true
					out = append(out, rankedNode{idx: i, score: sn.Score})
				}
			}
			if len(out) > 0 {
				return out, nil
			}
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Fall through to in-memory similarity, which may still have vectors.
	}
	if st.vecs == nil {
		return nil, nil
	}
	q := unit(qv)
	if q == nil {
		return nil, errors.New("question embedding is a zero vector")
	}
	var out []rankedNode
	for i, v := range st.vecs {
		if len(v) != len(q) {
			continue // no embedding, or from another model
		}
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
		}
		if dot > minCosine {
			out = append(out, rankedNode{idx: i, score: dot})
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].score > out[b].score })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
