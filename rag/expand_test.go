package rag

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

// fakeExpander answers fixed terms (or an error) and counts its calls.
type fakeExpander struct {
	terms []string
	err   error
	calls atomic.Int32
}

func (f *fakeExpander) Expand(_ context.Context, _ string) (Expansion, error) {
	f.calls.Add(1)
	u := Usage{PromptTokens: 80, CompletionTokens: 20}
	if f.err != nil {
		return Expansion{Usage: u}, f.err
	}
	return Expansion{Terms: f.terms, Usage: u}, nil
}

func hitKeysOf(c *Context) []string {
	var keys []string
	for _, h := range c.Hits {
		keys = append(keys, h.Key)
	}
	return keys
}

func TestExpansion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	retrieve := func(t *testing.T, x Expander, q string) *Context {
		t.Helper()
		opts := DefaultOptions()
		opts.CacheTTL = 0
		opts.Expander = x
		c, err := New(newFakeSource(demoSnapshot(t)), opts, nil).Retrieve(ctx, "demo", q)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	t.Run("terms find what the words miss", func(t *testing.T) {
		t.Parallel()
		x := &fakeExpander{terms: []string{"html display", "page web"}}
		if c := retrieve(t, nil, "zorglub quux"); len(c.Hits) != 0 {
			t.Fatalf("without expansion: hits %v, want none", hitKeysOf(c))
		}
		c := retrieve(t, x, "zorglub quux")
		if len(c.Hits) == 0 || c.Hits[0].Key != "display-html" || c.Retrieval.Fallback {
			t.Fatalf("with expansion: hits %v (fallback %v), want display-html first", hitKeysOf(c), c.Retrieval.Fallback)
		}
		if !slices.Equal(c.Retrieval.Expansion, x.terms) || c.Retrieval.ExpandUsage.Total() != 100 || c.Retrieval.ExpandError != "" {
			t.Errorf("retrieval info = %+v", c.Retrieval)
		}
	})

	t.Run("the question's own words stay ahead", func(t *testing.T) {
		t.Parallel()
		x := &fakeExpander{terms: []string{"html display render page"}}
		c := retrieve(t, x, "sort zorglub")
		keys := hitKeysOf(c)
		if keys[0] != "sort-stats" {
			t.Fatalf("hits %v, want sort-stats first", keys)
		}
		plain := hitKeysOf(retrieve(t, nil, "sort zorglub"))
		if slices.Index(keys, "display-html") < 0 || slices.Index(keys, "display-html") >= slices.Index(plain, "display-html") {
			t.Errorf("display-html at %d with expansion, %d without: the terms should lift it", slices.Index(keys, "display-html"), slices.Index(plain, "display-html"))
		}
	})

	t.Run("a failure searches the question as asked", func(t *testing.T) {
		t.Parallel()
		x := &fakeExpander{err: errors.New("rate limited")}
		c := retrieve(t, x, "sort players by points")
		want := hitKeysOf(retrieve(t, nil, "sort players by points"))
		if !slices.Equal(hitKeysOf(c), want) || c.Retrieval.ExpandError == "" || c.Retrieval.Expansion != nil {
			t.Errorf("hits %v (want %v), info %+v", hitKeysOf(c), want, c.Retrieval)
		}
		if c.Retrieval.ExpandUsage.Total() != 100 {
			t.Errorf("the tokens of a failed call are still reported: %+v", c.Retrieval.ExpandUsage)
		}
	})

	t.Run("a cancelled question is not searched", func(t *testing.T) {
		t.Parallel()
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		opts := DefaultOptions()
		opts.Expander = &fakeExpander{err: context.Canceled}
		if _, err := New(newFakeSource(demoSnapshot(t)), opts, nil).Retrieve(cctx, "demo", "sort"); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("a context served from the cache reports no call", func(t *testing.T) {
		t.Parallel()
		x := &fakeExpander{terms: []string{"html"}}
		opts := DefaultOptions()
		opts.Expander = x
		r := New(newFakeSource(demoSnapshot(t)), opts, nil)
		first, err := r.Retrieve(ctx, "demo", "show it")
		if err != nil || first.Retrieval.ExpandUsage.Total() != 100 {
			t.Fatalf("first = %+v, %v", first.Retrieval, err)
		}
		again, err := r.Retrieve(ctx, "demo", "show it")
		if err != nil || !again.Retrieval.CacheHit || again.Retrieval.ExpandUsage.Total() != 0 || x.calls.Load() != 1 {
			t.Errorf("again = %+v, %v, calls %d", again.Retrieval, err, x.calls.Load())
		}
	})

	t.Run("blank question: no call", func(t *testing.T) {
		t.Parallel()
		x := &fakeExpander{terms: []string{"html"}}
		retrieve(t, x, "   ")
		if x.calls.Load() != 0 {
			t.Errorf("%d calls for a blank question", x.calls.Load())
		}
	})
}

// TestNoExpandPerCall: a call that asks for no expansion (graph_context over MCP) makes
// no model call, in process and on a source that searches, while calls of the same
// retriever that expand still do; the contexts are cached apart, so neither is
// served for the other.
func TestNoExpandPerCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		src  func(t *testing.T) datasource.Source
	}{
		{"in process", func(t *testing.T) datasource.Source { return newFakeSource(demoSnapshot(t)) }},
		{"source search", func(t *testing.T) datasource.Source { return newTextSource(t, "display-html") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			x := &fakeExpander{terms: []string{"html display"}}
			opts := DefaultOptions()
			opts.Expander = x
			r := New(tt.src(t), opts, nil)
			plain := Request{GraphKey: "demo", Question: "what shows the players", NoExpand: true}
			for i := 0; i < 2; i++ {
				c, err := r.RetrieveRequest(ctx, plain)
				if err != nil {
					t.Fatal(err)
				}
				if n := x.calls.Load(); n != 0 || c.Retrieval.Expansion != nil || c.Retrieval.ExpandUsage.Total() != 0 {
					t.Fatalf("NoExpand call %d: %d expansion calls, retrieval %+v", i, n, c.Retrieval)
				}
			}
			c, err := r.RetrieveWith(ctx, "demo", "what shows the players", nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := x.calls.Load(); n != 1 || !slices.Equal(c.Retrieval.Expansion, x.terms) || c.Retrieval.ExpandUsage.Total() != 100 {
				t.Fatalf("expanding call after NoExpand ones: %d expansion calls, retrieval %+v", n, c.Retrieval)
			}
			c, err = r.RetrieveRequest(ctx, plain)
			if err != nil {
				t.Fatal(err)
			}
			if n := x.calls.Load(); n != 1 || c.Retrieval.Expansion != nil {
				t.Fatalf("NoExpand after an expanding call: %d expansion calls, expansion %v", n, c.Retrieval.Expansion)
			}
		})
	}
}
