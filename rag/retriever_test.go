package rag

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/gen"
)

func demoRetriever(t testing.TB, opts Options, emb Embedder) (*Retriever, *fakeSource) {
	t.Helper()
	src := newFakeSource(demoSnapshot(t))
	return New(src, opts, emb), src
}

func TestRetrieveSearchFirst(t *testing.T) {
	t.Parallel()
	tests := []struct {
		query string
		first string
	}{
		{"Que fait le node fetch-api ?", "fetch-api"},
		{"what does fetchApi do?", "fetch-api"},
		{"FETCH_API", "fetch-api"},
		{"which node handles errors?", "error-handler"},
		{"Quel nœud gère les erreurs ?", "error-handler"},
		{"Quel noeud gere les erreurs ?", "error-handler"}, // typed without accents
		{"active players filter", "filter-active"},
		{"trier les statistiques par points", "sort-stats"},
		{"render the HTML table", "display-html"},
		{"What does the return node do?", "return"},
	}
	r, _ := demoRetriever(t, DefaultOptions(), nil)
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			c, err := r.Retrieve(context.Background(), "demo", tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Hits) == 0 || c.Hits[0].Key != tt.first {
				t.Fatalf("hits = %v, want %s first", hitKeys(c), tt.first)
			}
			if c.Nodes[0].Key != tt.first {
				t.Errorf("nodes = %v, want %s first", nodeKeys(c), tt.first)
			}
			for i := 1; i < len(c.Hits); i++ {
				if c.Hits[i].Score > c.Hits[i-1].Score {
					t.Errorf("hits not best first: %+v", c.Hits)
				}
			}
			if c.Query != tt.query || c.Graph.Key != "demo" || c.Graph.Name == "" {
				t.Errorf("query/graph = %q %+v", c.Query, c.Graph)
			}
		})
	}
}

// TestRetrieveExpansion checks the BFS from the seeds: depth, any direction,
// the node cap with seeds first, and edges kept only between kept nodes.
func TestRetrieveExpansion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		opts      Options
		query     string
		wantNodes []string // exact order
		wantEdges []string
	}{
		{
			name:      "depth 1 any direction",
			opts:      Options{Seeds: 1, MaxDepth: 1},
			query:     "fetch-api",
			wantNodes: []string{"fetch-api", "root", "filter-active", "error-handler"},
			wantEdges: []string{"e2", "e3", "e4"},
		},
		{
			name:      "depth 2",
			opts:      Options{Seeds: 1, MaxDepth: 2},
			query:     "fetch-api",
			wantNodes: []string{"fetch-api", "root", "filter-active", "error-handler", "entry-form", "display-html"},
			wantEdges: []string{"e1", "e2", "e3", "e4", "e5"},
		},
		{
			name:      "inbound only neighbour reached (any direction)",
			opts:      Options{Seeds: 1, MaxDepth: 1},
			query:     "error-handler",
			wantNodes: []string{"error-handler", "fetch-api"},
			wantEdges: []string{"e4"},
		},
		{
			name:      "max nodes keeps seeds first",
			opts:      Options{Seeds: 1, MaxDepth: 2, MaxNodes: 3},
			query:     "fetch-api",
			wantNodes: []string{"fetch-api", "root", "filter-active"},
			wantEdges: []string{"e2", "e3"},
		},
		{
			name:      "max nodes one",
			opts:      Options{MaxNodes: 1},
			query:     "fetch-api",
			wantNodes: []string{"fetch-api"},
			wantEdges: []string{},
		},
		{
			name:      "disconnected node expands to nothing",
			opts:      Options{Seeds: 1, MaxDepth: 2},
			query:     "disconnected-note",
			wantNodes: []string{"disconnected-note"},
			wantEdges: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := demoRetriever(t, tt.opts, nil)
			c, err := r.Retrieve(context.Background(), "demo", tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := nodeKeys(c); !reflect.DeepEqual(got, tt.wantNodes) {
				t.Errorf("nodes = %v, want %v", got, tt.wantNodes)
			}
			var edges []string
			kept := map[string]bool{}
			for _, n := range c.Nodes {
				kept[n.Key] = true
			}
			for _, e := range c.Edges {
				edges = append(edges, e.Key)
				if !kept[e.Source] || !kept[e.Target] {
					t.Errorf("edge %s has an end outside the context", e.Key)
				}
			}
			if edges == nil {
				edges = []string{}
			}
			if !reflect.DeepEqual(edges, tt.wantEdges) {
				t.Errorf("edges = %v, want %v", edges, tt.wantEdges)
			}
		})
	}
}

