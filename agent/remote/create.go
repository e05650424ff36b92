package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// The server's assistant proposes a new graph in home mode (create_graph) but does
// not create it: its web client does (AIInterruptModal's handleApprove), by POST
// /api/graph/create before it sends the approval, and tells the assistant what
// became of it in the decision's feedback. The runner does the same.

// CreateError is a creation the server refused, or that could not be asked (the
// one of the server: data source, which makes graphs the same way).
type CreateError = server.CreateError

// Workspace is the workspace a new graph goes to (server.Workspace).
func Workspace(auth nodiusapi.AuthResult) string { return server.Workspace(auth) }

// CreateGraph creates the graph or HTML class g in workspace on the client's own
// server (POST /api/graph/create, with the client's token) as the server: data
// source does (server.CreateGraphRequest), and returns the key the server answers.
// A refusal is a *CreateError with the server's words.
func (c *Client) CreateGraph(ctx context.Context, g datasource.CreateGraphPayload, workspace string) (string, error) {
	return server.CreateGraphRequest(ctx, func(ctx context.Context, path string, body []byte) (int, []byte, error) {
		return c.send(ctx, http.MethodPost, path, body)
	}, g, workspace)
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
