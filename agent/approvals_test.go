package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/threads"
)

// twin returns another agent on the same store and graph, with other options: what
// another process, or the same person later with another configuration, would run.
func (f *fixture) twin(opts agent.Options, turns ...turn) *agent.Agent {
	opts.Provider = &scripted{turns: turns}
	opts.Source = f.src
	opts.Store = f.store
	opts.Retriever = retrieverNoCache(f.src)
	return agent.New(opts)
}

func decisionCode(err error) bool {
	ce, ok := fault.As(err)
	return ok && ce.Code == fault.Decision
}

func edgeCount(t *testing.T, src datasource.Source, node string) int {
	t.Helper()
	es, err := src.Edges(context.Background(), "demo", "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range es {
		if e.Source == node || e.Target == node {
			n++
		}
	}
	return n
}

// The TUI shows proposal p1; meanwhile another shell approves it and the model
// follows with a deletion. The TUI's "yes for this thread" on p1 must decide nothing.
func TestDecisionBindsToTheProposalShown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("p1", "propose_create_node", `{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"log"}`)}},
		turn{calls: []convo.ToolCall{call("p2", "propose_delete_node", `{"nodeKey":"fetch-api","reason":"unused"}`)}},
		turn{text: "never reached"})
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "add n1"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("%+v %v", res, err)
	}
	shown := *res.Proposal
	// Another shell approves p1; the model proposes p2.
	res2, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, ProposalID: "p1"}, nil)
	if err != nil || res2.Proposal == nil || res2.Proposal.ID != "p2" {
		t.Fatalf("%+v %v", res2, err)
	}
	// The TUI still shows p1 and the person presses A.
	_, err = f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, AlwaysForThread: true, ProposalID: shown.ID, Digest: shown.Digest}, nil)
	if !decisionCode(err) || !strings.Contains(err.Error(), "not p1 that was shown") {
		t.Fatalf("deciding p1 again: %v", err)
	}
	if edgeCount(t, f.src, "fetch-api") != 3 {
		t.Fatal("fetch-api's edges were touched")
	}
	if _, err := f.src.Node(ctx, "demo", "fetch-api"); err != nil {
		t.Fatal("fetch-api was deleted by a decision on another proposal")
	}
	th, _ := f.store.Thread(ctx, res.ThreadID)
	if len(th.AutoApprove) != 0 {
		t.Fatalf("auto-approve turned on: %v", th.AutoApprove)
	}
	// A digest that is not the pending action's decides nothing either.
	_, err = f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, ProposalID: "p2", Digest: shown.Digest}, nil)
	if !decisionCode(err) || !strings.Contains(err.Error(), "changed since it was shown") {
		t.Fatalf("stale digest: %v", err)
	}
	if p, _ := f.store.PendingProposal(ctx, res.ThreadID); p == nil || p.ID != "p2" {
		t.Fatalf("p2 must still be pending: %+v", p)
	}
	// "Yes for this thread" on p2, shown: applies the type shown.
	_, err = f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, AlwaysForThread: true, ProposalID: "p2", Digest: res2.Proposal.Digest}, nil)
	if err != nil {
		t.Fatal(err)
	}
	th, _ = f.store.Thread(ctx, res.ThreadID)
	if len(th.AutoApprove) != 1 || th.AutoApprove[0] != datasource.DeleteNodeAction {
		t.Fatalf("auto-approve = %v, want [delete_node]", th.AutoApprove)
	}
}

// What may have changed between the proposal and the approval is checked when it
// applies: role, policy, source, the stored action against the model's call.
func TestApprovalRechecksAtApplyTime(t *testing.T) {
	t.Parallel()
	propose := turn{calls: []convo.ToolCall{call("p1", "propose_delete_node", `{"nodeKey":"fetch-api","reason":"unused"}`)}}
	tests := []struct {
		name    string
		opts    agent.Options
		tamper  func(t *testing.T, f *fixture, thread string)
		wantMsg string
	}{
		{name: "viewer", opts: agent.Options{Role: "viewer", SourceSpec: "demo"}, wantMsg: "viewer"},
		{name: "policy deny now", opts: agent.Options{SourceSpec: "demo", Policy: map[datasource.ActionType]config.Policy{datasource.DeleteNodeAction: config.PolicyDeny}}, wantMsg: "denied"},
		{name: "other source", opts: agent.Options{SourceSpec: "file:/elsewhere/g.json"}, wantMsg: "works on demo"},
		{name: "stored action differs from the call", opts: agent.Options{SourceSpec: "demo"},
			tamper: func(t *testing.T, f *fixture, thread string) {
				// An imported thread: the call says move, the stored action deletes.
				p, _ := f.store.PendingProposal(context.Background(), thread)
				p.Action = datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch-api"}}
				if err := f.store.SaveProposal(context.Background(), *p); err != nil {
					t.Fatal(err)
				}
			}, wantMsg: "does not match the model's call"},
		{name: "stored tool differs from the call", opts: agent.Options{SourceSpec: "demo"},
			tamper: func(t *testing.T, f *fixture, thread string) {
				p, _ := f.store.PendingProposal(context.Background(), thread)
				p.Tool = "propose_delete_node"
				p.Action = datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch-api"}}
				if err := f.store.SaveProposal(context.Background(), *p); err != nil {
					t.Fatal(err)
				}
			}, wantMsg: "cannot be approved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			first := propose
			if tt.tamper != nil {
				first = turn{calls: []convo.ToolCall{call("p1", "propose_move_node", `{"nodeKey":"fetch-api","posX":1,"posY":1,"reason":"tidy"}`)}}
			}
			f := newFixture(t, agent.Options{SourceSpec: "demo"}, first)
			res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "clean up"}, nil)
			if err != nil || res.Proposal == nil {
				t.Fatalf("%+v %v", res, err)
			}
			if tt.tamper != nil {
				tt.tamper(t, f, res.ThreadID)
			}
			later := f.twin(tt.opts, turn{text: "must not be called"})
			_, err = later.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil)
			if !decisionCode(err) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("err = %v, want a decision error about %q", err, tt.wantMsg)
			}
			if _, err := f.src.Node(ctx, "demo", "fetch-api"); err != nil || edgeCount(t, f.src, "fetch-api") != 3 {
				t.Fatal("fetch-api changed")
			}
			if p, _ := f.store.PendingProposal(ctx, res.ThreadID); p == nil {
				t.Fatal("the proposal must stay pending")
			}
		})
	}
}

