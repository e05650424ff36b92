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

// Graph is a Nodius graph's metadata. Sheets maps sheet id ("0") to its name
// ("main"): Nodius's sheetsList (earlier files called it sheets; both are read).
// Extra keeps fields this client does not know, so a file round-trips unchanged.
type Graph struct {
	Key         string            `json:"_key"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Workspace   string            `json:"workspace"`
	Sheets      map[string]string `json:"sheetsList"`
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

// HandleGroup is the set of points on one side of a node: T (top), D (down), R
// (right), L (left) or 0 (middle), as Nodius names them (see Sides).
type HandleGroup struct {
	Position string        `json:"position"`
	Point    []HandlePoint `json:"point"`

	Extra map[string]json.RawMessage `json:"-"`
}

// Size of a node on the canvas. Dynamic (Nodius's size.dynamic) lets the node
// grow with its content.
type Size struct {
	Width   float64 `json:"width"`
	Height  float64 `json:"height"`
	Dynamic bool    `json:"dynamic,omitempty"`
}

// Node is one workflow step; Data is free JSON. Embedding is optional (see the
// embed command).
//
// Process is the node's JavaScript code as everything downstream reads it. In the
// Nodius model a node has no code of its own: its code is its type's
// (NodeConfig.Process), and a document in that format fills Process from the
// node's type when it is read (ResolveCode) and never writes it on the node; a
// node whose type has no config has an empty Process (Document.MissingTypes says
// which types). In this project's earlier format (FormatEarlier) Process is the
// node's own "process" member.
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

// NodeConfig defines a custom node type of a workspace (Nodius's NodeTypeConfig):
// {_key, workspace, displayName, …, node: {type, handles, size, process, …}}.
// Handles and Process are node.handles and node.process; NodeExtra keeps the other
// members of node, Extra the other top-level members. Earlier files had flat
// configs (handles at the top, no node object, no code); they are read too.
type NodeConfig struct {
	Key         string                 `json:"_key"`
	DisplayName string                 `json:"displayName"`
	Description string                 `json:"description"`
	Category    string                 `json:"category"`
	Icon        string                 `json:"icon"`
	Handles     map[string]HandleGroup `json:"handles"`
	Workspace   string                 `json:"workspace,omitempty"`
	// Process is the code every node of this type runs (node.process).
	Process string `json:"process"`

	NodeExtra map[string]json.RawMessage `json:"-"`
	Extra     map[string]json.RawMessage `json:"-"`
}

// Format is the graph file format a document was read in; a document is written
// back in the format it was read in, never converted behind the user's back
// (the graph convert command converts).
type Format int

const (
	// FormatAuto, the zero value, is for documents made in memory: they are
	// written in Nodius's format when that loses nothing (every node's code is
	// its type's), else in the earlier format. A document read has its format.
	FormatAuto Format = iota
	// FormatNodius is Nodius's own model: sheetsList, nested node type configs
	// holding the code, nodes without code.
	FormatNodius
	// FormatEarlier is this project's earlier format: code as process on nodes,
	// sheets, flat configs without code.
	FormatEarlier
)

func (f Format) String() string {
	switch f {
	case FormatEarlier:
		return "earlier"
	case FormatNodius:
		return "nodius"
	}
	return "auto"
}
