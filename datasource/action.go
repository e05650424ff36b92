package datasource

import (
	"encoding/json"
	"fmt"
)

// ActionType names what a ProposedAction does.
type ActionType string

const (
	CreateNodeAction ActionType = "create_node"
	UpdateNodeAction ActionType = "update_node"
	MoveNodeAction   ActionType = "move_node"
	DeleteNodeAction ActionType = "delete_node"
	CreateEdgeAction ActionType = "create_edge"
	DeleteEdgeAction ActionType = "delete_edge"
	BatchAction      ActionType = "batch"

	// The Nodius server's assistant proposes these too (its proposal types: docs/protocol.md),
	// and so does the local agent, with the server's tools; create_graph is the
	// server's home mode only, so it is not in ActionTypes.
	CreateNodeWithEdgesAction ActionType = "create_node_with_edges"
	ConfigureNodeTypeAction   ActionType = "configure_node_type"
	ReorganizeLayoutAction    ActionType = "reorganize_layout"
	CreateGraphAction         ActionType = "create_graph"
)

// ActionTypes lists every action type, in the order they are documented.
var ActionTypes = []ActionType{CreateNodeAction, UpdateNodeAction, MoveNodeAction, DeleteNodeAction, CreateEdgeAction, DeleteEdgeAction, BatchAction,
	CreateNodeWithEdgesAction, ConfigureNodeTypeAction, ReorganizeLayoutAction, CreateGraphAction}

// Action is a ProposedAction: a change to a graph that the model proposes and a person
// approves. Its JSON form is {"type": ..., "payload": {...}}, as the server stores it;
// exactly one payload pointer, the one matching Type, is set.
type Action struct {
	Type       ActionType
	CreateNode *CreateNodePayload
	UpdateNode *UpdateNodePayload
	MoveNode   *MoveNodePayload
	DeleteNode *DeleteNodePayload
	CreateEdge *CreateEdgePayload
	DeleteEdge *DeleteEdgePayload
	Batch      *BatchPayload

	CreateNodeWithEdges *CreateNodeWithEdgesPayload
	ConfigureNodeType   *ConfigureNodeTypePayload
	ReorganizeLayout    *ReorganizeLayoutPayload
	CreateGraph         *CreateGraphPayload
}

// CreateNodePayload describes a node to create. NodeKey is optional: the source
// generates one when empty.
type CreateNodePayload struct {
	NodeKey string                 `json:"nodeKey,omitempty"`
	TypeKey string                 `json:"typeKey"`
	Sheet   string                 `json:"sheet"`
	PosX    float64                `json:"posX"`
	PosY    float64                `json:"posY"`
	Process string                 `json:"process,omitempty"`
	Handles map[string]HandleGroup `json:"handles,omitempty"`
	Data    any                    `json:"data,omitempty"`
	// Size is the new node's size as its type gives it (DefaultSize), shown with
	// the proposal; nil lets the source take it from the type when it applies.
	Size *Size `json:"size,omitempty"`
}

// UpdateNodePayload changes fields of a node: keys are field paths ("process",
// "type", "data", "data.url"); Before holds the old values for display.
type UpdateNodePayload struct {
	NodeKey string         `json:"nodeKey"`
	Changes map[string]any `json:"changes"`
	Before  map[string]any `json:"before,omitempty"`
}

// MoveNodePayload moves a node on the canvas.
type MoveNodePayload struct {
	NodeKey string  `json:"nodeKey"`
	PosX    float64 `json:"posX"`
	PosY    float64 `json:"posY"`
}

// DeleteNodePayload removes a node; RemovedEdges lists the edges that go with it so
// the person approving sees the whole change.
type DeleteNodePayload struct {
	NodeKey      string `json:"nodeKey"`
	RemovedEdges []Edge `json:"removedEdges,omitempty"`
}

// CreateEdgePayload describes an edge to create.
type CreateEdgePayload struct {
	EdgeKey      string `json:"edgeKey,omitempty"`
	SourceKey    string `json:"sourceKey"`
	SourceHandle string `json:"sourceHandle"`
	TargetKey    string `json:"targetKey"`
	TargetHandle string `json:"targetHandle"`
	Sheet        string `json:"sheet"`
	Label        string `json:"label,omitempty"`
}

// DeleteEdgePayload removes one edge.
type DeleteEdgePayload struct {
	EdgeKey string `json:"edgeKey"`
	Edge    *Edge  `json:"edge,omitempty"` // the edge as it was, for display
}