// The graph changed since the deletion was shown: nothing is applied, the decision
// is recorded as approved but not applied, and the model is told why.
func TestApprovalOfAStaleProposalIsNotApplied(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("p1", "propose_delete_node", `{"nodeKey":"fetch-api","reason":"unused"}`)}},
		turn{text: "The graph changed; shall I propose it again?"})
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "delete fetch-api"}, nil)
	if err != nil || res.Proposal == nil || len(res.Proposal.Action.DeleteNode.RemovedEdges) != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	// Someone adds an edge to fetch-api after the proposal was shown.
	if _, err := f.src.CreateEdge(ctx, "demo", datasource.Edge{Sheet: "0", Source: "entry-form", SourceHandle: "0", Target: "fetch-api", TargetHandle: "0"}); err != nil {
		t.Fatal(err)
	}
	res2, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, ProposalID: "p1", Digest: res.Proposal.Digest}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if edgeCount(t, f.src, "fetch-api") != 4 {
		t.Fatal("the deletion was applied to a graph that changed")
	}
	if d := res2.Decided; d == nil || d.Outcome != convo.NotApplied || !strings.Contains(d.ApplyError, "graph changed") {
		t.Fatalf("decided = %+v", d)
	}
	// The reason names what differs (the edge added since), not the same summary twice.
	if d := res2.Decided; !strings.Contains(d.ApplyError, "entry-form") {
		t.Errorf("the refusal does not say what changed: %s", d.ApplyError)
	}
	msgs := f.llm.requests()[1].Messages
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "not_applied") {
		t.Fatalf("the model was told %s", last.Content)
	}
	tr, _ := f.store.Transcript(ctx, res.ThreadID)
	if p := tr.Proposals[0]; p.State() != "not applied" || p.ApplyError == "" {
		t.Fatalf("stored proposal = %+v", p)
	}
}

// A failure the person must fix consumes nothing: the proposal stays pending and
// the model is not called.
func TestApplyFailureKeepsTheProposalPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "g.json")
	if err := os.WriteFile(path, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	store, err := threads.Open(ctx, filepath.Join(dir, "threads.db"), threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := &scripted{turns: []turn{{calls: []convo.ToolCall{call("p1", "propose_create_node", `{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"log"}`)}}, {text: "never"}}}
	a := agent.New(agent.Options{Provider: p, Source: src, Store: store, Retriever: retrieverNoCache(src)})
	res, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "add"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("%+v %v", res, err)
	}
	if err := os.Remove(path); err != nil { // the file cannot be written any more
		t.Fatal(err)
	}
	_, err = a.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil)
	if err == nil || !strings.Contains(err.Error(), "still pending") {
		t.Fatalf("err = %v", err)
	}
	if pp, _ := store.PendingProposal(ctx, res.ThreadID); pp == nil || pp.ID != "p1" {
		t.Fatalf("pending = %+v", pp)
	}
	if n := len(p.requests()); n != 1 {
		t.Fatalf("the model was called %d times after a failed apply", n-1)
	}
	if err := os.WriteFile(path, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil); err != nil {
		t.Fatalf("approving again once fixed: %v", err)
	}
}

