package server

// Home mode on a Nodius server: the user's graphs are listed the way the web
// client's home page lists them (POST /api/graph/get with retrieveGraph and no
// token, a page at a time), and a new graph is made the way the web client makes
// one (POST /api/graph/create). The same request and the same reading of its
// answer serve the server's own assistant (agent/remote), so there is one of each.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// ListPage is how many graphs one listing request asks for: the web client's
// home page asks for 100.
const ListPage = 100

// MaxListedGraphs bounds a listing: past it the rest is left out (the server
// answers the most recently changed first). Each page is also bounded by
// MaxBytes.
const MaxListedGraphs = 1000

var (
	_ datasource.GraphCreator       = (*Source)(nil)
	_ datasource.CreatedGraphFinder = (*Source)(nil)
)

// ListGraphs lists the workflow graphs of the user's workspaces, most recently
// changed first, as the web client's home page does: POST /api/graph/get
// {retrieveGraph: {buildGraph: false, length, offset}} answers the graph documents
// (no nodes) of the token's workspaces, without the graphs of HTML classes and
// the invisible ones. Pages are read until one is short or MaxListedGraphs are
// listed; a graph changed between two pages may move from one to the other, so
// one seen twice is listed once.
func (s *Source) ListGraphs(ctx context.Context) ([]datasource.Graph, error) {
	out := []datasource.Graph{}
	seen := map[string]bool{}
	for offset := 0; offset < MaxListedGraphs; offset += ListPage {
		status, data, err := s.post(ctx, "/api/graph/get", map[string]any{
			"retrieveGraph": map[string]any{"buildGraph": false, "length": ListPage, "offset": offset}})
		if err != nil {
			return nil, err
		}
		if status != http.StatusOK {
			return nil, s.statusError(status, data)
		}
		var docs []json.RawMessage
		if err := json.Unmarshal(data, &docs); err != nil {
			return nil, &fault.Error{Code: fault.ServerError, Err: err,
				Message: "the Nodius server's list of graphs is not a JSON array — is server: the Nodius server's URL?"}
		}
		for _, d := range docs {
			var g datasource.Graph
			if json.Unmarshal(d, &g) != nil || !usableKey(g.Key) || seen[g.Key] {
				continue // not a graph this client can name: left out
			}
			seen[g.Key] = true
			out = append(out, g)
		}
		if len(docs) < ListPage {
			break
		}
	}
	return out, nil
}

// ListGraphKeys lists the keys of ListGraphs (what home mode's tools.ListGraphs
// asks a source that lists its graphs).
func (s *Source) ListGraphKeys(ctx context.Context) ([]string, error) {
	gs, err := s.ListGraphs(ctx)
	if err != nil {
		return nil, err
	}
	keys := make([]string, len(gs))
	for i, g := range gs {
		keys[i] = g.Key
	}
	return keys, nil
}

// WorkspaceConfigs lists the node types of the user's workspaces and the
// built-in ones (POST /api/nodeconfig/list answers those): home mode's
// list_node_configs, without reading a graph.
func (s *Source) WorkspaceConfigs(ctx context.Context) ([]datasource.NodeConfig, error) {
	configs, _, err := s.nodeConfigs(ctx, "")
	return configs, err
}

// CanCreateGraph: the server decides at creation (the token's access to the
// workspace); only a missing token is known before.
func (s *Source) CanCreateGraph(ctx context.Context) error {
	if s.api.Token() == "" {
		return &fault.Error{Code: fault.Auth, Message: "no token for the Nodius server — give one with --token or NODIUS_AI_TOKEN"}
	}
	return ctx.Err()
}

// CreateGraph makes the graph (or HTML class) p on the server as the web client
// does, in the user's workspace (Workspace: read from the authResult of an
// editing socket opened for it and closed at once), and returns the key the server
// chose (the key assigned locally is not the server's to take: it is kept as
// AssignedKey, which ties the graph to its action for undo).
func (s *Source) CreateGraph(ctx context.Context, p datasource.CreateGraphPayload, assigned string) (datasource.CreatedGraph, error) {
	if err := s.CanCreateGraph(ctx); err != nil {
		return datasource.CreatedGraph{}, err
	}
	conn, err := s.dial(ctx, "", nodiusapi.EditorOptions{})
	if err != nil {
		return datasource.CreatedGraph{}, err
	}
	workspace := Workspace(conn.User)
	_ = conn.Close()
	key, err := CreateGraphRequest(ctx, s.rawPost, p, workspace)
	if err != nil {
		return datasource.CreatedGraph{}, &fault.Error{Code: fault.InvalidRequest, Err: err,
			Message: fmt.Sprintf("the Nodius server did not create the %s: %v", what(p), err)}
	}
	return datasource.CreatedGraph{Key: key, AssignedKey: assigned, Name: p.Name, Type: p.Type, Nodes: []string{}, Open: "--graph " + key}, nil
}

