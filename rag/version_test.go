package rag

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// countingStore counts snapshot loads of a versioned store.
type countingStore struct {
	*memgraph.Store
	loads atomic.Int32
}

func (c *countingStore) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	c.loads.Add(1)
	return c.Store.Snapshot(ctx, graphKey)
}

// TestVersionedSourceSnapshot: with a source that numbers its changes, every question
// sees the latest graph without Invalidate, and an unchanged graph is not loaded and
// indexed again when the TTL passes.
func TestVersionedSourceSnapshot(t *testing.T) {
	t.Parallel()
	store, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	src := &countingStore{Store: store}
	clk := newClock()
	opts := DefaultOptions()
	opts.CacheTTL = 0 // no context cache: each question retrieves
	opts.Now = clk.Now
	r := New(src, opts, nil)
	ctx := context.Background()

	for i := 0; i < 3; i++ {
		if _, err := r.Retrieve(ctx, "demo", "fetch api"); err != nil {
			t.Fatal(err)
		}
		clk.Advance(DefaultCacheTTL + time.Second)
	}
	if n := src.loads.Load(); n != 1 {
		t.Fatalf("loads = %d, want 1: an unchanged graph must not be indexed again", n)
	}

	if _, err := store.UpdateNode(ctx, "demo", "sort-stats", map[string]any{"process": "// quokka marker\n"}); err != nil {
		t.Fatal(err)
	}
	c, err := r.Retrieve(ctx, "demo", "quokka")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Hits) == 0 || c.Hits[0].Key != "sort-stats" {
		t.Fatalf("a change must show at the next question: hits %v", hitKeys(c))
	}
	if n := src.loads.Load(); n != 2 {
		t.Fatalf("loads = %d, want 2", n)
	}
}
