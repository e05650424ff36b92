package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// TestAskWithoutGraphIsHomeMode: on a source that lists its graphs and has no
// default graph (an ArangoDB workspace), ask with no --graph runs in home mode — the
// home prompt and tools — lists the workspace's graphs through list_user_graphs and
// answers, naming the graph tagged by the model.
func TestAskWithoutGraphIsHomeMode(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fa, _ := arangoDemo(ctx, t)
	fa.Insert(arangotest.Graphs, map[string]any{"_key": "invoices", "workspace": "ws", "name": "Invoices"})
	e := newEnv(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_user_graphs", Arguments: `{}`}}},
		llmtest.Turn{Text: "You have two graphs: {{graph:invoices}} and {{graph:demo}}."},
		llmtest.Turn{Text: "Only those two."})
	e.vars = append(e.vars, "NODIUS_AI_SOURCE="+fa.URL("ws"))
	r := e.run("", "ask", "what graphs do I have?")
	if r.code != 0 || !strings.Contains(r.stdout, "Invoices") || strings.Contains(r.stdout, "{{") {
		t.Fatalf("ask: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	// --continue with no graph continues the home thread.
	if r := e.run("", "ask", "--continue", "no others?"); r.code != 0 || !strings.Contains(r.stdout, "Only those two.") {
		t.Fatalf("ask --continue: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if third := string(reqs[2].Body); !strings.Contains(third, "what graphs do I have?") {
		t.Errorf("--continue did not continue the home thread:\n%.400s", third)
	}
	first, second := string(reqs[0].Body), string(reqs[1].Body)
	if !strings.Contains(first, "no graph is open") || !strings.Contains(first, `"propose_create_graph"`) || strings.Contains(first, `"read_graph_overview"`) {
		t.Errorf("the first request is not home mode's:\n%.600s", first)
	}
	if !strings.Contains(second, "invoices") || !strings.Contains(second, "Invoices") {
		t.Errorf("list_user_graphs did not list the workspace's graphs:\n%s", second)
	}
}

// TestHomeModeCreateGraphApproveAndReject: on ArangoDB, propose_create_graph stops
// ask (exit 3) and is shown; approved, the graph is inserted in the real schema
// (the graph, its Starter and Return nodes) and its key said; undo removes it;
// rejected, nothing is made (exit 0).
func TestHomeModeCreateGraphApproveAndReject(t *testing.T) {
	t.Parallel()
	for _, approve := range []bool{true, false} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		fa, client := arangoDemo(ctx, t)
		e := newEnv(t,
			llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "g1", Name: "propose_create_graph",
				Arguments: `{"name":"Invoices","description":"bills to pay","reason":"you asked for it"}`}}},
			llmtest.Turn{Text: "Understood."})
		e.vars = append(e.vars, "NODIUS_AI_SOURCE="+fa.URL("ws"))
		r := e.run("", "ask", "create an invoices graph")
		if r.code != 3 || !strings.Contains(r.stdout+r.stderr, "Invoices") {
			t.Fatalf("ask: exit %d (want 3)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		id := threadID(t, e)
		if !approve {
			r = e.run("", "reject", id)
			if r.code != 0 {
				t.Errorf("reject: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			if p := e.show(id).Proposals[0]; p.Decision != "rejected" {
				t.Errorf("rejected proposal: %+v", p)
			}
			if keys, err := client.ListGraphKeys(ctx); err != nil || len(keys) != 1 {
				t.Errorf("graphs after a rejection: %v %v", keys, err)
			}
			continue
		}
		r = e.run("", "approve", id)
		keys, err := client.ListGraphKeys(ctx)
		if err != nil || len(keys) != 2 {
			t.Fatalf("graphs after the approval: %v %v\nstderr %s", keys, err, r.stderr)
		}
		key := keys[0]
		if key == "demo" {
			key = keys[1]
		}
		if r.code != 0 || !strings.Contains(r.stderr, "created graph \"Invoices\" (key "+key+") — open it with --graph "+key) {
			t.Errorf("approve: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		if n := fa.Doc(arangotest.Nodes, key+"-root"); n["type"] != "starter" {
			t.Errorf("starter node %v", n)
		}
		if r := e.run("", "undo", id); r.code != 0 {
			t.Fatalf("undo: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
		}
		if keys, err := client.ListGraphKeys(ctx); err != nil || len(keys) != 1 || fa.Doc(arangotest.Nodes, key+"-root") != nil {
			t.Errorf("graphs after the undo: %v %v", keys, err)
		}
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return ""
}
