package remote_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/remote"
	"github.com/nodius/nodius-ai/agent/remote/remotetest"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

// proposeNew stops a home-mode run at a create_graph proposal, as the server's
// propose_create_graph / propose_create_html_class do (homeTools.ts).
func proposeNew(typ string) remotetest.Script {
	return func(s *remotetest.Session) {
		tool := "propose_create_graph"
		if typ == "htmlClass" {
			tool = "propose_create_html_class"
		}
		s.Usage(494, 10)
		s.Propose("call_1_0", tool, map[string]any{"name": "Player Ranking", "description": "ranks players", "reason": "asked"},
			`{"type":"create_graph","payload":{"name":"Player Ranking","type":"`+typ+`","description":"ranks players"}}`)
	}
}

// createBody is the body of the one POST /api/graph/create the server received.
func createBody(t *testing.T, srv *remotetest.Server) (map[string]map[string]any, remotetest.Request) {
	t.Helper()
	var got []remotetest.Request
	for _, r := range srv.Received() {
		if r.Type == "create" {
			got = append(got, r)
		}
	}
	if len(got) != 1 {
		t.Fatalf("%d POST /api/graph/create, want 1: %+v", len(got), srv.Received())
	}
	var body map[string]map[string]any
	if err := json.Unmarshal([]byte(got[0].Raw), &body); err != nil {
		t.Fatal(err)
	}
	return body, got[0]
}

// lastResume is the last ai:resume the server received.
func lastResume(t *testing.T, srv *remotetest.Server) remotetest.Request {
	t.Helper()
	reqs := srv.Received()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Type == "ai:resume" {
			return reqs[i]
		}
	}
	t.Fatal("no ai:resume received")
	return remotetest.Request{}
}

// Home mode over the server's assistant: the question goes out under graph key
// "home" with contextType "home"; an approved create_graph is created as the web
// client creates it (POST /api/graph/create with the token, in the authResult's
// workspace, the web client's body), then approved with created:graph:KEY (or
// created:html:KEY); the key is recorded with the decision.
func TestHomeCreateGraphApproved(t *testing.T) {
	for _, tc := range []struct {
		typ, kind string
		want      map[string]any
	}{
		{"graph", "graph", map[string]any{"graph": map[string]any{"name": "Player Ranking", "workspace": "d0ceef773d53"}}},
		{"htmlClass", "html", map[string]any{"htmlClass": map[string]any{"name": "Player Ranking", "description": "ranks players",
			"category": "default", "workspace": "d0ceef773d53", "permission": 0.0, "object": map[string]any{}}}},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			e := newEnv(t, nil)
			ctx := context.Background()
			e.srv.SetChat(proposeNew(tc.typ))
			res, err := e.run.Send(ctx, agent.SendRequest{GraphKey: "home", Text: "create a graph named Player Ranking"}, nil)
			if err != nil || res.Proposal == nil || res.Proposal.Action.Type != datasource.CreateGraphAction || res.Proposal.Action.CreateGraph.Type != tc.typ {
				t.Fatalf("send: %+v %v", res, err)
			}
			if r := e.srv.Received()[0]; r.GraphKey != "home" || r.ContextType != "home" {
				t.Fatalf("ai:chat sent graphKey %q contextType %q, want home/home", r.GraphKey, r.ContextType)
			}
			var said strings.Builder
			res, err = e.run.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, func(ev convo.Event) {
				if ev.Type == convo.EventToolResult {
					said.WriteString(ev.Result)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			body, req := createBody(t, e.srv)
			if got, _ := json.Marshal(body); string(got) != mustJSON(tc.want) {
				t.Errorf("create body %s, want %s", got, mustJSON(tc.want))
			}
			if req.Authorization != "Bearer "+testToken {
				t.Errorf("create sent Authorization %q", req.Authorization)
			}
			made := e.srv.Created()
			if len(made) != 1 {
				t.Fatalf("created %+v", made)
			}
			key := made[0].Key
			if r := lastResume(t, e.srv); !r.Approved || r.Feedback != "created:"+tc.kind+":"+key {
				t.Errorf("resume approved=%v feedback %q, want created:%s:%s", r.Approved, r.Feedback, tc.kind, key)
			}
			p := res.Decided
			if p == nil || p.Outcome != convo.Applied || p.Result == nil || p.Result.Graph == nil || p.Result.Graph.Key != key {
				t.Fatalf("decided %+v", p)
			}
			if !strings.Contains(said.String(), key) {
				t.Errorf("the decision's result does not name the key %s: %s", key, said.String())
			}
			if pend, err := e.store.PendingProposal(ctx, res.ThreadID); err != nil || pend != nil {
				t.Errorf("still pending: %+v %v", pend, err)
			}
			if v := e.srv.Violations(); len(v) > 0 {
				t.Errorf("violations %v", v)
			}
		})
	}
}

