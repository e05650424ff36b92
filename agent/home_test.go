package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// TestHomeModeListsGraphs: a question with no graph runs in home mode — the home
// prompt, no retrieval context, the home tools only — and list_user_graphs reads
// the source's graphs.
func TestHomeModeListsGraphs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("c1", "list_user_graphs", `{}`)}},
		turn{text: "You have one graph: {{graph:demo}}."})
	res, err := f.agent.Send(ctx, agent.SendRequest{Text: "what graphs do I have?"}, nil)
	if err != nil || res.Text == "" {
		t.Fatalf("%+v %v", res, err)
	}
	reqs := f.llm.requests()
	if got := strings.Join(toolNames(reqs[0].Tools), ","); got != "list_user_graphs,list_user_html_classes,list_node_configs,propose_create_graph,propose_create_html_class" {
		t.Errorf("home tools offered: %s", got)
	}
	msgs := reqs[0].Messages
	if len(msgs) != 2 || !strings.Contains(msgs[0].Content, "no graph is open") || msgs[1].Role != convo.User {
		t.Errorf("home request: %d messages, first %.80q", len(msgs), msgs[0].Content)
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	if last.Role != convo.Tool || !strings.Contains(last.Content, "demo") {
		t.Errorf("list_user_graphs gave %q", last.Content)
	}
	tr, _ := f.store.Transcript(ctx, res.ThreadID)
	if tr.Thread.GraphKey != "home" {
		t.Errorf("thread graph = %q, want home", tr.Thread.GraphKey)
	}
}

// TestHomeModeCreateGraph: propose_create_graph waits for a decision; approved on
// a source that makes graphs (the demo, in memory) the graph is made, the model is
// told its key, and undo removes it; rejected, nothing is made.
func TestHomeModeCreateGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, approve := range []bool{true, false} {
		f := newFixture(t, agent.Options{},
			turn{calls: []convo.ToolCall{call("p1", "propose_create_graph", `{"name":"Invoices","reason":"asked"}`)}},
			turn{text: "Noted."})
		res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "home", Text: "create an invoices graph"}, nil)
		if err != nil || res.Proposal == nil || res.Proposal.Action.CreateGraph == nil || res.Proposal.Action.CreateGraph.Name != "Invoices" {
			t.Fatalf("%+v %v", res, err)
		}
		res2, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: approve, ProposalID: "p1", Digest: res.Proposal.Digest}, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := res2.Decided
		if d == nil {
			t.Fatal("no decision recorded")
		}
		if !approve {
			if d.Decision != convo.Rejected || len(f.src.GraphKeys()) != 1 {
				t.Errorf("rejected: %+v, graphs %v", d, f.src.GraphKeys())
			}
			continue
		}
		if d.Outcome != convo.Applied || d.Result == nil || d.Result.Graph == nil {
			t.Fatalf("approved: %+v", d)
		}
		key := d.Result.Graph.Key
		if g, err := f.src.Graph(ctx, key); err != nil || g.Name != "Invoices" {
			t.Fatalf("graph %s: %+v %v", key, g, err)
		}
		told := f.llm.requests()[1].Messages
		if last := told[len(told)-1]; !strings.Contains(last.Content, key) {
			t.Errorf("the model was not told the new graph's key: %s", last.Content)
		}
		u, err := f.agent.Undo(ctx, agent.UndoRequest{ThreadID: res.ThreadID})
		if err != nil || len(u.Reversed) != 1 {
			t.Fatalf("undo: %+v %v", u, err)
		}
		if _, err := f.src.Graph(ctx, key); err == nil {
			t.Error("undo left the graph")
		}
	}
}

// applyOnly is a source that applies actions but that undo cannot change (as the
// server: source): neither Mutable nor a WorkingCopyChanger.
type applyOnly struct {
	datasource.Source
	ap datasource.ActionApplier
}

func (s applyOnly) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	return s.ap.ApplyAction(ctx, graphKey, a, opts...)
}

// TestUndoOnASourceUndoCannotChange: the refusal comes before any comparison with
// the graph, so the person is not shown a plan ("already as before", "would revert")
// for a source where nothing can be reverted.
func TestUndoOnASourceUndoCannotChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, agent.Options{},
		turn{calls: []convo.ToolCall{call("p1", "propose_move_node", `{"nodeKey":"fetch-api","posX":500,"posY":40,"reason":"tidy"}`)}},
		turn{text: "Moved."})
	res, err := f.agent.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "move it"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := f.agent.Resume(ctx, res.ThreadID, convo.Decision{Approved: true, ProposalID: "p1", Digest: res.Proposal.Digest}, nil); err != nil {
		t.Fatal(err)
	}
	a := agent.New(agent.Options{Provider: f.llm, Source: applyOnly{f.src, f.src}, Store: f.store, Retriever: retrieverNoCache(f.src)})
	u, err := a.Undo(ctx, agent.UndoRequest{ThreadID: res.ThreadID})
	if !errors.Is(err, undo.ErrNotUndoable) {
		t.Fatalf("err = %v, want the source refused", err)
	}
	if len(u.Reversed)+len(u.Already)+len(u.Left) > 0 {
		t.Errorf("a plan was shown for a source undo cannot change: %+v", u)
	}
}
