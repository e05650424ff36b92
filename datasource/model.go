package datasource

import "encoding/json"

// Built-in node types, always known whatever the workspace configs say.
var BuiltinTypes = []string{"starter", "return", "html", "entryType"}

// IsBuiltinType reports whether t is one of BuiltinTypes.
func IsBuiltinType(t string) bool {
	for _, b := range BuiltinTypes {
		if b == t {
			return true
		}
	}
	return false
}

// Graph is a Nodius graph's metadata. Sheets maps sheet id ("0") to its name ("main").
// Extra keeps fields this client does not know, so a file round-trips unchanged.
type Graph struct {
	Key         string            `json:"_key"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Workspace   string            `json:"workspace"`
	Sheets      map[string]string `json:"sheets"`
	Metadata    map[string]any    `json:"metadata"`

	Extra map[string]json.RawMessage `json:"-"`
}

// SheetName resolves a sheet id to its name, or the id itself when unnamed.
func (g Graph) SheetName(id string) string {
	if name, ok := g.Sheets[id]; ok && name != "" {
		return name
	}
	return id
}

// HandlePoint is one connection point of a node side.
type HandlePoint struct {
	ID     string `json:"id"`
	Type   string `json:"type"`   // "in" or "out"
	Accept string `json:"accept"` // accepted data type, "any" by default

	Extra map[string]json.RawMessage `json:"-"`
}

// HandleGroup is the set of points on one side of a node (L, R, T, B).
type HandleGroup struct {
	Position string        `json:"position"`
	Point    []HandlePoint `json:"point"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Size of a node on the canvas.
type Size struct {
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Node is one workflow step. Process is its JavaScript code; Data is free JSON.
// Embedding is optional (see the embed command); ContentHash records what was embedded.
type Node struct {
	Key       string                 `json:"_key"`
	Type      string                 `json:"type"`
	Sheet     string                 `json:"sheet"`
	Process   string                 `json:"process"`
	Handles   map[string]HandleGroup `json:"handles"`
	Data      any                    `json:"data"`
	PosX      float64                `json:"posX"`
	PosY      float64                `json:"posY"`
	Size      Size                   `json:"size"`
	Embedding []float32              `json:"embedding,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Edge connects a source node's handle to a target node's handle on one sheet.
type Edge struct {
	Key          string `json:"_key"`
	Sheet        string `json:"sheet"`
	Source       string `json:"source"`
	SourceHandle string `json:"sourceHandle"`
	Target       string `json:"target"`
	TargetHandle string `json:"targetHandle"`
	Label        string `json:"label"`

	Extra map[string]json.RawMessage `json:"-"`
}

// NodeConfig defines a custom node type of a workspace.
type NodeConfig struct {
	Key         string                 `json:"_key"`
	DisplayName string                 `json:"displayName"`
	Description string                 `json:"description"`
	Category    string                 `json:"category"`
	Icon        string                 `json:"icon"`
	Handles     map[string]HandleGroup `json:"handles"`
	Workspace   string                 `json:"workspace,omitempty"`

	Extra map[string]json.RawMessage `json:"-"`
}