// BatchPayload groups actions applied in order, as one change.
type BatchPayload struct {
	Actions []Action `json:"actions"`
}

// CreateNodeWithEdgesPayload is a node to create with edges to existing nodes, as
// the server's propose_create_node_with_edges makes it.
type CreateNodeWithEdgesPayload struct {
	TypeKey string           `json:"typeKey"`
	Sheet   string           `json:"sheet,omitempty"`
	PosX    *float64         `json:"posX,omitempty"`
	PosY    *float64         `json:"posY,omitempty"`
	Data    any              `json:"data,omitempty"`
	Edges   []EdgeConnection `json:"edges"`
}

// EdgeConnection is one edge of a new node: Direction "in" comes from
// TargetNodeKey:TargetHandleID into the new node's HandleID, "out" the other way.
type EdgeConnection struct {
	Direction      string `json:"direction"`
	HandleID       string `json:"handleId"`
	TargetNodeKey  string `json:"targetNodeKey"`
	TargetHandleID string `json:"targetHandleId"`
	Label          string `json:"label,omitempty"`
}

// ConfigureNodeTypePayload creates or updates a node type (mode "create" or
// "update"). The server writes it itself when approved. CodeDiffs are the
// server's code diffs of the proposal (sent beside proposedAction, kept here so
// the change is shown whole): the code before and after, per field.
type ConfigureNodeTypePayload struct {
	Mode           string                    `json:"mode"`
	TypeKey        string                    `json:"typeKey,omitempty"`
	DisplayName    string                    `json:"displayName"`
	Description    string                    `json:"description,omitempty"`
	Category       string                    `json:"category,omitempty"`
	Icon           string                    `json:"icon,omitempty"`
	Process        string                    `json:"process,omitempty"`
	ProcessPatches []CodePatch               `json:"processPatches,omitempty"`
	Border         map[string]any            `json:"border,omitempty"`
	Handles        map[string]map[string]any `json:"handles,omitempty"`
	Size           map[string]any            `json:"size,omitempty"`
	Content        any                       `json:"content,omitempty"`
	CodeDiffs      []CodeDiff                `json:"codeDiffs,omitempty"`
	// Nodes are the nodes of the type whose code changes with it, listed by the
	// local agent when it proposes: a source that keeps code on nodes (memgraph,
	// files) applies the type's new process to each of them (see Lower).
	Nodes []string `json:"nodes,omitempty"`
	// Before is the type as the proposal was made (TypeFields), for mode
	// "update": shown beside the new values, and checked again when the change
	// is applied (a type changed meanwhile is a conflict).
	Before map[string]any `json:"before,omitempty"`
}

// CodePatch is one search/replace of a code field.
type CodePatch struct {
	Search  string `json:"search"`
	Replace string `json:"replace"`
}

// CodeDiff is the server's account of a patched code field.
type CodeDiff struct {
	Field    string      `json:"field"`
	Original string      `json:"original"`
	Modified string      `json:"modified"`
	Patches  []CodePatch `json:"patches,omitempty"`
}

// ReorganizeLayoutPayload lays nodes out again. The server computes the positions
// when the proposal is approved; the local agent computes them when it proposes, in
// Moves, so the person approving sees each move and every source applies them.
type ReorganizeLayoutPayload struct {
	NodeKeys []string          `json:"nodeKeys"`
	Strategy string            `json:"strategy,omitempty"`
	Moves    []MoveNodePayload `json:"moves,omitempty"`
}

// CreateGraphPayload is a new graph (Type "graph") or HTML class ("htmlClass"),
// proposed in the server's home mode.
type CreateGraphPayload struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	// Key is the new graph's key, assigned when the approval is claimed
	// (AssignKeys); empty in the proposal.
	Key string `json:"key,omitempty"`
}

// ApplyResult reports what an applied action created.
type ApplyResult struct {
	Applied bool    `json:"applied"`
	Created Created `json:"created"`
	Note    string  `json:"note,omitempty"` // e.g. "applied in memory only (demo source)"
	// Graph is the graph a create_graph made (GraphCreator).
	Graph *CreatedGraph `json:"graph,omitempty"`
}

// Created lists the keys of the nodes and edges an action created, and of the
// graph a create_graph created (on the Nodius server: for an HTML class, its
// linked graph).
type Created struct {
	Nodes []string `json:"nodes"`
	Edges []string `json:"edges"`
}