// DeleteCreatedGraph refuses, as undo does for a graph the server's assistant
// made: the server's delete (POST /api/graph/delete) removes a graph and
// everything in it whatever it is, and nothing here tells whether it was opened
// or edited since (the server saves open graphs from memory, and an editor's copy
// would outlive the deletion). So it is left to the person, in Nodius.
func (s *Source) DeleteCreatedGraph(_ context.Context, g datasource.CreatedGraph, _ bool) error {
	kind, list := "graph", "Workflows"
	if g.Type == "htmlClass" {
		kind, list = "HTML class", "HTML classes"
	}
	name := termtext.Strip(g.Key)
	if strings.TrimSpace(g.Name) != "" {
		name = fmt.Sprintf("%q", termtext.Strip(g.Name))
	}
	return &fault.Error{Code: fault.InvalidRequest, Message: fmt.Sprintf(
		"undo cannot delete the %s %s (key %s) created on %s: the server's delete removes a graph and everything in it, and nothing here tells whether it was opened or edited since — if you no longer want it, delete it in the Nodius web client (home page, %s, the ⋮ menu of %s, Delete)",
		kind, name, termtext.Strip(g.Key), s.api.Server(), list, name)}
}

// MadeGraph answers whether an approval stopped after it asked the server for
// the graph made it. It cannot tell: the server chooses the key (key is ours, not
// its), and a graph of the same name made about then may be the person's own,
// made in the web client. So it answers false, and an approval retried after a
// crash between the server's answer and the record of it may create a second
// graph (the first one stays, in the web client's list).
func (s *Source) MadeGraph(ctx context.Context, _ datasource.CreateGraphPayload, _ string) (bool, error) {
	return false, ctx.Err()
}

// what names the new graph for people: graph "Name" or HTML class "Name".
func what(p datasource.CreateGraphPayload) string {
	if p.Type == "htmlClass" {
		return fmt.Sprintf("HTML class %q", p.Name)
	}
	return fmt.Sprintf("graph %q", p.Name)
}

// Sender sends one JSON body to path on the Nodius server, with the user's token,
// and returns the answer's status and body as they are (bounded); an error is a
// request that got no answer.
type Sender func(ctx context.Context, path string, body []byte) (status int, raw []byte, err error)

// CreateError is a creation the server refused, or that could not be asked.
type CreateError struct {
	Status int    // the HTTP status (0: no answer)
	Reason string // the server's own words, or what went wrong
}

func (e *CreateError) Error() string { return e.Reason }

// Workspace is the workspace a new graph goes to, as the web client picks it: the
// user's first workspace, else the user's id. It is read from the authResult of a
// socket of the same token, which is also what the server's assistant lists the
// user's graphs from (wsAIController: workspaces[0] ?? userId).
func Workspace(auth nodiusapi.AuthResult) string {
	for _, w := range auth.Workspaces {
		if w != "" {
			return w
		}
	}
	return auth.UserID
}

// CreateGraphRequest creates the graph or HTML class g in workspace (POST
// /api/graph/create through send, with the body the web client sends) and returns
// the key the server answers: the new graph's, which for an HTML class is its
// linked graph's (the server answers the graph document in both cases; the web
// client reports that key). A refusal is a *CreateError with the server's words.
func CreateGraphRequest(ctx context.Context, send Sender, g datasource.CreateGraphPayload, workspace string) (string, error) {
	if strings.TrimSpace(workspace) == "" {
		return "", &CreateError{Reason: "no workspace to create it in (the server named none for this user)"}
	}
	body, err := createBody(g, workspace)
	if err != nil {
		return "", &CreateError{Reason: "could not encode the request: " + err.Error()}
	}
	status, raw, err := send(ctx, "/api/graph/create", body)
	if err != nil {
		return "", &CreateError{Reason: err.Error()}
	}
	if status < 200 || status > 299 {
		return "", &CreateError{Status: status, Reason: refusal(status, raw)}
	}
	var created struct {
		Key string `json:"_key"`
	}
	if json.Unmarshal(raw, &created) != nil || !usableKey(created.Key) {
		return "", &CreateError{Status: status, Reason: "the server answered without a usable key for the new graph (_key) — it may run another version of Nodius; look in the web client whether it was created"}
	}
	return created.Key, nil
}

// createBody is the body the web client sends for a graph ({graph:{name,
// workspace}}) or an HTML class ({htmlClass:{name, description, category,
// workspace, permission, object}}).
func createBody(g datasource.CreateGraphPayload, workspace string) ([]byte, error) {
	if g.Type == "htmlClass" {
		return json.Marshal(map[string]any{"htmlClass": map[string]any{
			"name": g.Name, "description": g.Description, "category": "default",
			"workspace": workspace, "permission": 0, "object": map[string]any{}}})
	}
	return json.Marshal(map[string]any{"graph": map[string]any{"name": g.Name, "workspace": workspace}})
}

// usableKey reports whether key can be a document key (ArangoDB: at most 254
// bytes, no spaces, no control characters): it is written into the feedback the
// assistant reads and into commands shown to the person.
func usableKey(key string) bool {
	if key == "" || len(key) > 254 {
		return false
	}
	for _, r := range key {
		if r <= ' ' || r == 0x7f || r == '/' {
			return false
		}
	}
	return true
}

// refusal is a refused request's reason in the server's words: its {"error"} (and
// {"message"} beside it, as the auth middleware sends), else the HTTP status text,
// as the web client shows it.
func refusal(status int, raw []byte) string {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(raw, &e)
	msg := strings.TrimSpace(e.Error)
	if m := strings.TrimSpace(e.Message); m != "" && m != msg {
		if msg != "" {
			msg += ": "
		}
		msg += m
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" {
		msg = "no reason given"
	}
	if r := []rune(msg); len(r) > 300 {
		msg = string(r[:300]) + "…"
	}
	return termtext.OneLine(fmt.Sprintf("%s (HTTP %d)", msg, status))
}
