package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/nodiusws"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// The server's assistant proposes a new graph in home mode (create_graph) but does
// not create it: its web client does (AIInterruptModal's handleApprove), by POST
// /api/graph/create before it sends the approval, and tells the assistant what
// became of it in the decision's feedback. The runner does the same.

// CreateError is a creation the server refused, or that could not be asked.
type CreateError struct {
	Status int    // the HTTP status (0: no answer)
	Reason string // the server's own words, or what went wrong
}

func (e *CreateError) Error() string { return e.Reason }

// Workspace is the workspace a new graph goes to, as the web client picks it: the
// user's first workspace, else the user's id. It is read from the authResult of
// the same connection, which is also what the server's assistant lists the user's
// graphs from (wsAIController: workspaces[0] ?? userId).
func Workspace(auth nodiusws.AuthResult) string {
	for _, w := range auth.Workspaces {
		if w != "" {
			return w
		}
	}
	return auth.UserID
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

// CreateGraph creates the graph or HTML class g in workspace on the client's own
// server (POST /api/graph/create, with the client's token) and returns the key the
// server answers: the new graph's, which for an HTML class is its linked graph's
// (the server answers the graph document in both cases; the web client reports
// that key). A refusal is a *CreateError with the server's words.
func (c *Client) CreateGraph(ctx context.Context, g datasource.CreateGraphPayload, workspace string) (string, error) {
	if strings.TrimSpace(workspace) == "" {
		return "", &CreateError{Reason: "no workspace to create it in (the server named none for this user)"}
	}
	body, err := createBody(g, workspace)
	if err != nil {
		return "", &CreateError{Reason: "could not encode the request: " + err.Error()}
	}
	status, raw, err := c.send(ctx, http.MethodPost, "/api/graph/create", body)
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

// createdFeedback is the decision feedback that tells the server's assistant the
// graph was created, as the web client words it: created:graph:KEY or
// created:html:KEY.
func createdFeedback(g datasource.CreateGraphPayload, key string) string {
	kind := "graph"
	if g.Type == "htmlClass" {
		kind = "html"
	}
	return "created:" + kind + ":" + key
}

// what names the new graph for people: graph "Name" or HTML class "Name".
func (c *creation) what() string {
	if c.graph.Type == "htmlClass" {
		return fmt.Sprintf("HTML class %q", c.graph.Name)
	}
	return fmt.Sprintf("graph %q", c.graph.Name)
}

// result is the outcome of the creation as an apply result and in words.
func (c *creation) result() (*datasource.ApplyResult, string) {
	if c.key == "" {
		return &datasource.ApplyResult{}, fmt.Sprintf("the server did not create the %s: %s", c.what(), c.why)
	}
	g := datasource.CreatedGraph{Key: c.key, Name: c.graph.Name, Type: c.graph.Type, Open: "--graph " + c.key}
	return &datasource.ApplyResult{Applied: true, Graph: &g, Note: g.Sentence()},
		fmt.Sprintf("created %s on the server, key %s", c.what(), c.key)
}

// serverNewGraph is the new graph the server's thread serverID waits on, read from
// its history (GET /api/ai/thread/:id/messages): the last call of its last
// assistant message when it is propose_create_graph or propose_create_html_class
// and has no result yet. nil for anything else, or when the history cannot be read
// (the decision is then sent as it is).
func (r *Runner) serverNewGraph(ctx context.Context, serverID string) *datasource.CreateGraphPayload {
	msgs, err := r.c.Messages(ctx, serverID)
	if err != nil {
		r.log.Warn("could not read the server's thread to see what it waits on", "thread", serverID, "error", err.Error())
		return nil
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role == "tool" {
			return nil // the last call has its result: not what waits
		}
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var calls []struct {
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		if json.Unmarshal(m.ToolCalls, &calls) != nil || len(calls) == 0 {
			return nil
		}
		last := calls[len(calls)-1].Function
		typ := map[string]string{"propose_create_graph": "graph", "propose_create_html_class": "htmlClass"}[last.Name]
		var args struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		}
		if typ == "" || json.Unmarshal([]byte(last.Arguments), &args) != nil || strings.TrimSpace(args.Name) == "" {
			return nil
		}
		return &datasource.CreateGraphPayload{Name: args.Name, Type: typ, Description: args.Description}
	}
	return nil
}
