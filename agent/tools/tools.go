// Package tools holds the assistant's tools: the eight read tools the agent runs at once
// against a datasource.Source, and the propose_* write tools that never run here —
// ParseProposal validates their arguments strictly against the graph and turns them
// into a datasource.Action a person approves. Names and schemas are the Nodius
// server's assistant's, so a thread reads alike in both runtimes.
//
// Each tool is described by one table that produces both the JSON schema sent to the
// model and the validation of what the model sends back, so the two cannot disagree.
// Tool results are TOON (rag/toon), like the retrieval context, so the model reads one
// notation throughout.
package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
)

// Error codes say what kind of mistake the model made; they are for logs and tests,
// the message is what the model reads.
const (
	CodeUnknownTool     = "unknown_tool"
	CodeInvalidJSON     = "invalid_json"
	CodeInvalidArgument = "invalid_argument"
	CodeNotFound        = "not_found"
	CodeInvalidAction   = "invalid_action"
)

// Error is a mistake in a tool call that the model can correct: the agent sends
// Error() back as the tool's error result. Failures of the data source itself are not
// *Error (they wrap the source's error).
type Error struct {
	Tool string
	Code string
	Msg  string
}

func (e *Error) Error() string {
	if e.Tool == "" {
		return e.Msg
	}
	return e.Tool + ": " + e.Msg
}

func argErr(tool, format string, a ...any) error {
	return &Error{Tool: tool, Code: CodeInvalidArgument, Msg: fmt.Sprintf(format, a...)}
}

// toolDef is a spec rendered: name, description and JSON schema.
type toolDef struct {
	name   string
	desc   string
	schema map[string]any
}

func (d toolDef) convo() convo.ToolDef {
	raw, err := json.Marshal(d.schema)
	if err != nil { // schemas are static tables of strings, numbers and maps
		raw = []byte(`{"type":"object"}`)
	}
	return convo.ToolDef{Name: d.name, Description: d.desc, Parameters: raw}
}

// WritePrefix starts the name of every write tool.
const WritePrefix = "propose_"

// IsWriteTool reports whether name is a write tool: its call stops the loop as a
// proposal instead of running.
func IsWriteTool(name string) bool { return strings.HasPrefix(name, WritePrefix) }

// Roles. Anything else is treated as a viewer, the safe choice.
const (
	RoleViewer = "viewer"
	RoleEditor = "editor"
	RoleAdmin  = "admin"
)

// CanPropose reports whether role may be offered write tools.
func CanPropose(role string) bool { return role == RoleEditor || role == RoleAdmin }

// ToolDefs is every tool offered to role: the read tools always, and for an editor or
// admin the write tools whose action type allowed accepts (nil allows all).
func ToolDefs(role string, allowed func(datasource.ActionType) bool) []convo.ToolDef {
	defs := ReadToolDefs()
	if CanPropose(role) {
		defs = append(defs, WriteToolDefs(allowed)...)
	}
	return defs
}

// ActionTypes lists the distinct action types an action contains, batch steps
// included, in datasource.ActionTypes order — what an approval policy must check.
func ActionTypes(a datasource.Action) []datasource.ActionType {
	seen := map[string]bool{}
	var walk func(a datasource.Action)
	walk = func(a datasource.Action) {
		seen[string(a.Type)] = true
		if a.Type == datasource.BatchAction && a.Batch != nil {
			for _, s := range a.Batch.Actions {
				walk(s)
			}
		}
	}
	walk(a)
	var out []datasource.ActionType
	for _, t := range datasource.ActionTypes {
		if seen[string(t)] {
			out = append(out, t)
			delete(seen, string(t))
		}
	}
	// A type outside ActionTypes (a stored server action) is listed too, so a
	// policy never reads an empty list as "nothing to check".
	for _, t := range sortedKeys(seen) {
		out = append(out, datasource.ActionType(t))
	}
	return out
}
