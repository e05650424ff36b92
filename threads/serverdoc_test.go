package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nodius/nodius-ai/threads"
)

// serverFields are the 18 top-level fields the real server's thread store writes on
// every save: a document missing one reads differently in the web chat's list.
var serverFields = []string{"_key", "graphKey", "workspace", "userId", "contextType", "title", "conversationHistory",
	"pendingInterrupt", "totalPromptTokens", "totalCompletionTokens", "totalTokens", "totalCost", "provider", "model",
	"messageCount", "toolCallCount", "createdTime", "lastUpdatedTime"}

// TestServerThreadDocuments: every document the real server wrote (testdata/
// serverdocs, recorded) imports; a pending proposal becomes a pending proposal with
// its action, a pending tool limit none; and the document exported again has every
// field the server writes, pendingInterrupt written as null when nothing waits.
func TestServerThreadDocuments(t *testing.T) {
	t.Parallel()
	files, _ := filepath.Glob("testdata/serverdocs/*.json")
	if len(files) < 14 {
		t.Fatalf("%d recorded documents, want 14", len(files))
	}
	ctx := context.Background()
	s := openStore(t)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := threads.ParseDocument(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		th, err := s.Import(ctx, doc, threads.ImportOptions{Replace: true})
		if err != nil {
			t.Errorf("%s: import: %v", filepath.Base(f), err)
			continue
		}
		p, err := s.PendingProposal(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Base(f) {
		case "03-pending-proposal.json":
			if p == nil || p.Tool != "propose_create_node" || p.Action.Type != "create_node" ||
				p.Action.CreateNode == nil || p.Action.CreateNode.TypeKey != "log-node" || p.Action.CreateNode.PosX != 900 {
				t.Errorf("03: pending proposal %+v", p)
			}
		default:
			if p != nil {
				t.Errorf("%s: a proposal is pending: %+v", filepath.Base(f), p)
			}
		}
		out, err := s.Export(ctx, th.ID)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(out)
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		for _, k := range serverFields {
			if _, ok := fields[k]; !ok {
				t.Errorf("%s: exported document lacks %q", filepath.Base(f), k)
			}
		}
		var in map[string]json.RawMessage
		_ = json.Unmarshal(b, &in)
		for _, k := range []string{"totalPromptTokens", "totalCompletionTokens", "totalTokens", "totalCost", "provider", "model"} {
			if _, ok := in[k]; !ok {
				continue // 07a: a minimal document without totals
			}
			var got, want any
			_ = json.Unmarshal(fields[k], &got)
			if err := json.Unmarshal(in[k], &want); err != nil || got != want {
				t.Errorf("%s: exported %s = %s, the server wrote %s", filepath.Base(f), k, fields[k], in[k])
			}
		}
		if p == nil && string(fields["pendingInterrupt"]) != "null" {
			t.Errorf("%s: pendingInterrupt = %s, want null", filepath.Base(f), fields["pendingInterrupt"])
		}
		if p != nil {
			var in map[string]json.RawMessage
			_ = json.Unmarshal(fields["pendingInterrupt"], &in)
			for _, k := range []string{"kind", "toolCallId", "toolName", "args"} {
				if _, ok := in[k]; !ok || slices.Contains([]string{`""`, "null"}, string(in[k])) {
					t.Errorf("%s: pendingInterrupt.%s = %s (the server resumes from it)", filepath.Base(f), k, in[k])
				}
			}
		}
	}
}

// TestServerProposalArgs: a pending proposal the server wrote is read as the server's
// parseProposedAction reads its arguments: an update's "updates" are its changes,
// and a batch's flat steps are actions (03 with other propose_* calls).
func TestServerProposalArgs(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("testdata/serverdocs/03-pending-proposal.json")
	if err != nil {
		t.Fatal(err)
	}
	with := func(tool, args string) []byte {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		in := doc["pendingInterrupt"].(map[string]any)
		in["toolName"] = tool
		in["args"] = json.RawMessage(args)
		hist := doc["conversationHistory"].([]any)
		call := hist[len(hist)-1].(map[string]any)["tool_calls"].([]any)[0].(map[string]any)
		call["function"].(map[string]any)["name"] = tool
		call["function"].(map[string]any)["arguments"] = args
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	doc, err := threads.ParseDocument(bytes.NewReader(with("propose_update_node",
		`{"nodeKey":"n1","updates":{"name":"Renamed"},"reason":"r"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if a := doc.PendingInterrupt.ProposedAction; a.UpdateNode == nil || a.UpdateNode.NodeKey != "n1" || a.UpdateNode.Changes["name"] != "Renamed" {
		t.Errorf("update: action %+v, want n1's name changed to Renamed", a.UpdateNode)
	}
	doc, err = threads.ParseDocument(bytes.NewReader(with("propose_batch",
		`{"actions":[{"type":"move_node","nodeKey":"n1","posX":5,"posY":6},{"type":"update_node","nodeKey":"n2","updates":{"name":"B"}}],"reason":"r"}`)))
	if err != nil {
		t.Fatal(err)
	}
	a := doc.PendingInterrupt.ProposedAction
	if a.Batch == nil || len(a.Batch.Actions) != 2 {
		t.Fatalf("batch: action %+v, want 2 steps", a)
	}
	if m := a.Batch.Actions[0].MoveNode; m == nil || m.NodeKey != "n1" || m.PosX != 5 || m.PosY != 6 {
		t.Errorf("batch step 1 = %+v, want n1 moved to 5,6", a.Batch.Actions[0])
	}
	if u := a.Batch.Actions[1].UpdateNode; u == nil || u.NodeKey != "n2" || u.Changes["name"] != "B" {
		t.Errorf("batch step 2 = %+v, want n2's name changed to B", a.Batch.Actions[1])
	}
}

// TestRepeatedCallIDs: a provider that numbers calls per response ("call_0" each
// round) gives ids the thread renames; the pending proposal and the calls it has
// still to run keep pointing at the calls of the last round.
func TestRepeatedCallIDs(t *testing.T) {
	t.Parallel()
	const doc = `{"_key":"t1","graphKey":"g","workspace":"w","userId":"u","conversationHistory":[
	 {"role":"user","content":"q"},
	 {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"search_nodes","arguments":"{}"}},{"id":"call_1","type":"function","function":{"name":"search_nodes","arguments":"{}"}}]},
	 {"role":"tool","tool_call_id":"call_0","content":"a"},
	 {"role":"tool","tool_call_id":"call_1","content":"b"},
	 {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function","function":{"name":"propose_delete_node","arguments":"{\"nodeKey\":\"n1\",\"reason\":\"r\"}"}},{"id":"call_1","type":"function","function":{"name":"search_nodes","arguments":"{}"}}]}],
	 "pendingInterrupt":{"kind":"hitl","toolCallId":"call_0","toolName":"propose_delete_node","args":{"nodeKey":"n1","reason":"r"},"context":{},"toolCallLog":[],
	  "remainingToolCalls":[{"id":"call_1","type":"function","function":{"name":"search_nodes","arguments":"{}"}}]}}`
	d, err := threads.ParseDocument(bytes.NewReader([]byte(doc)))
	if err != nil {
		t.Fatal(err)
	}
	h := d.ConversationHistory
	if h[2].ToolCallID != "call_0" || h[3].ToolCallID != "call_1" {
		t.Errorf("first round's results answer %q, %q; want call_0, call_1", h[2].ToolCallID, h[3].ToolCallID)
	}
	last := h[4].ToolCalls
	in := d.PendingInterrupt
	if last[0].ID == "call_0" || last[1].ID == "call_1" {
		t.Errorf("second round's ids %q, %q are not renamed", last[0].ID, last[1].ID)
	}
	if in.ToolCallID != last[0].ID || in.ToolCall.ID != last[0].ID {
		t.Errorf("pending call %q / %q, want %q", in.ToolCallID, in.ToolCall.ID, last[0].ID)
	}
	if len(in.RemainingToolCalls) != 1 || in.RemainingToolCalls[0].ID != last[1].ID {
		t.Errorf("remaining calls %+v, want %q", in.RemainingToolCalls, last[1].ID)
	}
}
