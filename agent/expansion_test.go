package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/threads"
)

// expanded is a retrieval whose query expansion went as info says.
type expanded struct {
	*rag.Retriever
	info  rag.RetrievalInfo
	calls *atomic.Int64 // retrievals, each with its expansion call
}

func (e expanded) RetrieveWith(ctx context.Context, graphKey, query string, mentions []string) (*rag.Context, error) {
	e.calls.Add(1)
	c, err := e.Retriever.RetrieveWith(ctx, graphKey, query, mentions)
	if err == nil {
		c.Retrieval.Expansion, c.Retrieval.ExpandUsage, c.Retrieval.ExpandError = e.info.Expansion, e.info.ExpandUsage, e.info.ExpandError
	}
	return c, err
}

func expansionAgent(t *testing.T, info rag.RetrievalInfo, limits config.Limits) (*agent.Agent, *threads.Store) {
	a, store, _ := countedExpansionAgent(t, info, limits)
	return a, store
}

// countedExpansionAgent is expansionAgent with the count of its retrievals.
func countedExpansionAgent(t *testing.T, info rag.RetrievalInfo, limits config.Limits) (*agent.Agent, *threads.Store, *atomic.Int64) {
	t.Helper()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	store, err := threads.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"), threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	calls := &atomic.Int64{}
	return agent.New(agent.Options{
		Provider: &scripted{turns: []turn{{text: "done"}}}, Source: src, Store: store, Limits: limits,
		Retriever: expanded{retrieverNoCache(src), info, calls},
		Pricing:   config.Pricing{InputPerMillion: 1, CachedInputPerMillion: 0.1, OutputPerMillion: 2},
	}), store, calls
}

// TestExpansionCountsLikeAnyCall: the expansion call retrieval made is a usage event
// of its own, priced, in the run's and the thread's totals and against the limits;
// a failed expansion is a note and the question is still answered.
func TestExpansionCountsLikeAnyCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("usage", func(t *testing.T) {
		t.Parallel()
		a, store := expansionAgent(t, rag.RetrievalInfo{Expansion: []string{"x"}, ExpandUsage: rag.Usage{PromptTokens: 80, CompletionTokens: 20}}, config.Limits{})
		rec := &recorder{}
		res, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "q"}, rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(rec.types(), ","); got != "thread,usage,token,usage,complete" {
			t.Fatalf("events %s", got)
		}
		var first convo.Usage
		for _, e := range rec.events {
			if e.Type == convo.EventUsage {
				first = e.Usage
				break
			}
		}
		if u := first; u.PromptTokens != 80 || u.CostUSD < 1.19e-4 || u.CostUSD > 1.21e-4 {
			t.Errorf("expansion usage event %+v, want 80+20 tokens priced at $0.00012", u)
		}
		if res.Usage.PromptTokens != 180 || res.Usage.CompletionTokens != 30 {
			t.Errorf("run usage %+v, want both calls", res.Usage)
		}
		th, err := store.Thread(ctx, res.ThreadID)
		if err != nil || th.Usage.PromptTokens != 180 || th.Usage.CompletionTokens != 30 {
			t.Errorf("thread usage %+v (%v), want both calls", th.Usage, err)
		}
	})
	t.Run("limits", func(t *testing.T) {
		t.Parallel()
		a, _ := expansionAgent(t, rag.RetrievalInfo{ExpandUsage: rag.Usage{PromptTokens: 80, CompletionTokens: 20}}, config.Limits{MaxTokensPerThread: 50})
		_, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
		if ce, ok := fault.As(err); !ok || ce.Code != fault.BudgetExceeded {
			t.Fatalf("err = %v, want budget_exceeded: the expansion's 100 tokens are over the 50 allowed", err)
		}
	})
	t.Run("no expansion over the limits", func(t *testing.T) {
		t.Parallel()
		a, _, calls := countedExpansionAgent(t, rag.RetrievalInfo{ExpandUsage: rag.Usage{PromptTokens: 80, CompletionTokens: 20}}, config.Limits{MaxTokensPerThread: 50})
		res, _ := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "q"}, nil)
		if res.ThreadID == "" || calls.Load() != 1 {
			t.Fatalf("first question: thread %q, %d retrievals", res.ThreadID, calls.Load())
		}
		_, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", ThreadID: res.ThreadID, Text: "again"}, nil)
		if ce, ok := fault.As(err); !ok || ce.Code != fault.BudgetExceeded {
			t.Fatalf("err = %v, want budget_exceeded", err)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("%d retrievals: a thread over its limits still paid for a query expansion", n)
		}
	})
	t.Run("failure is a note", func(t *testing.T) {
		t.Parallel()
		a, _ := expansionAgent(t, rag.RetrievalInfo{ExpandError: "query expansion: rate_limit"}, config.Limits{})
		rec := &recorder{}
		res, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "q"}, rec.emit)
		if err != nil || res.Text != "done" {
			t.Fatalf("res %+v, err %v", res, err)
		}
		var note string
		for _, e := range rec.events {
			if e.Type == convo.EventNote {
				note = e.Text
			}
		}
		if !strings.Contains(note, "searched without expansion: query expansion: rate_limit") {
			t.Errorf("note %q", note)
		}
		if got := strings.Join(rec.types(), ","); got != "thread,token,usage,complete" {
			t.Errorf("public events %s: the note is not one of them", got)
		}
	})
}