// A creation the server refuses is sent as the web client sends it (a rejection,
// "Creation failed: <the server's error>"), recorded as approved but not applied
// with the server's words, and the continued answer still streams.
func TestHomeCreateGraphRefused(t *testing.T) {
	e := newEnv(t, nil)
	e.srv.SetCreateRefusal(http.StatusForbidden, "Access denied to workspace 'd0ceef773d53'")
	ctx := context.Background()
	e.srv.SetChat(proposeNew("graph"))
	e.srv.SetResume(func(s *remotetest.Session) {
		s.Token("It was not created.")
		s.Complete("It was not created.")
	})
	res, err := e.run.Send(ctx, agent.SendRequest{GraphKey: "home", Text: "new graph"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatal(res, err)
	}
	res, err = e.run.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := lastResume(t, e.srv)
	if r.Approved || r.Feedback != "Creation failed: Access denied to workspace 'd0ceef773d53'" {
		t.Errorf("resume approved=%v feedback %q", r.Approved, r.Feedback)
	}
	p := res.Decided
	if p == nil || p.Decision != convo.Approved || p.Outcome != convo.NotApplied || !strings.Contains(p.ApplyError, "Access denied to workspace") {
		t.Fatalf("decided %+v", p)
	}
	if res.Text != "It was not created." {
		t.Errorf("the continued answer was cut: %q", res.Text)
	}
	if len(e.srv.Created()) != 0 {
		t.Error("a graph was created")
	}
}

// When the server fails the resume after the graph was created, the approval is
// kept with the key (approving again would create a second graph).
func TestHomeCreatedGraphKeptWhenTheResumeFails(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	e.srv.SetChat(proposeNew("graph"))
	e.srv.SetResume(func(s *remotetest.Session) { s.Error("the model is down") })
	res, err := e.run.Send(ctx, agent.SendRequest{GraphKey: "home", Text: "new graph"}, nil)
	if err != nil || res.Proposal == nil {
		t.Fatal(res, err)
	}
	res, err = e.run.Resume(ctx, res.ThreadID, convo.Decision{Approved: true}, nil)
	if err == nil {
		t.Fatal("no error")
	}
	made := e.srv.Created()
	if len(made) != 1 || res.Decided == nil || res.Decided.Result == nil || res.Decided.Result.Graph == nil || res.Decided.Result.Graph.Key != made[0].Key {
		t.Fatalf("decided %+v, created %+v", res.Decided, made)
	}
	if pend, err := e.store.PendingProposal(ctx, res.ThreadID); err != nil || pend != nil {
		t.Errorf("still pending: %+v %v", pend, err)
	}
}

// The real server (04m, 04n) fails a home-mode proposal over the WebSocket with
// "Graph not found: home": the error says what to do instead.
func TestHomeProposalServerBugIsExplained(t *testing.T) {
	e := newEnv(t, nil)
	e.srv.SetChat(func(s *remotetest.Session) {
		s.ToolStart("call_1_0", "propose_create_graph")
		s.Usage(494, 10)
		s.Error("Graph not found: home")
	})
	_, err := e.run.Send(context.Background(), agent.SendRequest{GraphKey: "home", Text: "create a graph"}, nil)
	ce, ok := fault.As(err)
	if !ok || !strings.Contains(ce.Message, "Graph not found: home") || !strings.Contains(ce.Message, "web client") {
		t.Fatalf("%v", err)
	}
}

// A create_graph proposal made in the web client, decided here (approve --remote):
// the server's history says what waits, so the graph is created as the web client
// would, and the approval is reported with its key.
func TestHomeWebClientCreateGraphApproved(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	args := `{"name":"Stats Page","reason":"asked"}`
	th := e.srv.NewThread("home", &remotetest.Pending{Kind: "hitl",
		ToolCall: map[string]any{"id": "call_9_0", "name": "propose_create_html_class", "args": map[string]any{"name": "Stats Page"}},
		Action:   json.RawMessage(`{"type":"create_graph","payload":{"name":"Stats Page","type":"htmlClass"}}`)},
		map[string]any{"role": "user", "content": "a stats page"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{map[string]any{"id": "call_9_0", "type": "function",
			"function": map[string]any{"name": "propose_create_html_class", "arguments": args}}}})
	local, err := e.run.Adopt(ctx, th.ID, "home")
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.run.Resume(ctx, local.ID, convo.Decision{Approved: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := createBody(t, e.srv)
	if body["htmlClass"]["name"] != "Stats Page" {
		t.Errorf("create body %v", body)
	}
	key := e.srv.Created()[0].Key
	if r := lastResume(t, e.srv); !r.Approved || r.Feedback != "created:html:"+key {
		t.Errorf("resume approved=%v feedback %q", r.Approved, r.Feedback)
	}
	if d := res.Decided; d == nil || d.Outcome != convo.Applied || d.Result.Graph == nil || d.Result.Graph.Key != key || d.Action.Type != datasource.CreateGraphAction {
		t.Fatalf("decided %+v", d)
	}
}

// The creation's answer is read as the web client reads it: the server's {error}
// (with the auth middleware's message) or the status text; a 2xx without a usable
// _key is not taken for a creation.
func TestCreateGraphAnswers(t *testing.T) {
	for _, tc := range []struct {
		status      int
		body, key   string
		errContains string
	}{
		{200, `{"_key":"5b1e0c7a9f21","name":"X"}`, "5b1e0c7a9f21", ""},
		{403, `{"error":"Access denied to workspace 'w'"}`, "", "Access denied to workspace 'w' (HTTP 403)"},
		{401, `{"error":"Unauthorized","message":"Token has been revoked","loginUrl":"/login"}`, "", "Unauthorized: Token has been revoked (HTTP 401)"},
		{500, ``, "", "Internal Server Error (HTTP 500)"},
		{200, `{"name":"X"}`, "", "without a usable key"},
		{200, `{"_key":"a b\n"}`, "", "without a usable key"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(tc.body))
		}))
		c, err := remote.New(remote.Options{BaseURL: srv.URL, Token: "t"})
		if err != nil {
			t.Fatal(err)
		}
		key, err := c.CreateGraph(context.Background(), datasource.CreateGraphPayload{Name: "X", Type: "graph"}, "w")
		srv.Close()
		if key != tc.key || (tc.errContains == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.errContains) {
			t.Errorf("%d %s: key %q err %v", tc.status, tc.body, key, err)
		}
	}
}
