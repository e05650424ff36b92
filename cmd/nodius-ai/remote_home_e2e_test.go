package main_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

// homeServer scripts the stand-in as the server's assistant in home mode: a
// create_graph proposal, and after the decision an answer that names what the
// feedback said (created:graph:KEY, or why the creation failed).
func homeServer(srv *remotetest.Server) {
	srv.SetChat(func(s *remotetest.Session) {
		s.Token("I can create it. ")
		s.Usage(494, 10)
		s.Propose("call_1_0", "propose_create_graph", map[string]any{"name": "Player Ranking", "reason": "you asked for it"},
			`{"type":"create_graph","payload":{"name":"Player Ranking","type":"graph"}}`)
	})
	srv.SetResume(func(s *remotetest.Session) {
		text := "Not created: " + s.Req.Feedback
		if key, ok := strings.CutPrefix(s.Req.Feedback, "created:graph:"); ok {
			text = "Created {{graph:" + key + "}}."
		}
		s.Token(text)
		s.Complete(text)
	})
}

// createRequests are the POST /api/graph/create srv received.
func createRequests(srv *remotetest.Server) []remotetest.Request {
	var out []remotetest.Request
	for _, r := range srv.Received() {
		if r.Type == "create" {
			out = append(out, r)
		}
	}
	return out
}

