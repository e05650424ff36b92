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
)

// ActionTypes lists every action type, in the order they are documented.
var ActionTypes = []ActionType{CreateNodeAction, UpdateNodeAction, MoveNodeAction, DeleteNodeAction, CreateEdgeAction, DeleteEdgeAction, BatchAction}

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

// ApplyResult reports what an applied action created.
type ApplyResult struct {
	Applied bool    `json:"applied"`
	Created Created `json:"created"`
	Note    string  `json:"note,omitempty"` // e.g. "applied in memory only (demo source)"
}

// Created lists the keys of the nodes and edges an action created.
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
		a.CreateNode = new(CreateNodePayload)
		target = a.CreateNode
	case UpdateNodeAction:
		a.UpdateNode = new(UpdateNodePayload)
		target = a.UpdateNode
	case MoveNodeAction:
		a.MoveNode = new(MoveNodePayload)
		target = a.MoveNode
	case DeleteNodeAction:
		a.DeleteNode = new(DeleteNodePayload)
		target = a.DeleteNode
	case CreateEdgeAction:
		a.CreateEdge = new(CreateEdgePayload)
		target = a.CreateEdge
	case DeleteEdgeAction:
		a.DeleteEdge = new(DeleteEdgePayload)
		target = a.DeleteEdge
	case BatchAction:
		a.Batch = new(BatchPayload)
		target = a.Batch
	default:
		return fmt.Errorf("unknown action type %q", aj.Type)
	}
	if len(aj.Payload) == 0 || string(aj.Payload) == "null" {
		return fmt.Errorf("action %s has no payload", aj.Type)
	}
	return json.Unmarshal(aj.Payload, target)
}
