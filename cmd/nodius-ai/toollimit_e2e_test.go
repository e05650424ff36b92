package main_test

import (
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// readRounds is n turns that each call a read tool: a model that keeps looking.
func readRounds(n int) []llmtest.Turn {
	var ts []llmtest.Turn
	for i := 0; i < n; i++ {
		ts = append(ts, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "r" + string(rune('a'+i)), Name: "list_available_node_types", Arguments: `{}`}}})
	}
	return ts
}

// TestLocalToolLimit: the in-process agent stops at its tool-round limit with a
// choice, as the Nodius server does: exit 3 and a sentence (never raw JSON), a
// tool_limit event in NDJSON; approve continues with more rounds, reject asks for
// the answer now (a call without tools); --on-tool-limit decides ahead.
func TestLocalToolLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, append(readRounds(5), llmtest.Turn{Text: "Here is what I found."})...)
	r := e.run("", "ask", "--graph", "demo", "--format", "json", "look at everything")
	evs := events(t, r.stdout)
	if r.code != 3 || evs[len(evs)-1]["type"] != "tool_limit" {
		t.Fatalf("ask: code %d, events %s, stderr %s", r.code, types(evs), r.stderr)
	}
	id := evs[0]["thread_id"].(string)
	r = e.run("", "reject", id)
	if r.code != 0 || !strings.Contains(r.stdout, "Here is what I found.") {
		t.Fatalf("reject (answer now): code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if last := reqs[len(reqs)-1]; len(last.Tools) != 0 {
		t.Fatalf("the answer-now call offered %d tools", len(last.Tools))
	}

	e = newEnv(t, append(readRounds(5), llmtest.Turn{Text: "Summary without more rounds."})...)
	r = e.run("", "ask", "--graph", "demo", "look at everything")
	if r.code != 3 || strings.Contains(r.stderr, `"type"`) || !strings.Contains(r.stderr+r.stdout, "approve") {
		t.Fatalf("text ask at the limit: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	e = newEnv(t, append(readRounds(5), llmtest.Turn{Text: "Summary without more rounds."})...)
	r = e.run("", "ask", "--graph", "demo", "--on-tool-limit", "summary", "look at everything")
	if r.code != 0 || !strings.Contains(r.stdout, "Summary without more rounds.") {
		t.Fatalf("--on-tool-limit summary: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
	e = newEnv(t, append(readRounds(7), llmtest.Turn{Text: "After two more rounds."})...)
	r = e.run("", "ask", "--graph", "demo", "--on-tool-limit", "continue", "look at everything")
	if r.code != 0 || !strings.Contains(r.stdout, "After two more rounds.") {
		t.Fatalf("--on-tool-limit continue: code %d stdout %q stderr %s", r.code, r.stdout, r.stderr)
	}
}