// TestRemoteHomeCreateGraph: with the server's assistant and no graph, ask runs in
// home mode (graph key and contextType "home"), stops at the create_graph proposal
// (exit 3); approve creates the graph as the web client does (POST
// /api/graph/create with the token, the web client's body, the user's workspace),
// tells the assistant created:graph:KEY, says the key (exit 0) and records the
// approval as applied. A creation the server refuses is a rejection sent with its
// reason, said and recorded as not applied, exit 1.
func TestRemoteHomeCreateGraph(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	e.withoutVar("NODIUS_AI_SOURCE") // the server's own graphs: no default graph
	homeServer(srv)

	r := e.runR("", "ask", "create a graph named Player Ranking")
	if r.code != 3 || !strings.Contains(r.stderr, `create graph "Player Ranking"`) {
		t.Fatalf("ask: exit %d (want 3)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if chat := srv.Received()[0]; chat.Type != "ai:chat" || chat.GraphKey != "home" || chat.ContextType != "home" {
		t.Fatalf("sent %+v, want graphKey and contextType home", chat)
	}
	id := between(r.stderr, "nodius-ai approve ", " ")
	r = e.runR("", "approve", id)
	creates := createRequests(srv)
	if len(creates) != 1 {
		t.Fatalf("approve: %d POST /api/graph/create\nexit %d\nstdout %s\nstderr %s", len(creates), r.code, r.stdout, r.stderr)
	}
	made := srv.Created()
	key := made[0].Key
	var body any
	_ = json.Unmarshal([]byte(creates[0].Raw), &body)
	if b, _ := json.Marshal(body); string(b) != `{"graph":{"name":"Player Ranking","workspace":"d0ceef773d53"}}` || creates[0].Authorization != "Bearer "+jwt {
		t.Errorf("create sent body %s, Authorization %q", b, creates[0].Authorization)
	}
	var resume remotetest.Request
	for _, q := range srv.Received() {
		if q.Type == "ai:resume" {
			resume = q
		}
	}
	if !resume.Approved || resume.Feedback != "created:graph:"+key {
		t.Errorf("resume approved=%v feedback %q", resume.Approved, resume.Feedback)
	}
	if r.code != 0 || !strings.Contains(r.stdout, "Created "+key) || !strings.Contains(r.stderr, "(key "+key+")") || !strings.Contains(r.stderr, "--graph "+key) {
		t.Fatalf("approve: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if p := e.show(id).Proposals; len(p) != 1 || p[0].Decision != "approved" || p[0].Outcome != "applied" {
		t.Errorf("recorded %+v", p)
	}
	// Undo does not delete it on the server: it says so and where to delete it.
	for _, args := range [][]string{{"undo", id}, {"undo", id, "--agent", "local"}} {
		if r := e.runR("", args...); r.code != 1 || !strings.Contains(r.stderr, "cannot delete the graph \"Player Ranking\" (key "+key+")") || !strings.Contains(r.stderr, "web client") {
			t.Errorf("%v: exit %d (want 1)\n%s", args, r.code, r.stderr)
		}
	}
	for _, q := range srv.Received() {
		if q.Type != "ai:chat" && q.Type != "ai:resume" && q.Type != "create" {
			t.Errorf("undo asked the server %+v", q)
		}
	}

	// Refused: the server's words, a rejection sent, exit 1, not applied.
	srv.SetCreateRefusal(http.StatusForbidden, "Access denied to workspace 'd0ceef773d53'")
	r = e.runR("", "ask", "another one")
	id = between(r.stderr, "nodius-ai approve ", " ")
	if r.code != 3 || id == "" {
		t.Fatalf("ask: exit %d\nstderr %s", r.code, r.stderr)
	}
	r = e.runR("", "approve", id)
	if r.code != 1 || !strings.Contains(r.stderr, "not applied") || !strings.Contains(r.stderr, "Access denied to workspace") {
		t.Fatalf("refused approve: exit %d (want 1)\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	for _, q := range srv.Received() {
		if q.Type == "ai:resume" {
			resume = q
		}
	}
	if resume.Approved || !strings.HasPrefix(resume.Feedback, "Creation failed: Access denied to workspace") {
		t.Errorf("refused: resume approved=%v feedback %q", resume.Approved, resume.Feedback)
	}
	if p := e.show(id).Proposals; len(p) != 1 || p[0].Decision != "approved" || p[0].Outcome != "not_applied" || !strings.Contains(p[0].ApplyError, "Access denied") {
		t.Errorf("recorded %+v", p)
	}
	if len(srv.Created()) != 1 {
		t.Errorf("created %+v", srv.Created())
	}
}

// TestRemoteHomeCreateSendsOnlyThatServersToken: tokens stored by auth login for two
// servers; the graph is created on the assistant's server with its token, and the
// other server (here the data source) never gets that token nor a creation.
func TestRemoteHomeCreateSendsOnlyThatServersToken(t *testing.T) {
	t.Parallel()
	e, srv := newRemoteEnv(t)
	other := remotetest.New(t, func(s *remotetest.Server) { s.Token = "tok-of-the-other-host" })
	e.withoutVar("NODIUS_AI_TOKEN")
	e.withoutVar("NODIUS_AI_SOURCE")
	e.vars = append(e.vars, "NODIUS_AI_KEYRING=off")
	for _, login := range []struct{ url, tok string }{{srv.URL, jwt}, {other.URL, "tok-of-the-other-host"}} {
		if r := e.runR(login.tok+"\n", "auth", "login", "--server", login.url, "--with-token"); r.code != 0 {
			t.Fatalf("auth login %s: exit %d %s", login.url, r.code, r.stderr)
		}
	}
	e.vars = append(e.vars, "NODIUS_AI_SOURCE=server:"+other.URL)
	homeServer(srv)
	r := e.runR("", "ask", "--graph", "home", "create a graph named Player Ranking")
	id := between(r.stderr, "nodius-ai approve ", " ")
	if r.code != 3 || id == "" {
		t.Fatalf("ask: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	if r = e.runR("", "approve", id); r.code != 0 {
		t.Fatalf("approve: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	creates := createRequests(srv)
	if len(creates) != 1 || creates[0].Authorization != "Bearer "+jwt {
		t.Fatalf("the assistant's server got %+v", creates)
	}
	for _, q := range other.Received() {
		if q.Type == "create" || strings.Contains(q.Authorization, jwt) || strings.Contains(q.Raw, jwt) {
			t.Errorf("the other server got %+v", q)
		}
	}
	for _, q := range srv.Received() {
		if strings.Contains(q.Authorization+q.Raw, "tok-of-the-other-host") {
			t.Errorf("the assistant's server got the other host's token: %+v", q)
		}
	}
}

// TestRemoteHomeChatTmux: the chat with the server's assistant and no graph opens in
// home mode (its welcome and placeholder), and approving the create_graph proposal
// in the dialog creates the graph and says its key.
func TestRemoteHomeChatTmux(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	e, srv := newRemoteEnv(t)
	e.withoutVar("NODIUS_AI_SOURCE")
	homeServer(srv)
	term := tmuxtest.Start(t, 110, 40, e.dir, append(e.vars, "NO_COLOR=1", "TERM=xterm-256color"), binary, "chat")
	s := term.Wait("Ask about your graphs")
	if !strings.Contains(s, "no graph open") || strings.Contains(s, "Ask about the graph") || strings.Contains(s, "completion is off") {
		t.Errorf("not home mode's chat:\n%s", s)
	}
	term.Type("create a graph named Player Ranking")
	term.Keys("Enter")
	term.Wait("Proposed change")
	time.Sleep(600 * time.Millisecond) // past the dialog's key guard
	term.Keys("a")
	s = term.Wait("approved and applied")
	made := srv.Created()
	if flat := strings.Join(strings.Fields(s), " "); len(made) != 1 || !strings.Contains(flat, "open it with --graph "+made[0].Key) {
		t.Fatalf("created %+v, screen:\n%s", made, s)
	}
	t.Logf("after approval:\n%s", s)
	term.Keys("C-c")
}
