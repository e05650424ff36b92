// Package threadstest builds threads in a store the way the agent does, for tests
// of the packages that read them back (export and import, sync).
package threadstest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
	"github.com/nodius/nodius-ai/threads"
)

// ApplyWithUndo stores one approved and applied create_node proposal of node key,
// made by tool call callID, the way the agent does: asked, claimed with its planned
// action (the key assigned), its reversal saved, then decided.
func ApplyWithUndo(t testing.TB, s *threads.Store, th convo.Thread, callID, key string) convo.Proposal {
	t.Helper()
	ctx := context.Background()
	for _, m := range []*convo.Message{
		{ThreadID: th.ID, Role: convo.User, Content: "add " + key},
		{ThreadID: th.ID, Role: convo.Assistant, ToolCalls: []convo.ToolCall{
			{ID: callID, Name: "propose_create_node", Arguments: `{"nodeKey":"` + key + `","typeKey":"api-call","sheet":"0"}`}}},
	} {
		if err := s.SaveMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	p := convo.Proposal{ID: callID, ThreadID: th.ID, ToolCallID: callID, Tool: "propose_create_node",
		Action: datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: key, TypeKey: "api-call", Sheet: "0"}},
		Reason: "add " + key, Decision: convo.Pending}
	if err := s.SaveProposal(ctx, p); err != nil {
		t.Fatal(err)
	}
	opID := "op-" + callID
	planned := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: key, TypeKey: "api-call", Sheet: "0"}}
	if err := s.ClaimProposal(ctx, th.ID, callID, opID, "test:1", "", planned); err != nil {
		t.Fatal(err)
	}
	node := datasource.Node{Key: key, Type: "api-call", Sheet: "0"}
	rev, err := json.Marshal(undo.Reversal{Steps: []undo.Step{{Op: undo.RemoveNode, Key: key, Node: &node}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SaveReversal(ctx, th.ID, callID, opID, rev); err != nil {
		t.Fatal(err)
	}
	p.Decision, p.OpID = convo.Approved, opID
	p.Result = &datasource.ApplyResult{Applied: true, Created: datasource.Created{Nodes: []string{key}, Edges: []string{}}}
	if err := s.DecideProposal(ctx, p, &convo.Message{Role: convo.Tool, Content: `{"status":"approved"}`}); err != nil {
		t.Fatal(err)
	}
	return p
}

// UndoLast records the undo of the thread's last applied change the way the agent
// does (claimed, then finished with the message that tells the model), with left
// as what a forced undo left.
func UndoLast(t testing.TB, s *threads.Store, th convo.Thread, left []string) {
	t.Helper()
	ctx := context.Background()
	u, err := s.LastUndoable(ctx, th.ID)
	if err != nil || u == nil {
		t.Fatalf("LastUndoable: %v %v", u, err)
	}
	undoOp := "undo-" + u.ProposalID
	if err := s.ClaimUndo(ctx, th.ID, u.ProposalID, u.OpID, undoOp, "test:1", u.Reversal); err != nil {
		t.Fatal(err)
	}
	m := &convo.Message{ThreadID: th.ID, Role: convo.System, Kind: convo.KindUndo, Content: "The user undid the change " + u.ProposalID}
	if err := s.FinishUndo(ctx, th.ID, u.ProposalID, undoOp, left, m); err != nil {
		t.Fatal(err)
	}
}