// Several deciders at once, each with its own connection to the database as
// separate processes would have: one wins, the others are told it was decided.
func TestConcurrentDecidersOneWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("p1", "propose_create_node", `{"typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"log"}`)}})
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "add"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("%+v %v", res, err)
	}
	before, _ := f.src.Nodes(ctx, "demo", "")
	const n = 6
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		st, err := threads.Open(ctx, f.store.Path(), threads.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		a := agent.New(agent.Options{Provider: &scripted{turns: []turn{{text: "done"}}}, Source: f.src, Store: st,
			Retriever: retrieverNoCache(f.src), Claimer: "host:" + string(rune('a'+i))})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = a.Resume(ctx, res.ThreadID, convo.Decision{Approved: i%2 == 0}, nil)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case !decisionCode(err):
			t.Errorf("loser error = %v", err)
		}
	}
	after, _ := f.src.Nodes(ctx, "demo", "")
	tr, _ := f.store.Transcript(ctx, res.ThreadID)
	p := tr.Proposals[0]
	if ok != 1 {
		t.Fatalf("%d deciders won", ok)
	}
	created := len(after) - len(before)
	switch p.State() {
	case "applied":
		if created != 1 {
			t.Fatalf("approved once, %d nodes created", created)
		}
	case "rejected":
		if created != 0 {
			t.Fatalf("rejected, yet %d nodes created", created)
		}
	default:
		t.Fatalf("state %s", p.State())
	}
}

// A process died after claiming: if its change landed, the next open records it as
// applied; if not, the proposal is pending again. Either way, once.
func TestDeadClaimIsReconciled(t *testing.T) {
	t.Parallel()
	for _, landed := range []bool{true, false} {
		ctx := context.Background()
		f := newFixture(t, agent.Options{},
			turn{calls: []convo.ToolCall{call("p1", "propose_create_node", `{"typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"log"}`)}},
			turn{text: "created"})
		res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "add"}, nil)
		if err != nil || res.Proposal == nil {
			t.Fatalf("%+v %v", res, err)
		}
		planned := datasource.AssignKeys(res.Proposal.Action, "op1")
		if err := f.store.ClaimProposal(ctx, res.ThreadID, "p1", "op1", "deadhost:1", "", planned); err != nil {
			t.Fatal(err)
		}
		if landed {
			if _, err := datasource.Apply(ctx, f.src, "demo", planned); err != nil {
				t.Fatal(err)
			}
		}
		// The dead process's claim blocks a live-looking one...
		a := f.twin(agent.Options{Alive: func(string) bool { return false }}, turn{text: "created"})
		var rec recorder
		again, err := a.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, rec.emit)
		key := datasource.CreatedKeys(planned).Nodes[0]
		if landed {
			// The retried approve says the change landed and goes on (issue 25).
			if err != nil || again.Decided == nil || again.Decided.ID != "p1" || again.Text != "created" {
				t.Fatalf("landed: %+v, err = %v", again, err)
			}
			said := false
			for _, e := range rec.events {
				said = said || (e.Type == convo.EventNote && strings.Contains(e.Text, "not applied again"))
			}
			if !said {
				t.Error("landed: the retried approve did not say the change had landed")
			}
		} else if err != nil {
			t.Fatalf("not landed: %v", err)
		}
		nodes, _ := f.src.Nodes(ctx, "demo", "")
		count := 0
		for _, n := range nodes {
			if n.Type == "log-node" && n.PosX == 1 {
				count++
			}
		}
		if count != 1 {
			t.Fatalf("landed=%v: %d nodes", landed, count)
		}
		tr, _ := f.store.Transcript(ctx, res.ThreadID)
		if tr.Proposals[0].State() != "applied" || len(tr.Created) != 1 || (landed && tr.Created[0].Key != key) {
			t.Fatalf("landed=%v: %+v created %+v", landed, tr.Proposals[0], tr.Created)
		}
	}
}

// A model that reuses a tool call id gets an error result: nothing is applied, even
// under an auto policy, and every call sent back has its result.
func TestReusedToolCallIDIsAnsweredWithAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{Policy: map[datasource.ActionType]config.Policy{datasource.CreateNodeAction: config.PolicyAuto}},
		turn{calls: []convo.ToolCall{call("dup", "propose_create_node", `{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"a"}`)}},
		turn{calls: []convo.ToolCall{
			call("dup", "propose_create_node", `{"nodeKey":"n2","typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"b"}`),
			call("x", "read_graph_overview", `{"graphKey":"demo"}`),
			call("x", "propose_create_node", `{"nodeKey":"n3","typeKey":"log-node","sheet":"0","posX":1,"posY":2,"reason":"c"}`),
		}},
		turn{text: "ok"})
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "add"}, nil)
	if err != nil || res.Text != "ok" {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := f.src.Node(ctx, "demo", "n1"); err != nil {
		t.Fatal("n1 (first use of the id) not created")
	}
	for _, k := range []string{"n2", "n3"} {
		if _, err := f.src.Node(ctx, "demo", k); !errors.Is(err, datasource.ErrNotFound) {
			t.Fatalf("%s created by a reused id", k)
		}
	}
	msgs := f.llm.requests()[2].Messages
	answered := map[string]int{}
	calls := map[string]int{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			calls[c.ID]++
		}
		if m.ToolCallID != "" {
			answered[m.ToolCallID]++
		}
	}
	for id, n := range calls {
		if n != 1 || answered[id] != 1 {
			t.Fatalf("call %s sent %d times, answered %d times: %+v", id, n, answered[id], msgs)
		}
	}
	if len(calls) != 4 {
		t.Fatalf("calls = %v", calls)
	}
}