func TestRetrieveDefaultsSeedsAndCap(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, DefaultOptions(), nil)
	o := r.Options()
	if o.MaxNodes != 20 || o.MaxDepth != 2 || o.Seeds != 5 || o.TruncateProcess != 500 || o.TruncateData != 200 || o.CacheTTL != 2*time.Minute {
		t.Fatalf("defaults = %+v", o)
	}
	// A zero Options gets the same numbers, except the cache, which zero disables.
	z := New(newFakeSource(), Options{}, nil).Options()
	if z.MaxNodes != 20 || z.Seeds != 5 || z.CacheTTL != 0 {
		t.Fatalf("zero options = %+v", z)
	}
	c, err := r.Retrieve(context.Background(), "demo", "players stats")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) > 20 {
		t.Errorf("%d nodes", len(c.Nodes))
	}
	// The first nodes are the top hits (seeds), in rank order.
	n := min(5, len(c.Hits))
	for i := 0; i < n; i++ {
		if c.Nodes[i].Key != c.Hits[i].Key {
			t.Errorf("node %d = %s, hit %d = %s", i, c.Nodes[i].Key, i, c.Hits[i].Key)
		}
	}
}

func TestRetrieveFallback(t *testing.T) {
	t.Parallel()
	all := []string{"entry-form", "root", "fetch-api", "filter-active", "display-html", "return", "error-handler", "sort-stats", "disconnected-note"}
	tests := []struct {
		name  string
		query string
		opts  Options
		want  []string
	}{
		{"empty query", "", Options{}, all},
		{"stop words only (fr)", "Que fait ce graphe ?", Options{}, all},
		{"stop words only (en)", "Describe the workflow graph, please", Options{}, all},
		{"no match", "zzzqqq xylophone", Options{}, all},
		{"capped by max nodes", "", Options{MaxNodes: 4}, all[:4]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, _ := demoRetriever(t, tt.opts, nil)
			c, err := r.Retrieve(context.Background(), "demo", tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Retrieval.Fallback || len(c.Hits) != 0 {
				t.Errorf("fallback = %v, hits = %v", c.Retrieval.Fallback, c.Hits)
			}
			if got := nodeKeys(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("nodes = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRetrieveAssembly(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, Options{TruncateData: 50}, nil)
	c, err := r.Retrieve(context.Background(), "demo", "fetch-api sort-stats")
	if err != nil {
		t.Fatal(err)
	}
	fa, ok := findNode(c, "fetch-api")
	if !ok {
		t.Fatal("fetch-api missing")
	}
	if fa.TypeName != "API Call" || fa.SheetName != "main" || fa.Sheet != "0" {
		t.Errorf("fetch-api names = %q %q", fa.TypeName, fa.SheetName)
	}
	if !strings.HasSuffix(fa.Process, "...") || utf8.RuneCountInString(fa.Process) != 503 {
		t.Errorf("process not truncated to 500+...: %d runes", utf8.RuneCountInString(fa.Process))
	}
	if !strings.HasSuffix(fa.DataSummary, "...") || utf8.RuneCountInString(fa.DataSummary) != 53 || !strings.HasPrefix(fa.DataSummary, `{"method":"GET"`) && !strings.HasPrefix(fa.DataSummary, `{"url":`) {
		t.Errorf("data summary = %q", fa.DataSummary)
	}
	wantHandles := []HandleSummary{{Side: "L", Points: []string{"0:in(any)"}}, {Side: "R", Points: []string{"0:out(any)", "1:out(any)"}}}
	if !reflect.DeepEqual(fa.Handles, wantHandles) {
		t.Errorf("handles = %+v", fa.Handles)
	}
	ss, ok := findNode(c, "sort-stats")
	if !ok || ss.SheetName != "data-processing" || ss.TypeName != "Transform" {
		t.Errorf("sort-stats = %+v", ss)
	}
	if root, ok := findNode(c, "root"); !ok || root.TypeName != "starter" {
		t.Errorf("root (built-in) type name = %+v", root)
	}
	var cfgs []string
	for _, cf := range c.Configs {
		cfgs = append(cfgs, cf.Key)
		if cf.Key == "api-call" && (cf.DisplayName != "API Call" || cf.Handles == "" || cf.Category != "network") {
			t.Errorf("api-call config = %+v", cf)
		}
	}
	used := map[string]bool{}
	for _, n := range c.Nodes {
		used[n.Type] = true
	}
	for _, k := range cfgs {
		if !used[k] || datasource.IsBuiltinType(k) {
			t.Errorf("config %s not used by a node or built-in", k)
		}
	}
	if !slices.Contains(cfgs, "api-call") || !slices.Contains(cfgs, "transform") {
		t.Errorf("configs = %v", cfgs)
	}
	if c.Graph.Sheets["1"] != "data-processing" {
		t.Errorf("graph sheets = %v", c.Graph.Sheets)
	}
}

func TestConfigSummaryHandles(t *testing.T) {
	t.Parallel()
	cs := configSummary(datasource.NodeConfig{Key: "x", Handles: map[string]datasource.HandleGroup{
		"R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}}},
		"L": {Point: []datasource.HandlePoint{{ID: "0", Type: "in", Accept: "string"}}},
	}})
	if cs.Handles != "L:in(string), R:out(any)" {
		t.Errorf("handles summary = %q", cs.Handles)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc..."},
		{"ééééé", 2, "éé..."},
		{"", 3, ""},
		{"abc", 3, "abc"},
	}
	for _, tt := range tests {
		if got := truncate(tt.in, tt.max); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}

func TestRetrieveMentions(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, Options{MaxNodes: 3, Seeds: 1}, nil)
	c, err := r.RetrieveWith(context.Background(), "demo", "sort players by points", []string{"fetch-api", "unknown-node", "fetch-api", "disconnected-note"})
	if err != nil {
		t.Fatal(err)
	}
	keys := nodeKeys(c)
	if len(keys) < 3 || keys[0] != "fetch-api" || keys[1] != "disconnected-note" || keys[2] != "sort-stats" {
		t.Fatalf("nodes = %v, want mentions then the seed", keys)
	}
	fa, _ := findNode(c, "fetch-api")
	if strings.HasSuffix(fa.Process, "...") || utf8.RuneCountInString(fa.Process) != 1474 {
		t.Errorf("mentioned node truncated: %d runes", utf8.RuneCountInString(fa.Process))
	}
	if len(c.Hits) == 0 || c.Hits[0].Key != "sort-stats" {
		t.Errorf("hits are the search ranking only: %v", hitKeys(c))
	}
	// Mentions alone (no matching words): no fallback, the mentioned node and its
	// neighbourhood.
	c, err = r.RetrieveWith(context.Background(), "demo", "explique ça", []string{"error-handler"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Retrieval.Fallback || nodeKeys(c)[0] != "error-handler" || !slices.Contains(nodeKeys(c), "fetch-api") {
		t.Errorf("mention-only context = %v (fallback %v)", nodeKeys(c), c.Retrieval.Fallback)
	}
}

func TestRetrieveUnknownGraph(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, DefaultOptions(), nil)
	_, err := r.Retrieve(context.Background(), "nope", "fetch")
	if !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if err.Error() != "graph not found: nope" {
		t.Errorf("message = %q", err.Error())
	}
	if r.CacheSize() != 0 {
		t.Errorf("error cached")
	}
	// A source failure that is not "not found" is wrapped, not disguised.
	src := newFakeSource(demoSnapshot(t))
	boom := errors.New("connection refused")
	src.fail = boom
	_, err = New(src, DefaultOptions(), nil).Retrieve(context.Background(), "demo", "fetch")
	if !errors.Is(err, boom) || errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("err = %v", err)
	}
}

func TestRetrieveCancelled(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, DefaultOptions(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := r.Retrieve(ctx, "demo", "fetch"); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestRetrieveCache(t *testing.T) {
	t.Parallel()
	type step struct {
		do       string // "get:QUERY", "get@GRAPH:QUERY", "advance:DUR", "invalidate:GRAPH"
		wantHit  bool
		wantSize int
	}
	other := demoSnapshot(t)
	other.Graph.Key = "other"
	tests := []struct {
		name  string
		opts  Options
		steps []step
	}{
		{"hit then miss for another query", DefaultOptions(), []step{
			{do: "get:fetch-api", wantSize: 1},
			{do: "get:fetch-api", wantHit: true, wantSize: 1},
			{do: "get:filter", wantSize: 2},
		}},
		{"expiry after the TTL", DefaultOptions(), []step{
			{do: "get:fetch-api", wantSize: 1},
			{do: "advance:119s", wantSize: 1},
			{do: "get:fetch-api", wantHit: true, wantSize: 1},
			{do: "advance:2s", wantSize: 0},
			{do: "get:fetch-api", wantSize: 1},
		}},
		{"clear all", DefaultOptions(), []step{
			{do: "get:fetch-api", wantSize: 1},
			{do: "get@other:fetch-api", wantSize: 2},
			{do: "invalidate:", wantSize: 0},
			{do: "get:fetch-api", wantSize: 1},
		}},
		{"selective clear", DefaultOptions(), []step{
			{do: "get:fetch-api", wantSize: 1},
			{do: "get@other:fetch-api", wantSize: 2},
			{do: "invalidate:demo", wantSize: 1},
			{do: "get@other:fetch-api", wantHit: true, wantSize: 1},
			{do: "get:fetch-api", wantSize: 2},
		}},
		{"disabled by zero TTL", Options{}, []step{
			{do: "get:fetch-api", wantSize: 0},
			{do: "get:fetch-api", wantSize: 0},
		}},
		{"bounded, oldest evicted", Options{CacheTTL: time.Minute, MaxCacheEntries: 2}, []step{
			{do: "get:a1", wantSize: 1},
			{do: "get:fetch", wantSize: 2},
			{do: "get:filter", wantSize: 2},
			{do: "get:filter", wantHit: true, wantSize: 2},
			{do: "get:fetch", wantHit: true, wantSize: 2},
			{do: "get:a1", wantSize: 2},
		}},
		{"mentions are part of the key", DefaultOptions(), []step{
			{do: "get:fetch", wantSize: 1},
			{do: "get:fetch|root", wantSize: 2},
			{do: "get:fetch|root", wantHit: true, wantSize: 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			clk := newClock()
			opts := tt.opts
			opts.Now = clk.Now
			emb := &fakeEmbedder{def: []float32{1, 0}}
			src := newFakeSource(demoSnapshot(t), other)
			r := New(src, opts, emb)
			for i, s := range tt.steps {
				verb, arg, _ := strings.Cut(s.do, ":")
				switch verb {
				case "advance":
					d, err := time.ParseDuration(arg)
					if err != nil {
						t.Fatal(err)
					}
					clk.Advance(d)
				case "invalidate":
					r.Invalidate(arg)
				default:
					graph := "demo"
					if _, g, ok := strings.Cut(verb, "@"); ok {
						graph = g
					}
					q, m, _ := strings.Cut(arg, "|")
					var mentions []string
					if m != "" {
						mentions = []string{m}
					}
					calls := emb.Calls()
					c, err := r.RetrieveWith(context.Background(), graph, q, mentions)
					if err != nil {
						t.Fatal(err)
					}
					if c.Retrieval.CacheHit != s.wantHit {
						t.Errorf("step %d %s: cache hit = %v, want %v", i, s.do, c.Retrieval.CacheHit, s.wantHit)
					}
					// The cache is checked before the question is embedded.
					if embedded := emb.Calls() > calls; embedded == s.wantHit {
						t.Errorf("step %d %s: embedded = %v on cache hit %v", i, s.do, embedded, s.wantHit)
					}
				}
				if got := r.CacheSize(); got != s.wantSize {
					t.Errorf("step %d %s: cache size = %d, want %d", i, s.do, got, s.wantSize)
				}
			}
		})
	}
}

func TestCachedContextIsACopy(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, DefaultOptions(), nil)
	ctx := context.Background()
	a, err := r.Retrieve(ctx, "demo", "fetch-api")
	if err != nil {
		t.Fatal(err)
	}
	want := a.Nodes[0].Key
	a.Nodes[0].Key = "mutated"
	a.Nodes[0].Handles[0].Points[0] = "mutated"
	a.Hits = nil
	a.Graph.Sheets["0"] = "mutated"
	b, err := r.Retrieve(ctx, "demo", "fetch-api")
	if err != nil {
		t.Fatal(err)
	}
	if !b.Retrieval.CacheHit || b.Nodes[0].Key != want || b.Nodes[0].Handles[0].Points[0] == "mutated" || len(b.Hits) == 0 || b.Graph.Sheets["0"] != "main" {
		t.Errorf("cache shared memory with the caller: %+v", b.Nodes[0])
	}
}

// TestSnapshotReuseAndInvalidate: the graph is loaded (and indexed) once for many
// questions; Invalidate drops both the cached contexts and the snapshot, so a change
// to the source shows up at once; without it, the snapshot ages out with the TTL.
func TestSnapshotReuseAndInvalidate(t *testing.T) {
	t.Parallel()
	clk := newClock()
	opts := DefaultOptions()
	opts.Now = clk.Now
	r, src := demoRetriever(t, opts, nil)
	ctx := context.Background()
	for _, q := range []string{"fetch", "filter", "sort", "html", "errors", "fetch"} {
		if _, err := r.Retrieve(ctx, "demo", q); err != nil {
			t.Fatal(err)
		}
	}
	if src.Loads() != 1 {
		t.Fatalf("loads = %d, want 1 (snapshot and index reused)", src.Loads())
	}

	src.setProcess("demo", "sort-stats", "// quokka marker\n")
	c, _ := r.Retrieve(ctx, "demo", "quokka")
	if !c.Retrieval.Fallback {
		t.Fatalf("change visible before Invalidate: %v", hitKeys(c))
	}
	r.Invalidate("demo")
	if r.CacheSize() != 0 {
		t.Errorf("cache not dropped")
	}
	c, _ = r.Retrieve(ctx, "demo", "quokka")
	if len(c.Hits) == 0 || c.Hits[0].Key != "sort-stats" {
		t.Fatalf("after Invalidate: hits %v", hitKeys(c))
	}
	if src.Loads() != 2 {
		t.Errorf("loads = %d, want 2", src.Loads())
	}

	// Aging out: a change made behind the retriever's back shows after the TTL.
	src.setProcess("demo", "sort-stats", "// wombat marker\n")
	clk.Advance(DefaultCacheTTL + time.Second)
	c, _ = r.Retrieve(ctx, "demo", "wombat")
	if len(c.Hits) == 0 || c.Hits[0].Key != "sort-stats" {
		t.Fatalf("after TTL: hits %v", hitKeys(c))
	}
	if src.Loads() != 3 {
		t.Errorf("loads = %d, want 3", src.Loads())
	}
}

func TestRetrieveConcurrent(t *testing.T) {
	t.Parallel()
	r, src := demoRetriever(t, DefaultOptions(), nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				q := fmt.Sprintf("fetch api %d", (i+j)%5)
				c, err := r.Retrieve(context.Background(), "demo", q)
				if err != nil {
					errs <- err
					return
				}
				if c.Hits[0].Key != "fetch-api" {
					errs <- fmt.Errorf("%q: %v", q, hitKeys(c))
					return
				}
				if j == 10 && i%4 == 0 {
					r.Invalidate("demo")
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if src.Loads() < 1 {
		t.Error("never loaded")
	}
}

// withEmbeddings returns the demo graph with hand-made unit vectors: one axis per
// node, so a question's vector says exactly which node it is "about".
func withEmbeddings(t testing.TB) (datasource.Snapshot, map[string][]float32) {
	snap := demoSnapshot(t)
	nodes := append([]datasource.Node(nil), snap.Nodes...)
	axes := map[string][]float32{}
	for i := range nodes {
		v := make([]float32, len(nodes))
		v[i] = 1
		nodes[i].Embedding = v
		axes[nodes[i].Key] = v
	}
	snap.Nodes = nodes
	return snap, axes
}

func TestRetrieveEmbeddings(t *testing.T) {
	t.Parallel()
	snap, axes := withEmbeddings(t)
	ctx := context.Background()
	text := New(newFakeSource(snap), Options{}, nil)

	t.Run("fusion lifts the semantic match above the text winner", func(t *testing.T) {
		t.Parallel()
		const q = "players stats"
		base, err := text.Retrieve(ctx, "demo", q)
		if err != nil {
			t.Fatal(err)
		}
		if len(base.Hits) < 2 {
			t.Fatalf("need two text hits, got %v", hitKeys(base))
		}
		target := base.Hits[1].Key // second by words, first by meaning
		emb := &fakeEmbedder{vectors: map[string][]float32{q: axes[target]}}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", q)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Retrieval.Vector || c.Hits[0].Key != target {
			t.Errorf("text %v → fused %v, want %s first", hitKeys(base), hitKeys(c), target)
		}
	})
	t.Run("paraphrase with no word in common", func(t *testing.T) {
		t.Parallel()
		const q = "who talks to the outside world?"
		if base, _ := text.Retrieve(ctx, "demo", q); len(base.Hits) != 0 {
			t.Fatalf("text alone found %v", hitKeys(base))
		}
		emb := &fakeEmbedder{vectors: map[string][]float32{q: {0, 0, 0.9, 0, 0, 0, 0.1, 0, 0}}}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", q)
		if err != nil {
			t.Fatal(err)
		}
		// Only fetch-api is above the similarity floor; its neighbours follow with
		// the share of its score that graph-aware ranking spreads along edges.
		neighbours := []string{"fetch-api", "root", "filter-active", "error-handler"}
		if c.Retrieval.Fallback || len(c.Hits) == 0 || c.Hits[0].Key != "fetch-api" {
			t.Fatalf("hits = %v, want fetch-api first", hitKeys(c))
		}
		for _, k := range hitKeys(c) {
			if !slices.Contains(neighbours, k) {
				t.Errorf("hits = %v: %s is neither similar nor next to fetch-api", hitKeys(c), k)
			}
		}
	})
	t.Run("a named key stays first", func(t *testing.T) {
		t.Parallel()
		// display-html is liked by both rankings (the word "html", and the vector),
		// so by fusion alone it would beat fetch-api: only being named wins.
		const q = "Que fait le node fetch-api avec le html ?"
		emb := &fakeEmbedder{vectors: map[string][]float32{q: axes["display-html"]}}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", q)
		if err != nil {
			t.Fatal(err)
		}
		if c.Hits[0].Key != "fetch-api" || !slices.Contains(hitKeys(c), "display-html") {
			t.Errorf("hits = %v", hitKeys(c))
		}
	})
	t.Run("nil embedder", func(t *testing.T) {
		t.Parallel()
		c, err := New(newFakeSource(snap), Options{}, nil).Retrieve(ctx, "demo", "fetch-api")
		if err != nil || c.Retrieval.Vector || c.Hits[0].Key != "fetch-api" {
			t.Errorf("c = %v, err = %v", c, err)
		}
	})
	t.Run("failing embedder falls back to text", func(t *testing.T) {
		t.Parallel()
		emb := &fakeEmbedder{err: errors.New("429 rate limited")}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", "fetch-api")
		if err != nil {
			t.Fatal(err)
		}
		if c.Retrieval.Vector || !strings.Contains(c.Retrieval.EmbedError, "429") || c.Hits[0].Key != "fetch-api" {
			t.Errorf("retrieval = %+v, hits = %v", c.Retrieval, hitKeys(c))
		}
	})
	t.Run("empty vector is a failure too", func(t *testing.T) {
		t.Parallel()
		emb := &fakeEmbedder{def: nil}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", "fetch-api")
		if err != nil || c.Retrieval.Vector || c.Retrieval.EmbedError == "" {
			t.Errorf("retrieval = %+v, err = %v", c.Retrieval, err)
		}
	})
	t.Run("empty query is not embedded", func(t *testing.T) {
		t.Parallel()
		emb := &fakeEmbedder{def: axes["root"]}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", "   ")
		if err != nil {
			t.Fatal(err)
		}
		if emb.Calls() != 0 || !c.Retrieval.Fallback {
			t.Errorf("calls = %d, fallback = %v", emb.Calls(), c.Retrieval.Fallback)
		}
	})
	t.Run("graph without embeddings", func(t *testing.T) {
		t.Parallel()
		emb := &fakeEmbedder{def: axes["root"]}
		c, err := New(newFakeSource(demoSnapshot(t)), Options{}, emb).Retrieve(ctx, "demo", "fetch-api")
		if err != nil || c.Retrieval.Vector || c.Hits[0].Key != "fetch-api" {
			t.Errorf("retrieval = %+v, err = %v", c.Retrieval, err)
		}
	})
	t.Run("mismatched dimensions are skipped", func(t *testing.T) {
		t.Parallel()
		emb := &fakeEmbedder{def: []float32{1, 0, 0}}
		c, err := New(newFakeSource(snap), Options{}, emb).Retrieve(ctx, "demo", "fetch-api")
		if err != nil || c.Retrieval.Vector || c.Hits[0].Key != "fetch-api" {
			t.Errorf("retrieval = %+v, err = %v", c.Retrieval, err)
		}
	})
	t.Run("source-side vector search", func(t *testing.T) {
		t.Parallel()
		vs := &vectorSource{fakeSource: newFakeSource(demoSnapshot(t)), results: []datasource.ScoredNode{
			{Node: datasource.Node{Key: "sort-stats"}, Score: 0.9},
			{Node: datasource.Node{Key: "ghost"}, Score: 0.8},
		}}
		emb := &fakeEmbedder{def: []float32{1, 2, 3}}
		c, err := New(vs, Options{}, emb).Retrieve(ctx, "demo", "who talks to the outside world?")
		if err != nil {
			t.Fatal(err)
		}
		if vs.calls != 1 || !c.Retrieval.Vector || !reflect.DeepEqual(hitKeys(c), []string{"sort-stats"}) {
			t.Errorf("calls = %d, hits = %v", vs.calls, hitKeys(c))
		}
	})
	t.Run("source-side vector search failing falls back to memory", func(t *testing.T) {
		t.Parallel()
		vs := &vectorSource{fakeSource: newFakeSource(snap), err: errors.New("arango down")}
		const q = "who talks to the outside world?"
		emb := &fakeEmbedder{vectors: map[string][]float32{q: axes["fetch-api"]}}
		c, err := New(vs, Options{}, emb).Retrieve(ctx, "demo", q)
		if err != nil {
			t.Fatal(err)
		}
		if vs.calls != 1 || !c.Retrieval.Vector || c.Hits[0].Key != "fetch-api" {
			t.Errorf("calls = %d, hits = %v", vs.calls, hitKeys(c))
		}
	})
}

// TestRetrieveOddQueries: no query string makes retrieval fail or panic.
func TestRetrieveOddQueries(t *testing.T) {
	t.Parallel()
	r, _ := demoRetriever(t, DefaultOptions(), nil)
	for _, q := range []string{
		"", "\x00", "\xff\xfe", strings.Repeat("é", 10000), "🙂 fetch 🙂", "\u202e-ipa-hctef", "ノード", "İı", "ǅ",
		"fetch-api\x00root", "--", "@", "@fetch-api", "{\"json\": true}", "<script>alert(1)</script>",
	} {
		c, err := r.Retrieve(context.Background(), "demo", q)
		if err != nil || c == nil || len(c.Nodes) == 0 {
			t.Errorf("Retrieve(%q) = %v, %v", q, c, err)
		}
	}
}

// TestRetrieveDemoStore runs the retriever on the real demo source (the in-memory
// store the CLI uses) and applies a change through it, as an approved proposal
// would: after Invalidate the change is in the next context.
func TestRetrieveDemoStore(t *testing.T) {
	t.Parallel()
	store, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	r := New(store, DefaultOptions(), nil)
	ctx := context.Background()
	c, err := r.Retrieve(ctx, demo.GraphKey, "Que fait le node fetch-api ?")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hits[0].Key != "fetch-api" || !slices.Contains(nodeKeys(c), "error-handler") || !slices.Contains(nodeKeys(c), "root") {
		t.Fatalf("hits %v nodes %v", hitKeys(c), nodeKeys(c))
	}
	if len(c.Graph.Sheets) != 2 || len(c.Configs) == 0 {
		t.Errorf("graph %+v configs %v", c.Graph, c.Configs)
	}
	if _, err := store.UpdateNode(ctx, demo.GraphKey, "sort-stats", map[string]any{"process": "// pangolin ranking\n"}); err != nil {
		t.Fatal(err)
	}
	r.Invalidate(demo.GraphKey)
	c, err = r.Retrieve(ctx, demo.GraphKey, "pangolin")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hits) == 0 || c.Hits[0].Key != "sort-stats" {
		t.Errorf("change not visible after Invalidate: %v", hitKeys(c))
	}
}

// TestNamedKeysAtScale: on a generated graph where thousands of nodes share the same
// words, naming a node's key (in any identifier style) still ranks it first.
func TestNamedKeysAtScale(t *testing.T) {
	t.Parallel()
	snap := gen.Graph(7, 5000, 10000)
	r := New(newFakeSource(snap), Options{}, nil)
	ctx := context.Background()
	for i := 0; i < len(snap.Nodes); i += 250 {
		key := snap.Nodes[i].Key
		for _, q := range []string{key, "Que fait le node " + key + " ?", "what does " + strings.ReplaceAll(key, "-", "_") + " do"} {
			c, err := r.Retrieve(ctx, snap.Graph.Key, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Hits) == 0 || c.Hits[0].Key != key {
				t.Errorf("%q: hits %v", q, hitKeys(c)[:min(3, len(c.Hits))])
			}
		}
	}
}
