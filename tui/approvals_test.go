package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// proposalKinds are one proposal of each kind the dialog shows.
func proposalKinds() []*convo.Proposal {
	p := func(tool string, a datasource.Action) *convo.Proposal {
		return &convo.Proposal{ID: "call_" + tool, ThreadID: "t1", Tool: tool, Action: a, Digest: convo.ActionDigest(a)}
	}
	return []*convo.Proposal{
		sampleProposal(),
		p("propose_create_node", datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "log-node", Sheet: "0"}}),
		p("propose_update_node", datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: "fetch-api", Changes: map[string]any{"process": "x"}}}),
		p("propose_move_node", datasource.Action{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: 1}}),
		p("propose_create_edge", datasource.Action{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{SourceKey: "a", TargetKey: "b", Sheet: "0"}}),
		p("propose_delete_edge", datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e1"}}),
	}
}

// pendingAfterEsc opens proposal p, then leaves it pending with esc.
func pendingAfterEsc(t *testing.T, clk *fakeClock, p *convo.Proposal) (*Model, *fakeRunner) {
	t.Helper()
	fr := &fakeRunner{}
	m := newTestModel(t, Options{Runner: fr, GraphKey: "demo", NoColor: true, Now: clk.Now})
	startQuestion(t, m, "change the graph")
	feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, convo.Event{Type: convo.EventProposal, Proposal: p})
	end(m, agent.Result{ThreadID: "t1", Proposal: p}, nil)
	clk.Advance(time.Second)
	press(m, "esc")
	if m.dlg != nil || m.pending == nil {
		t.Fatal("esc did not leave the proposal pending")
	}
	clk.Advance(time.Second)
	return m, fr
}

// With any kind of proposal pending, typing words full of decision letters at any
// speed decides nothing and every character lands in the input.
func TestTypingNeverDecides(t *testing.T) {
	t.Parallel()
	words := []string{"print all", "reject all", "approve", "a", "yes", "pAr fa"}
	for _, p := range proposalKinds() {
		for _, word := range words {
			for _, every := range []time.Duration{30, 80, 150, 250, 600} {
				every *= time.Millisecond
				clk := &fakeClock{t: time.Unix(1000, 0)}
				m, fr := pendingAfterEsc(t, clk, p)
				for _, r := range word {
					clk.Advance(every)
					runCmd(m, m.updateCmd(tea.KeyPressMsg{Code: r, Text: string(r)}))
				}
				if _, res := fr.calls(); len(res) != 0 {
					t.Fatalf("%s, %q at %v per key: decided %+v", p.Tool, word, every, res)
				}
				if got := m.in.value(); got != word {
					t.Fatalf("%s, %q at %v per key: input holds %q", p.Tool, word, every, got)
				}
				if m.pending == nil {
					t.Fatalf("%s, %q: the proposal is no longer pending", p.Tool, word)
				}
			}
		}
	}
}

// A proposal arriving while the person types: the keys typed in the same stream go
// to the input, never to the dialog that opened meanwhile; once they pause, the
// dialog decides.
func TestDialogOpenedWhileTypingTakesNoTypedKey(t *testing.T) {
	t.Parallel()
	for _, every := range []time.Duration{30, 80, 150, 250, 390} {
		every *= time.Millisecond
		clk := &fakeClock{t: time.Unix(1000, 0)}
		fr := &fakeRunner{}
		m := newTestModel(t, Options{Runner: fr, GraphKey: "demo", NoColor: true, Now: clk.Now})
		startQuestion(t, m, "remove fetch-api")
		typeAt := func(s string) {
			for _, r := range s {
				clk.Advance(every)
				runCmd(m, m.updateCmd(tea.KeyPressMsg{Code: r, Text: string(r)}))
			}
		}
		typeAt("and then pr")
		feed(m, convo.Event{Type: convo.EventThread, ThreadID: "t1"}, convo.Event{Type: convo.EventProposal, Proposal: sampleProposal()})
		end(m, agent.Result{ThreadID: "t1", Proposal: sampleProposal()}, nil)
		if _, ok := m.dlg.(*proposalDialog); !ok {
			t.Fatal("the dialog did not open")
		}
		typeAt("int all, approve, reject, a yes A")
		if _, res := fr.calls(); len(res) != 0 {
			t.Fatalf("at %v per key: decided %+v", every, res)
		}
		if got := m.in.value(); got != "and then print all, approve, reject, a yes A" {
			t.Fatalf("at %v per key: input holds %q", every, got)
		}
		// A pause, then a key: now it decides, and names the proposal shown.
		clk.Advance(proposalGuard)
		pumpRun(m, press(m, "r"))
		if _, res := fr.calls(); len(res) != 1 || res[0].ProposalID != "call_9" || res[0].Approved {
			t.Fatalf("after a pause: %+v", res)
		}
	}
}

