package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
)

// TestRunLimits: a run that hits a limit stops with budget_exceeded naming the config
// key; what arrived is kept (interrupted), no later tool runs and nothing is proposed.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	search := convo.ToolCall{ID: "c1", Name: "search_nodes", Arguments: `{"query":"fetch"}`}
	create := convo.ToolCall{ID: "c2", Name: "propose_create_node", Arguments: `{"key":"x","type":"html","sheet":"0","posX":0,"posY":0,"reason":"r"}`}
	tests := []struct {
		name     string
		limits   config.Limits
		turns    []turn
		key      string
		keptText string // an interrupted assistant message with this text
		toolRuns int    // tool results stored
		requests int    // LLM calls made
	}{
		{name: "answer cut by the provider", turns: []turn{{text: "the start of a very long answer ",
			failAfter: fault.Limit("the model's answer", "max_answer_bytes", 10)}},
			key: "max_answer_bytes", keptText: "the start of a very long answer ", requests: 1},
		{name: "tool result", limits: config.Limits{MaxToolResultBytes: 20},
			turns: []turn{{text: "looking", calls: []convo.ToolCall{search, create}}, {text: "never"}},
			key:   "max_tool_result_bytes", toolRuns: 1, requests: 1},
		{name: "request", limits: config.Limits{MaxRequestBytes: 100},
			turns: []turn{{text: "never"}}, key: "max_request_bytes", requests: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, agent.Options{Limits: tt.limits}, tt.turns...)
			ctx := context.Background()
			var rec recorder
			res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "fetch api"}, rec.emit)
			fe, ok := fault.As(err)
			if !ok || fe.Code != fault.BudgetExceeded || !strings.Contains(fe.Message, tt.key) {
				t.Fatalf("Send = %v, want budget_exceeded naming %s", err, tt.key)
			}
			if res.Proposal != nil {
				t.Error("a proposal was made after the limit")
			}
			if got := len(f.llm.requests()); got != tt.requests {
				t.Errorf("%d LLM calls, want %d", got, tt.requests)
			}
			if tt.requests == 0 {
				// Nothing was answered nor spent: the new thread is gone.
				if list, err := f.store.List(ctx, threads.ListOptions{All: true}); err != nil || len(list) != 0 || res.ThreadID != "" {
					t.Errorf("a run refused before any call left thread %q (%d listed, %v)", res.ThreadID, len(list), err)
				}
				return
			}
			msgs, err := f.store.Messages(ctx, res.ThreadID)
			if err != nil {
				t.Fatal(err)
			}
			tools, kept := 0, false
			for _, m := range msgs {
				if m.Role == convo.Tool {
					tools++
					if len(m.Content) > 200 {
						t.Errorf("a tool result of %d bytes was stored to send back", len(m.Content))
					}
				}
				if m.Role == convo.Assistant && m.Content == tt.keptText && m.Status == convo.Interrupted {
					kept = true
				}
			}
			if tools != tt.toolRuns {
				t.Errorf("%d tool results stored, want %d", tools, tt.toolRuns)
			}
			if tt.keptText != "" && !kept {
				t.Errorf("the text that arrived was not kept as interrupted: %+v", msgs)
			}
			if p, _ := f.store.PendingProposal(ctx, res.ThreadID); p != nil {
				t.Error("a proposal is pending after the limit")
			}
		})
	}
}

// failingNodes is a source whose graph exists but whose nodes cannot be read: the run
// fails in retrieval, after the thread was created and before any message.
type failingNodes struct{ datasource.Source }

func (failingNodes) Nodes(context.Context, string, string) ([]datasource.Node, error) {
	return nil, errors.New("the disk is gone")
}

// TestFailedRunLeavesNoEmptyThread: a new thread whose run fails before anything was
// answered is deleted, whether the question was stored yet or not (issue 25: the
// contract is no thread in threads list); one with an answer is kept.
func TestFailedRunLeavesNoEmptyThread(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{})
	bad := agent.New(agent.Options{Provider: f.llm, Source: failingNodes{f.src}, Store: f.store,
		Retriever: retrieverNoCache(failingNodes{f.src})})
	if _, err := bad.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "hello"}, nil); err == nil {
		t.Fatal("retrieval over a broken source succeeded")
	}
	list, err := f.store.List(ctx, threads.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("a failed run left %d threads: %+v", len(list), list)
	}
	// The provider fails after the question is stored: nothing was answered, the
	// thread goes too.
	f.llm.turns = []turn{{err: errors.New("provider down")}}
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "hello"}, nil)
	if err == nil {
		t.Fatal("a failing provider succeeded")
	}
	if res.ThreadID != "" {
		t.Errorf("the result names thread %q, which was deleted", res.ThreadID)
	}
	if list, err := f.store.List(ctx, threads.ListOptions{All: true}); err != nil || len(list) != 0 {
		t.Fatalf("a run whose provider failed before any answer left %d threads (%v)", len(list), err)
	}
	// A continued thread is never deleted by a failure.
	f.llm.turns = []turn{{text: "an answer"}}
	first, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "hello"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.llm.turns = []turn{{err: errors.New("provider down")}}
	if _, err := f.agent.Send(ctx, agent.SendRequest{ThreadID: first.ThreadID, Text: "again"}, nil); err == nil {
		t.Fatal("a failing provider succeeded")
	}
	if _, err := f.store.Thread(ctx, first.ThreadID); err != nil {
		t.Fatalf("the continued thread was lost: %v", err)
	}
}
