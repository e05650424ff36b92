package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// TestHomeModeCreateGraphOnFile: on a file: source, propose_create_graph stops ask
// (exit 3); approved, it writes a new graph file next to the source's, in Nodius's
// format with a Starter and a Return node, and says its path; undo removes it. A
// file edited since it was made is left by undo, which says why.
func TestHomeModeCreateGraphOnFile(t *testing.T) {
	t.Parallel()
	for _, edit := range []bool{false, true} {
		e := newEnv(t,
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "g1", Name: "propose_create_graph",
				Arguments: `{"name":"Invoices 2026","description":"bills to pay","reason":"you asked for it"}`}}},
			llmtest.Turn{Text: "Created."})
		r := e.run("", "ask", "--graph", "home", "create an invoices graph")
		if r.code != 3 || !strings.Contains(r.stdout+r.stderr, "Invoices 2026") {
			t.Fatalf("ask: exit %d (want 3)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		id := threadID(t, e)
		r = e.run("", "approve", id)
		newFile := filepath.Join(e.dir, "invoices-2026.json")
		if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "invoices-2026.json") {
			t.Fatalf("approve: exit %d (want 0)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		var doc struct {
			Graph struct {
				Key, Name, Description string
				SheetsList             map[string]string
			}
			Nodes []struct {
				Key  string `json:"_key"`
				Type string
				PosX float64
			}
		}
		data, err := os.ReadFile(newFile)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Graph.Name != "Invoices 2026" || doc.Graph.Description != "bills to pay" || doc.Graph.SheetsList["0"] != "main" ||
			len(doc.Nodes) != 2 || doc.Nodes[0].Type != "starter" || doc.Nodes[1].Type != "return" || doc.Nodes[1].PosX != 300 {
			t.Errorf("new graph file:\n%s", data)
		}
		// The new file is a graph file nodius-ai opens.
		if r := e.run("", "inspect", "graph", "--source", "file:"+newFile, "--graph", doc.Graph.Key); r.code != 0 {
			t.Errorf("inspect the new graph: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if edit {
			if err := os.WriteFile(newFile, append(data, ' '), 0o644); err != nil {
				t.Fatal(err)
			}
			r = e.run("", "undo", id)
			if r.code != 1 || !strings.Contains(r.stderr, "changed since it was created") {
				t.Errorf("undo of an edited graph file: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(newFile); err != nil {
				t.Errorf("undo removed an edited graph file: %v", err)
			}
			continue
		}
		r = e.run("", "undo", id)
		if r.code != 0 {
			t.Fatalf("undo: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(newFile); !os.IsNotExist(err) {
			t.Errorf("undo left the graph file: %v", err)
		}
	}
}

// threadID is the id of the env's only thread.
func threadID(t *testing.T, e *env) string {
	t.Helper()
	list := e.run("", "threads", "list", "--format", "json")
	id := between(list.stdout, `"id":"`, `"`)
	if id == "" {
		id = between(list.stdout, `"id": "`, `"`)
	}
	if id == "" {
		t.Fatalf("no thread:\n%s\n%s", list.stdout, list.stderr)
	}
	return id
}
