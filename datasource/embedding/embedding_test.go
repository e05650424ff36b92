package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// store is an in-memory Source that records SetEmbeddings into the nodes (Extra
// carries the hash, as a graph file or ArangoDB would).
type store struct {
	*memgraph.Store
	mu    sync.Mutex
	sets  int
	fail  error
	graph string
}

func newStore(t *testing.T, nodes ...datasource.Node) *store {
	t.Helper()
	st, err := memgraph.New([]datasource.Snapshot{{
		Graph:   datasource.Graph{Key: "g"},
		Nodes:   nodes,
		Configs: []datasource.NodeConfig{{Key: "api-call", DisplayName: "API Call"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &store{Store: st, graph: "g"}
}

func (s *store) SetEmbeddings(ctx context.Context, graphKey string, updates map[string]Update) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sets++
	if s.fail != nil {
		return s.fail
	}
	snap, err := s.Store.Snapshot(ctx, graphKey)
	if err != nil {
		return err
	}
	nodes := make([]datasource.Node, len(snap.Nodes))
	for i, n := range snap.Nodes {
		if u, ok := updates[n.Key]; ok {
			n.Embedding = u.Vector
			extra := map[string]json.RawMessage{}
			for k, v := range n.Extra {
				extra[k] = v
			}
			h, _ := json.Marshal(u.Hash)
			extra[HashField] = h
			n.Extra = extra
		}
		nodes[i] = n
	}
	snap.Nodes = nodes
	return s.Store.Replace(snap)
}

// fakeEmbedder returns a vector per text; texts containing "poison" fail the whole
// request, as a provider refusing one input does.
type fakeEmbedder struct {
	mu    sync.Mutex
	calls [][]string
	model string
}

func (f *fakeEmbedder) Model() string {
	if f.model == "" {
		return "fake-embed"
	}
	return f.model
}

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, texts)
	f.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, s := range texts {
		if strings.Contains(s, "poison") {
			return nil, errors.New("input rejected")
		}
		out[i] = []float32{float32(len(s)), 1}
	}
	return out, nil
}

func nodes() []datasource.Node {
	ns := []datasource.Node{
		{Key: "a", Type: "api-call", Process: "fetch(url)", Data: map[string]any{"url": "x"}},
		{Key: "b", Type: "starter"},
		{Key: "c", Type: "return", Process: "return x"},
		{Key: "d", Type: "html", Process: "<p>"},
		{Key: "e", Type: "entryType"},
	}
	for i := range ns {
		ns[i].Size = datasource.Size{Width: 200, Height: 100}
	}
	return ns
}

func TestNodeTextAndHash(t *testing.T) {
	t.Parallel()
	cfg := &datasource.NodeConfig{Key: "api-call", DisplayName: "API Call", Description: "calls an API"}
	n := datasource.Node{Key: "fetch", Type: "api-call", Process: "fetch(url)", Data: map[string]any{"url": "https://x"},
		Handles: map[string]datasource.HandleGroup{"R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out"}}}, "L": {Point: []datasource.HandlePoint{{ID: "0", Type: "in", Accept: "string"}}}},
		PosX:    5, Size: datasource.Size{Width: 10}}
	text := NodeText(n, cfg)
	for _, want := range []string{"fetch", "api-call (API Call)", "calls an API", "fetch(url)", `"url":"https://x"`, "L:in(string) R:out(any)"} {
		if !strings.Contains(text, want) {
			t.Errorf("NodeText lacks %q:\n%s", want, text)
		}
	}
	// A type key Nodius generated means nothing: the embedded text names the type
	// by its displayName only.
	opaque := strings.Repeat("3f9a", 16)
	text = NodeText(datasource.Node{Key: "fetch", Type: opaque}, &datasource.NodeConfig{Key: opaque, DisplayName: "API Call"})
	if !strings.Contains(text, "type: API Call\n") || strings.Contains(text, opaque) {
		t.Errorf("NodeText of a node of a generated type key:\n%s", text)
	}
	if text := NodeText(datasource.Node{Key: "fetch", Type: opaque}, nil); !strings.Contains(text, "type: "+opaque) {
		t.Errorf("NodeText of a type without config must keep its key:\n%s", text)
	}
	if long := NodeText(datasource.Node{Key: "k", Process: strings.Repeat("é", 10000)}, nil); len(long) > MaxTextLen || !strings.HasSuffix(long, "é") {
		t.Errorf("long text not cut on a rune boundary at %d bytes: %d", MaxTextLen, len(long))
	}

	base := ContentHash(n)
	tests := []struct {
		name    string
		change  func(n *datasource.Node)
		changed bool
	}{
		{"moved", func(n *datasource.Node) { n.PosX, n.PosY = 100, 200 }, false},
		{"resized", func(n *datasource.Node) { n.Size = datasource.Size{Width: 1, Height: 2} }, false},
		{"embedding itself", func(n *datasource.Node) { n.Embedding = []float32{1} }, false},
		{"same data, other map", func(n *datasource.Node) { n.Data = map[string]any{"url": "https://x"} }, false},
		{"process", func(n *datasource.Node) { n.Process += ";" }, true},
		{"type", func(n *datasource.Node) { n.Type = "js" }, true},
		{"data", func(n *datasource.Node) { n.Data = map[string]any{"url": "https://y"} }, true},
		{"handles", func(n *datasource.Node) { n.Handles = nil }, true},
	}
	for _, tc := range tests {
		m := n
		tc.change(&m)
		if got := ContentHash(m) != base; got != tc.changed {
			t.Errorf("%s: hash changed = %v, want %v", tc.name, got, tc.changed)
		}
	}
	if Stamp("m1", n) == Stamp("m2", n) {
		t.Error("the stamp ignores the model")
	}
}

func TestRunSkipsUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := newStore(t, nodes()...)
	emb := &fakeEmbedder{}
	var progress [][2]int
	sum, err := Run(ctx, st, "g", emb, Options{Batch: 2, Progress: func(d, tot int) { progress = append(progress, [2]int{d, tot}) }})
	if err != nil || sum.Embedded != 5 || sum.Skipped != 0 || sum.Failed != 0 || sum.Total != 5 {
		t.Fatalf("first run = %+v, %v", sum, err)
	}
	if len(emb.calls) != 3 {
		t.Errorf("%d requests for 5 nodes in batches of 2, want 3", len(emb.calls))
	}
	if want := [][2]int{{0, 5}, {2, 5}, {4, 5}, {5, 5}}; len(progress) != 4 || progress[3] != want[3] || progress[0] != want[0] {
		t.Errorf("progress = %v, want %v", progress, want)
	}
	n, _ := st.Node(ctx, "g", "a")
	if len(n.Embedding) == 0 || StoredHash(n) != Stamp("fake-embed", n) {
		t.Errorf("node a: embedding %v hash %q", n.Embedding, StoredHash(n))
	}

	// Move one node, change another: only the changed one is embedded again.
	if err := st.MoveNode(ctx, "g", "b", 500, 500); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateNode(ctx, "g", "c", map[string]any{"process": "return y"}); err != nil {
		t.Fatal(err)
	}
	emb.calls = nil
	sum, err = Run(ctx, st, "g", emb, Options{Batch: 2})
	if err != nil || sum.Embedded != 1 || sum.Skipped != 4 {
		t.Errorf("second run = %+v, %v", sum, err)
	}
	if len(emb.calls) != 1 || len(emb.calls[0]) != 1 || !strings.Contains(emb.calls[0][0], "return y") {
		t.Errorf("second run embedded %v", emb.calls)
	}
	// --force embeds everything; another model too.
	if sum, _ := Run(ctx, st, "g", emb, Options{Force: true}); sum.Embedded != 5 {
		t.Errorf("force = %+v", sum)
	}
	if sum, _ := Run(ctx, st, "g", &fakeEmbedder{model: "other"}, Options{}); sum.Embedded != 5 {
		t.Errorf("new model = %+v", sum)
	}
}

func TestRunIsolatesFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ns := nodes()
	ns[1].Process = "poison"
	st := newStore(t, ns...)
	emb := &fakeEmbedder{}
	sum, err := Run(ctx, st, "g", emb, Options{Batch: 3})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Embedded != 4 || sum.Failed != 1 || len(sum.Errors) != 1 || !strings.Contains(sum.Errors[0].Error(), "node b") {
		t.Errorf("summary = %+v", sum)
	}
	// Storing failures are counted, not fatal.
	st2 := newStore(t, nodes()...)
	st2.fail = errors.New("disk full")
	sum, err = Run(ctx, st2, "g", emb, Options{Batch: 2})
	if err != nil || sum.Failed != 5 || sum.Embedded != 0 {
		t.Errorf("store failures = %+v, %v", sum, err)
	}
	if _, err := Run(ctx, st, "nope", emb, Options{}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("missing graph: %v", err)
	}
}

func TestRunDelayAndCancel(t *testing.T) {
	t.Parallel()
	st := newStore(t, nodes()...)
	ctx, cancel := context.WithCancel(context.Background())
	emb := &fakeEmbedder{}
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	// One node per batch and an hour between batches: only cancel can end it.
	sum, err := Run(ctx, st, "g", emb, Options{Batch: 1, Delay: time.Hour})
	if !errors.Is(err, context.Canceled) || sum.Embedded != 1 {
		t.Errorf("cancel during delay = %+v, %v", sum, err)
	}
}