// Each state shows what happened: a rejection with its feedback and no ✓, an
// approval that was not applied with why; the "waiting" line goes away.
func TestDecisionStatesAreTruthful(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		key     string
		outcome func(p *convo.Proposal) (string, *convo.Proposal)
		want    []string
		wantNot []string
	}{
		{"rejected", "r", func(p *convo.Proposal) (string, *convo.Proposal) {
			p.Decision, p.Feedback = convo.Rejected, "keep it"
			return `{"status":"rejected","message":"The user rejected the action; it was not applied.","feedback":"keep it"}`, p
		}, []string{"× rejected delete node: keep it", "× propose_delete_node"}, []string{"✓", "waiting for your decision"}},
		{"not applied", "a", func(p *convo.Proposal) (string, *convo.Proposal) {
			p.Decision, p.Outcome, p.ApplyError = convo.Approved, convo.NotApplied, "the graph changed since the proposal was shown"
			return `{"status":"not_applied","message":"The user approved the action, but it was not applied: the graph changed since the proposal was shown"}`, p
		}, []string{"! approved but not applied: delete node: the graph changed", "× propose_delete_node"}, []string{"✓", "waiting for your decision"}},
		{"applied on the demo", "a", func(p *convo.Proposal) (string, *convo.Proposal) {
			p.Decision, p.Outcome = convo.Approved, convo.Applied
			return `{"status":"approved","created":{"nodes":[]},"note":"the demo graph lives in this process's memory: not saved"}`, p
		}, []string{"✓ approved and applied: delete node — the demo graph lives in this", "✓ propose_delete_node"}, []string{"waiting for your decision"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &fakeClock{t: time.Unix(1000, 0)}
			m, fr := openProposal(t, clk)
			clk.Advance(time.Second)
			fr.resume = func(_ context.Context, d convo.Decision, emit func(convo.Event)) (agent.Result, error) {
				res, p := tc.outcome(sampleProposal())
				emit(convo.Event{Type: convo.EventToolResult, ToolCall: convo.ToolCall{ID: "call_9", Name: "propose_delete_node"}, Result: res, Proposal: p})
				emit(tok("Noted."))
				return agent.Result{ThreadID: "t1", Text: "Noted.", Decided: p}, nil
			}
			pumpRun(m, press(m, tc.key))
			v := view(m)
			for _, w := range tc.want {
				if !strings.Contains(v, w) {
					t.Errorf("view lacks %q:\n%s", w, v)
				}
			}
			for _, w := range tc.wantNot {
				if strings.Contains(v, w) {
					t.Errorf("view shows %q:\n%s", w, v)
				}
			}
		})
	}
}

// A reopened thread shows each decision and its feedback, with the same marks,
// from the stored decisions (typed), not from the text the model was told.
func TestReopenedThreadShowsDecisions(t *testing.T) {
	t.Parallel()
	ts := &fakeThreads{
		threads: []convo.Thread{{ID: "t1", GraphKey: "demo", Title: "T"}},
		history: map[string][]convo.Message{"t1": {
			{Role: convo.User, Content: "clean up"},
			{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "c1", Name: "propose_delete_node", Arguments: `{"nodeKey":"fetch-api"}`}}},
			{Role: convo.Tool, ToolCallID: "c1", Name: "propose_delete_node", Content: `{"status":"rejected","feedback":"it is needed"}`},
			{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "c2", Name: "propose_move_node", Arguments: `{"nodeKey":"root"}`}}},
			{Role: convo.Tool, ToolCallID: "c2", Name: "propose_move_node", Content: `The model was told something; the screen does not read it.`},
			{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "c3", Name: "propose_create_node", Arguments: `{"typeKey":"log-node"}`}}},
			{Role: convo.Tool, ToolCallID: "c3", Name: "propose_create_node", Content: `{"status":"approved","created":{"nodes":["n1"]}}`},
			// a proposal still pending: the store gives its call a synthetic result
			{Role: convo.Assistant, ToolCalls: []convo.ToolCall{{ID: "c4", Name: "propose_update_node", Arguments: `{"nodeKey":"root"}`}}},
			{Role: convo.Tool, ToolCallID: "c4", Name: "propose_update_node", Content: `{"status":"interrupted","error":"this tool call was interrupted before it returned a result"}`},
		}},
	}
	m := newTestModel(t, Options{Runner: &fakeRunner{}, Threads: ts, GraphKey: "demo", NoColor: true})
	decided := map[string]convo.Proposal{
		"c1": {ID: "c1", Action: datasource.Action{Type: datasource.DeleteNodeAction}, Decision: convo.Rejected, Feedback: "it is needed"},
		"c2": {ID: "c2", Action: datasource.Action{Type: datasource.MoveNodeAction}, Decision: convo.Approved, Outcome: convo.NotApplied, ApplyError: "node root is gone"},
		"c3": {ID: "c3", Action: datasource.Action{Type: datasource.CreateNodeAction}, Decision: convo.Approved, Outcome: convo.Applied},
	}
	m.Update(threadOpenedMsg{thread: ts.threads[0], msgs: ts.history["t1"], decided: decided})
	v := view(m)
	for _, w := range []string{"× rejected delete node: it is needed", "× propose_delete_node", "! approved but not applied: move node: node root is gone",
		"× propose_move_node", "✓ approved and applied: create node", "✓ propose_create_node"} {
		if !strings.Contains(v, w) {
			t.Errorf("reopened view lacks %q:\n%s", w, v)
		}
	}
	if strings.Contains(v, "update node") && (strings.Contains(v, "not applied: update node") || strings.Contains(v, "applied: update node") || strings.Contains(v, "rejected update node")) {
		t.Errorf("a pending proposal's synthetic result reads as a decision:\n%s", v)
	}
}

// updateCmd sends one message and returns the command it gave.
func (m *Model) updateCmd(msg tea.Msg) tea.Cmd {
	_, cmd := m.Update(msg)
	return cmd
}
