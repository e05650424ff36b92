package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// TestServerSourceHomeMode: the local agent on a Nodius server (--source
// server:URL) with no graph is in home mode: list_user_graphs lists the user's
// graphs from the server's home-page request, propose_create_graph stops ask
// (exit 3), and approving creates the graph by POST /api/graph/create with the
// web client's body in the user's workspace and that server's token, and says
// the server's key; undo refuses in words. Tokens stored for two servers: the
// other server's token is never sent.
func TestServerSourceHomeMode(t *testing.T) {
	t.Parallel()
	standIn := func() *servertest.Server {
		s, err := servertest.NewSeeded(servertest.Options{PairedPorts: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	srv, other := standIn(), standIn()
	e := newEnv(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "list_user_graphs", Arguments: `{}`},
			{ID: "c0", Name: "list_node_configs", Arguments: `{}`}}},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c2", Name: "propose_create_graph",
			Arguments: `{"name":"Player Ranking","description":"rank players","reason":"you asked for it"}`}}},
		llmtest.Turn{Text: "Created {{graph:new}}."})
	e.withoutVar("NODIUS_AI_SOURCE")
	e.vars = append(e.vars, "NODIUS_AI_KEYRING=off")
	for _, login := range []struct{ url, tok string }{{srv.URL, "tok-alice"}, {other.URL, "tok-bob"}} {
		if r := e.run(login.tok+"\n", "auth", "login", "--server", login.url, "--with-token"); r.code != 0 {
			t.Fatalf("auth login %s: exit %d %s", login.url, r.code, r.stderr)
		}
	}
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=server:"+srv.URL)

	r := e.run("", "ask", "what graphs do I have? add a Player Ranking one")
	if r.code != 3 || !strings.Contains(r.stdout+r.stderr, `create graph "Player Ranking"`) {
		t.Fatalf("ask: exit %d (want 3)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	if first := string(reqs[0].Body); !strings.Contains(first, "no graph is open") || !strings.Contains(first, `"propose_create_graph"`) {
		t.Errorf("not home mode:\n%.600s", first)
	}
	if second := string(reqs[1].Body); !strings.Contains(second, "testgraph001") || !strings.Contains(second, "NBA Stats Pipeline") {
		t.Errorf("list_user_graphs did not list the server's graphs:\n%.2000s", second)
	}
	if len(srv.Created()) != 0 {
		t.Fatalf("created before the approval: %v", srv.Created())
	}
	// Listing read no graph and opened no editing socket.
	if c := srv.Counts(); c.GraphGets != 0 || c.Sockets != 0 || c.GraphLists == 0 || c.NodeConfigLists == 0 {
		t.Errorf("home mode's reads cost %+v", c)
	}

	id := threadID(t, e)
	r = e.run("", "approve", id)
	created := srv.Created()
	if len(created) != 1 {
		t.Fatalf("created %v\nstdout %s\nstderr %s", created, r.stdout, r.stderr)
	}
	key := created[0]
	if r.code != 0 || !strings.Contains(r.stderr, `created graph "Player Ranking" (key `+key+`) — open it with --graph `+key) {
		t.Errorf("approve: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	var creates int
	for _, q := range srv.Requests() {
		if q.Authorization != "Bearer tok-alice" {
			t.Errorf("%s %s sent %q", q.Method, q.Path, q.Authorization)
		}
		if q.Path != "/api/graph/create" {
			continue
		}
		creates++
		var body map[string]map[string]any
		if err := json.Unmarshal([]byte(q.Body), &body); err != nil || len(body) != 1 ||
			body["graph"]["name"] != "Player Ranking" || body["graph"]["workspace"] != "2bef1a5a3bd4" {
			t.Errorf("create body %s", q.Body)
		}
	}
	if creates != 1 {
		t.Errorf("%d creation requests", creates)
	}
	// The other server was asked only by its own auth login, with its own token.
	for _, q := range other.Requests() {
		if q.Path != "/api/auth/me" || q.Authorization != "Bearer tok-bob" || strings.Contains(q.Body, "tok-alice") {
			t.Errorf("the other server got %+v", q)
		}
	}
	if g := srv.Live(key); g == nil {
		t.Fatalf("the new graph %s is not on the server", key)
	}

	// The new graph is listed next time; undo leaves it, saying where to delete it.
	r = e.run("", "undo", id)
	if r.code == 0 || !strings.Contains(r.stderr, `undo cannot delete the graph "Player Ranking" (key `+key+`)`) || srv.Live(key) == nil {
		t.Errorf("undo: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}

	// A refused token is said as such, not as a missing --graph.
	e.vars = append(e.vars, "NODIUS_AI_TOKEN=tok-nobody")
	if r := e.run("", "ask", "hi"); r.code == 0 || r.code == 2 || !strings.Contains(r.stderr, "refused the token") {
		t.Errorf("refused token: exit %d\nstderr %s", r.code, r.stderr)
	}
}
