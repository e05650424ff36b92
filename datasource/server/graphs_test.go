package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// TestListGraphsReadsEveryPage: the user's graphs are listed from the home page's
// request, a page of server.ListPage at a time until a short page, only those of
// the user's workspace, each once, with the token — and home mode's tools list them.
func TestListGraphsReadsEveryPage(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	want := []string{graphKey}
	for i := range server.ListPage + 5 {
		key := fmt.Sprintf("g%03d", i)
		want = append(want, key)
		body := fmt.Sprintf(`{"_key":%q,"name":"Graph %d","workspace":"2bef1a5a3bd4","sheetsList":{"0":"main"},"lastUpdatedTime":%d,"_sheets":{"0":{"nodes":[],"edges":[]}}}`, key, i, 1000+i)
		if err := s.AddGraph([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	// Another workspace's graph, and an HTML class's graph: not listed.
	for _, body := range []string{
		`{"_key":"bobs","name":"Bob's","workspace":"be95679f31a7","sheetsList":{"0":"main"},"_sheets":{"0":{"nodes":[],"edges":[]}}}`,
		`{"_key":"htmlg","name":"Page-graph","workspace":"2bef1a5a3bd4","htmlKeyLinked":"h1","sheetsList":{"0":"main"},"_sheets":{"0":{"nodes":[],"edges":[]}}}`,
	} {
		if err := s.AddGraph([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	src := source(t, s, "tok-alice", nil)
	keys, err := src.ListGraphKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("listed %d keys %v…, want %d", len(keys), keys[:min(3, len(keys))], len(want))
	}
	cfgs, err := src.WorkspaceConfigs(ctx)
	if err != nil || len(cfgs) == 0 {
		t.Errorf("node types %d, %v", len(cfgs), err)
	}
	if c := s.Counts(); c.GraphLists != 2 || c.NodeConfigLists != 1 || c.GraphGets != 0 || c.Sockets != 0 {
		t.Errorf("cost %+v: want two pages and the node types, no graph read, no socket", c)
	}
	for _, q := range s.Requests() {
		if q.Authorization != "Bearer tok-alice" {
			t.Errorf("request %s %s sent %q", q.Method, q.Path, q.Authorization)
		}
	}
	// A refused token is the auth sentence.
	bad := source(t, s, "tok-nobody", nil)
	var fe *fault.Error
	if _, err := bad.ListGraphKeys(ctx); !errors.As(err, &fe) || fe.Code != fault.Auth {
		t.Errorf("refused token: %v", err)
	}
}

// TestCreateGraphOnServer: an approved create_graph is POST /api/graph/create with
// the web client's body, in the user's first workspace (from the socket's
// authResult), and the server's key is the created graph's, readable at once;
// undo refuses with the reason; a refusal says the server's words.
func TestCreateGraphOnServer(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	src := source(t, s, "tok-bob", nil)
	var gc datasource.GraphCreator = src
	if err := gc.CanCreateGraph(ctx); err != nil {
		t.Fatal(err)
	}
	g, err := gc.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "Player Ranking", Type: "graph"}, "local-key")
	if err != nil {
		t.Fatal(err)
	}
	created := s.Created()
	if len(created) != 1 || g.Key != created[0] || g.Open != "--graph "+g.Key || g.Name != "Player Ranking" {
		t.Fatalf("created %+v, the stand-in made %v", g, created)
	}
	var body map[string]map[string]any
	for _, q := range s.Requests() {
		if q.Path == "/api/graph/create" {
			if q.Authorization != "Bearer tok-bob" {
				t.Errorf("create sent %q", q.Authorization)
			}
			if err := json.Unmarshal([]byte(q.Body), &body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if body["graph"]["name"] != "Player Ranking" || body["graph"]["workspace"] != "be95679f31a7" || len(body["graph"]) != 2 {
		t.Errorf("create body %v", body)
	}
	meta, err := src.Graph(ctx, g.Key)
	if err != nil || meta.Name != "Player Ranking" {
		t.Errorf("the new graph reads %+v, %v", meta, err)
	}
	if nodes, err := src.Nodes(ctx, g.Key, ""); err != nil || len(nodes) != 2 {
		t.Errorf("the new graph's nodes %v, %v", nodes, err)
	}
	err = gc.DeleteCreatedGraph(ctx, g, true)
	if err == nil || !strings.Contains(err.Error(), "undo cannot delete the graph \"Player Ranking\" (key "+g.Key+")") || !strings.Contains(err.Error(), "Nodius web client") {
		t.Errorf("undo: %v", err)
	}
	if s.Live(g.Key) == nil {
		t.Error("undo deleted the graph")
	}
	// An HTML class: the web client's body; the key is its linked graph's, which
	// the home page does not list among the workflows.
	h, err := gc.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "Card", Type: "htmlClass", Description: "a card"}, "")
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	var hb map[string]map[string]any
	_ = json.Unmarshal([]byte(reqs[len(reqs)-1].Body), &hb)
	if c := hb["htmlClass"]; c["name"] != "Card" || c["description"] != "a card" || c["workspace"] != "be95679f31a7" || c["category"] != "default" {
		t.Errorf("HTML class body %v", hb)
	}
	if g := s.Live(h.Key); g == nil || g.Doc["name"] != "Card-graph" || h.Type != "htmlClass" {
		t.Errorf("HTML class %+v: graph %v", h, g)
	}
	if keys, err := src.ListGraphKeys(ctx); err != nil || !slices.Equal(keys, []string{g.Key}) {
		t.Errorf("bob's graphs %v %v", keys, err)
	}
	// A retried approval cannot tell: MadeGraph says no.
	if made, err := datasource.CreatedGraphFinder(src).MadeGraph(ctx, datasource.CreateGraphPayload{Name: "Player Ranking"}, "local-key"); made || err != nil {
		t.Errorf("MadeGraph %v %v", made, err)
	}
}

func TestCreateGraphRequestRefusals(t *testing.T) {
	ctx := context.Background()
	p := datasource.CreateGraphPayload{Name: "X", Type: "graph"}
	for _, tc := range []struct {
		name   string
		status int
		answer string
		err    error
		want   string
	}{
		{"forbidden", 403, `{"error":"Access denied to workspace 'w'"}`, nil, "Access denied to workspace 'w' (HTTP 403)"},
		{"auth", 401, `{"error":"Unauthorized","message":"Invalid token"}`, nil, "Unauthorized: Invalid token (HTTP 401)"},
		{"empty 500", 500, ``, nil, "Internal Server Error (HTTP 500)"},
		{"no key", 200, `{"name":"X"}`, nil, "without a usable key"},
		{"bad key", 200, `{"_key":"a b"}`, nil, "without a usable key"},
		{"no answer", 0, ``, errors.New("connection refused"), "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := func(context.Context, string, []byte) (int, []byte, error) {
				return tc.status, []byte(tc.answer), tc.err
			}
			_, err := server.CreateGraphRequest(ctx, send, p, "w")
			var ce *server.CreateError
			if !errors.As(err, &ce) || ce.Status != tc.status || !strings.Contains(ce.Reason, tc.want) {
				t.Errorf("got %v (%+v), want %q", err, ce, tc.want)
			}
		})
	}
	if _, err := server.CreateGraphRequest(ctx, nil, p, " "); err == nil || !strings.Contains(err.Error(), "no workspace") {
		t.Errorf("no workspace: %v", err)
	}
	// A user with no workspace and no id: nowhere to create it.
	s := standIn(t)
	s.AddUser("tok-nows", servertest.User{Name: "nobody"})
	src := source(t, s, "tok-nows", nil)
	if _, err := src.CreateGraph(ctx, p, ""); err == nil || !strings.Contains(err.Error(), "did not create the graph \"X\"") {
		t.Errorf("refused: %v", err)
	}
}

// TestCreateGraphGoesToTheFirstWorkspace: a new graph goes to the user's first
// workspace, as the web client picks it (workspaces[0] || userId), not to the
// user's id — carol's id is not her workspace — and to the id only without one.
func TestCreateGraphGoesToTheFirstWorkspace(t *testing.T) {
	ctx := context.Background()
	s := standIn(t)
	src := source(t, s, "tok-carol", nil)
	if _, err := src.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "Carol's", Type: "graph"}, ""); err != nil {
		t.Fatal(err)
	}
	var body map[string]map[string]any
	for _, q := range s.Requests() {
		if q.Path == "/api/graph/create" {
			if err := json.Unmarshal([]byte(q.Body), &body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ws := body["graph"]["workspace"]; ws != "2bef1a5a3bd4" {
		t.Errorf("created in workspace %v, want carol's first workspace 2bef1a5a3bd4", ws)
	}
	for _, tc := range []struct {
		auth nodiusapi.AuthResult
		want string
	}{
		{nodiusapi.AuthResult{UserID: "u1", Workspaces: []string{"w1", "w2"}}, "w1"},
		{nodiusapi.AuthResult{UserID: "u1", Workspaces: []string{}}, "u1"},
		{nodiusapi.AuthResult{UserID: "u1"}, "u1"},
	} {
		if got := server.Workspace(tc.auth); got != tc.want {
			t.Errorf("Workspace(%+v) = %q, want %q", tc.auth, got, tc.want)
		}
	}
}
