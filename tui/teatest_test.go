package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
)

// TestProgramStreamsAndApproves runs the real Bubble Tea loop: a question streams
// an answer with a tool badge, stops at a proposal, and `a` (after the guard)
// resumes the agent whose reply appears on screen. The guard's clock is injected:
// the test never sleeps through it.
func TestProgramStreamsAndApproves(t *testing.T) {
	t.Parallel()
	fr := &fakeRunner{}
	fr.send = func(ctx context.Context, req agent.SendRequest, emit func(convo.Event)) (agent.Result, error) {
		emit(convo.Event{Type: convo.EventThread, ThreadID: "t1", Graph: req.GraphKey})
		call := convo.ToolCall{ID: "c1", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}
		emit(convo.Event{Type: convo.EventToolStart, ToolCall: call})
		emit(convo.Event{Type: convo.EventToolResult, ToolCall: call, Result: "{}", Duration: 12 * time.Millisecond})
		for _, w := range strings.Fields("fetch-api calls the NBA stats endpoint and returns JSON") {
			emit(tok(w + " "))
			time.Sleep(2 * time.Millisecond)
		}
		p := sampleProposal()
		emit(convo.Event{Type: convo.EventProposal, Proposal: p})
		return agent.Result{ThreadID: "t1", Proposal: p}, nil
	}
	fr.resume = func(ctx context.Context, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
		emit(tok("Node removed as approved."))
		return agent.Result{ThreadID: "t1"}, nil
	}
	clk := &fakeClock{t: time.Unix(1000, 0)}
	m := New(Options{Runner: fr, GraphKey: "demo", GraphName: "NBA stats", NoColor: true, Now: clk.Now})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(90, 30))
	tm.Type("what does fetch-api do?")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	waitFor(t, tm, "Proposed change")                // one wait: WaitFor consumes what it reads
	clk.Advance(proposalGuard + 50*time.Millisecond) // past the guard, on the injected clock
	tm.Type("a")
	// The renderer only repaints changed cells, so words on screen can be split by
	// cursor moves: wait on the runner instead, then read the final screen.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, r := fr.calls(); len(r) == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	tm.Send(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if v := view(final); !strings.Contains(v, "approved delete node") || !strings.Contains(v, "Node removed as approved.") ||
		!strings.Contains(v, "returns JSON") || !strings.Contains(v, "✓ read_node_detail nodeKey=fetch-api 12 ms") {
		t.Errorf("final screen:\n%s", v)
	}
	sends, resumes := fr.calls()
	if len(sends) != 1 || sends[0].Text != "what does fetch-api do?" || len(resumes) != 1 || !resumes[0].Approved {
		t.Fatalf("sends=%+v resumes=%+v", sends, resumes)
	}
	if final.threadID != "t1" || final.pending != nil {
		t.Errorf("final thread %q pending %v", final.threadID, final.pending)
	}
}

func waitFor(t *testing.T, tm *teatest.TestModel, s string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(10*time.Millisecond))
}
