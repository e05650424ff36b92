package main_test

import (
	"encoding/json"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// canonicalGraph is a graph file's nodes and edges, each sorted by key, as JSON: two
// files that say the same thing compare equal whatever their layout.
func canonicalGraph(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Nodes []map[string]any `json:"nodes"`
		Edges []map[string]any `json:"edges"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	for _, list := range [][]map[string]any{doc.Nodes, doc.Edges} {
		sort.Slice(list, func(i, j int) bool { return list[i]["_key"].(string) < list[j]["_key"].(string) })
	}
	out, _ := json.MarshalIndent(doc, "", " ")
	return string(out)
}

// nodeOf returns one node of a parsed graph file.
func nodeOf(doc map[string]any, key string) map[string]any {
	for _, n := range doc["nodes"].([]any) {
		if n := n.(map[string]any); n["_key"] == key {
			return n
		}
	}
	return nil
}

// Another process changes the node a proposal changes while approve waits for the
// graph file's lock (after its checks, plan and claim): in a field the proposal
// does not touch, so the approval applies. The undo then puts back the graph as it
// was just before our change — the other writer's change is kept, not reverted to
// what the graph was when approve planned, and not refused as drift.
func TestUndoKeepsAChangeMadeWhileApproveWaitedForTheLock(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		call  llmtest.ToolCall
		other func(doc map[string]any) // the other writer's edit
	}{
		{
			name: "update of another data field",
			call: llmtest.ToolCall{ID: "u1", Name: "propose_update_node",
				Arguments: `{"nodeKey":"fetch-api","updates":{"data":{"url":"https://example.test/v2"}},"reason":"v2"}`},
			other: func(doc map[string]any) { nodeOf(doc, "fetch-api")["posY"] = 7.0 },
		},
		{
			name: "delete of a node whose data changed",
			call: llmtest.ToolCall{ID: "d1", Name: "propose_delete_node",
				Arguments: `{"nodeKey":"fetch-api","reason":"unused"}`},
			other: func(doc map[string]any) {
				n := nodeOf(doc, "fetch-api")
				n["data"].(map[string]any)["timeoutMs"] = 1234.0
				n["process"] = "// edited by someone else\n"
			},
		},
		{
			name: "move of a node moved meanwhile",
			call: llmtest.ToolCall{ID: "m1", Name: "propose_move_node",
				Arguments: `{"nodeKey":"root","posX":10,"posY":20,"reason":"tidy"}`},
			other: func(doc map[string]any) { n := nodeOf(doc, "root"); n["posX"], n["posY"] = 55.0, 66.0 },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{tc.call}}, llmtest.Turn{Text: "Done."},
				llmtest.Turn{Text: "Understood."})
			thread := e.askProposal("--graph", demo.GraphKey)

			lock := holdGraphLock(t, e.graph)
			_, done := startApprove(t, e, thread)
			deadline := time.Now().Add(30 * time.Second)
			for e.proposalOutcome(thread) != "claimed" {
				if time.Now().After(deadline) {
					t.Fatalf("approve did not claim the decision; outcome %q", e.proposalOutcome(thread))
				}
				select {
				case r := <-done:
					t.Fatalf("approve ended before taking the lock: %d %s", r.code, r.stderr)
				case <-time.After(20 * time.Millisecond):
				}
			}
			editGraph(t, e.graph, tc.other)
			before := canonicalGraph(t, e.graph) // just before our change
			_ = lock.Unlock()
			if r := <-done; r.code != 0 {
				t.Fatalf("approve: exit %d\n%s", r.code, r.stderr)
			}
			if canonicalGraph(t, e.graph) == before {
				t.Fatal("the approval changed nothing")
			}

			if r := e.run("", "undo", thread); r.code != 0 {
				t.Fatalf("undo: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if now := canonicalGraph(t, e.graph); now != before {
				t.Fatalf("undo did not restore the graph as it was just before the change:\nwant %s\ngot  %s", before, now)
			}
		})
	}
}