type actionJSON struct {
	Type    ActionType      `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// MarshalJSON writes {"type": ..., "payload": ...}.
func (a Action) MarshalJSON() ([]byte, error) {
	var payload any
	switch a.Type {
	case CreateNodeAction:
		payload = a.CreateNode
	case UpdateNodeAction:
		payload = a.UpdateNode
	case MoveNodeAction:
		payload = a.MoveNode
	case DeleteNodeAction:
		payload = a.DeleteNode
	case CreateEdgeAction:
		payload = a.CreateEdge
	case DeleteEdgeAction:
		payload = a.DeleteEdge
	case BatchAction:
		payload = a.Batch
	case CreateNodeWithEdgesAction:
		payload = a.CreateNodeWithEdges
	case ConfigureNodeTypeAction:
		payload = a.ConfigureNodeType
	case ReorganizeLayoutAction:
		payload = a.ReorganizeLayout
	case CreateGraphAction:
		payload = a.CreateGraph
	default:
		return nil, fmt.Errorf("unknown action type %q", a.Type)
	}
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return json.Marshal(actionJSON{Type: a.Type, Payload: raw})
}

// UnmarshalJSON reads {"type": ..., "payload": ...}. It is lenient about unknown
// payload fields (stored actions); strict validation of model input lives in the
// agent's write tools.
func (a *Action) UnmarshalJSON(data []byte) error {
	var aj actionJSON
	if err := json.Unmarshal(data, &aj); err != nil {
		return err
	}
	*a = Action{Type: aj.Type}
	var target any
	switch aj.Type {
	case CreateNodeAction:
		target = fresh(&a.CreateNode)
	case UpdateNodeAction:
		target = fresh(&a.UpdateNode)
	case MoveNodeAction:
		target = fresh(&a.MoveNode)
	case DeleteNodeAction:
		target = fresh(&a.DeleteNode)
	case CreateEdgeAction:
		target = fresh(&a.CreateEdge)
	case DeleteEdgeAction:
		target = fresh(&a.DeleteEdge)
	case BatchAction:
		target = fresh(&a.Batch)
	case CreateNodeWithEdgesAction:
		target = fresh(&a.CreateNodeWithEdges)
	case ConfigureNodeTypeAction:
		target = fresh(&a.ConfigureNodeType)
	case ReorganizeLayoutAction:
		target = fresh(&a.ReorganizeLayout)
	case CreateGraphAction:
		target = fresh(&a.CreateGraph)
	default:
		return fmt.Errorf("unknown action type %q", aj.Type)
	}
	if len(aj.Payload) == 0 || string(aj.Payload) == "null" {
		return fmt.Errorf("action %s has no payload", aj.Type)
	}
	return json.Unmarshal(aj.Payload, target)
}

// fresh points *p at a new zero payload and returns it, the target to decode into.
func fresh[T any](p **T) *T {
	*p = new(T)
	return *p
}

// describeServer is Describe for the server-only types.
func describeServer(a Action) (string, bool) {
	switch a.Type {
	case CreateNodeWithEdgesAction:
		if c := a.CreateNodeWithEdges; c != nil {
			pos := ""
			if c.PosX != nil && c.PosY != nil {
				pos = fmt.Sprintf(" at (%g, %g)", *c.PosX, *c.PosY)
			}
			sheet := c.Sheet
			if sheet == "" {
				sheet = "0"
			}
			return fmt.Sprintf("create node (%s) on sheet %s%s with %d edge(s)", c.TypeKey, sheet, pos, len(c.Edges)), true
		}
	case ConfigureNodeTypeAction:
		if c := a.ConfigureNodeType; c != nil {
			if c.Mode == "update" {
				return fmt.Sprintf("update node type %s (%s)", c.TypeKey, c.DisplayName), true
			}
			if c.TypeKey != "" {
				return fmt.Sprintf("create node type %s (%s)", c.TypeKey, c.DisplayName), true
			}
			return fmt.Sprintf("create node type %q", c.DisplayName), true
		}
	case ReorganizeLayoutAction:
		if r := a.ReorganizeLayout; r != nil {
			s := fmt.Sprintf("lay out %d node(s) again", len(r.NodeKeys))
			if r.Strategy != "" {
				s += " (" + r.Strategy + ")"
			}
			return s, true
		}
	case CreateGraphAction:
		if c := a.CreateGraph; c != nil {
			what := "graph"
			if c.Type == "htmlClass" {
				what = "HTML class"
			}
			return fmt.Sprintf("create %s %q", what, c.Name), true
		}
	}
	return "", false
}
