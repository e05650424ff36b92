package main_test

// End-to-end tests of issue 25's exactly-once and trust points, over the built
// binary: two proposals in one model response, a run that fails before any answer.

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// twoProposals is one model response proposing two log nodes at once.
func twoProposals() llmtest.Turn {
	call := func(id string, x int) llmtest.ToolCall {
		return llmtest.ToolCall{ID: id, Name: "propose_create_node",
			Arguments: `{"typeKey":"log-node","sheet":"0","posX":900,"posY":` + itoa(x) + `,"reason":"log ` + id + `"}`}
	}
	return llmtest.Turn{ToolCalls: []llmtest.ToolCall{call("call_one", 100), call("call_two", 300)}}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

var decideWith = regexp.MustCompile(`Decide with: nodius-ai approve (\S*) --proposal (\S+) --digest ([0-9a-f]+)`)

// With two proposals pending from one response, deciding the first exits 3 and
// prints the command for the second, with the thread id; deciding that one ends
// the run.
func TestTwoProposalsDecidedOneByOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t, twoProposals(), llmtest.Turn{Text: "Both logged."})
	r := e.run("", "ask", "add two log nodes")
	if r.code != 3 {
		t.Fatalf("ask: code %d (want 3)\n%s", r.code, r.stderr)
	}
	m := decideWith.FindStringSubmatch(r.stderr)
	if m == nil || m[1] == "" || m[2] != "call_one" {
		t.Fatalf("ask printed no usable command for the first proposal:\n%s", r.stderr)
	}
	thread := m[1]
	r = e.run("", "approve", thread, "--proposal", "call_one", "--digest", m[3])
	if r.code != 3 {
		t.Fatalf("approve the first: code %d (want 3: another waits)\n%s", r.code, r.stderr)
	}
	m = decideWith.FindStringSubmatch(r.stderr)
	if m == nil || m[1] != thread || m[2] != "call_two" {
		t.Fatalf("approve the first printed no command for the second with thread %s:\n%s", thread, r.stderr)
	}
	args := strings.Fields(m[0])[3:] // what it said to run, as printed
	r = e.run("", args...)
	if r.code != 0 {
		t.Fatalf("%v: code %d (want 0)\n%s", args, r.code, r.stderr)
	}
	if got := logNodes(readGraph(t, e.graph)); len(got) != 2 {
		t.Errorf("log nodes after both approvals: %v (want 2)", got)
	}
}

// ask --on-proposal approve|reject decides every proposal of the response.
func TestTwoProposalsOnProposal(t *testing.T) {
	t.Parallel()
	for _, verb := range []string{"approve", "reject"} {
		t.Run(verb, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, twoProposals(), llmtest.Turn{Text: "Done."})
			r := e.run("", "ask", "--on-proposal", verb, "add two log nodes")
			if r.code != 0 {
				t.Fatalf("ask --on-proposal %s: code %d (want 0)\n%s", verb, r.code, r.stderr)
			}
			threads := e.listThreads()
			if len(threads) != 1 {
				t.Fatalf("threads: %v", threads)
			}
			s := e.show(threads[0])
			for _, p := range s.Proposals {
				if p.Decision == "pending" {
					t.Errorf("proposal %s still pending after --on-proposal %s", p.ID, verb)
				}
			}
			want := 0
			if verb == "approve" {
				want = 2
			}
			if got := logNodes(readGraph(t, e.graph)); len(got) != want {
				t.Errorf("log nodes: %v (want %d)", got, want)
			}
		})
	}
}

// listThreads returns the ids of every thread (archived ones too).
func (e *env) listThreads() []string {
	e.t.Helper()
	r := e.run("", "threads", "list", "--all", "--format", "json")
	if r.code != 0 {
		e.t.Fatalf("threads list: %d %s", r.code, r.stderr)
	}
	var ids []string
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			e.t.Fatalf("threads list json: %v\n%s", err, r.stdout)
		}
		collectIDs(v, &ids)
	}
	return ids
}

func collectIDs(v any, ids *[]string) {
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			collectIDs(x, ids)
		}
	case map[string]any:
		if id, ok := v["id"].(string); ok {
			*ids = append(*ids, id)
		}
	}
}

// A run that fails before anything was answered (the provider cannot be reached)
// leaves no thread behind.
func TestFailedRunLeavesNoThread(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.withoutVar("NODIUS_AI_BASE_URL")
	e.vars = append(e.vars, "NODIUS_AI_BASE_URL=http://127.0.0.1:1/v1")
	r := e.run("", "ask", "what does fetch-api do?")
	if r.code == 0 || r.code == 3 {
		t.Fatalf("ask with no provider: code %d\n%s", r.code, r.stderr)
	}
	if ids := e.listThreads(); len(ids) != 0 {
		t.Errorf("threads after a run that failed before any answer: %v (want none)", ids)
	}
}
