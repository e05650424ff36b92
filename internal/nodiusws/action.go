package nodiusws

import (
	"context"
	"encoding/json"
)

// ApplyAction is the action of an ai:apply_action frame: what the server's assistant
// asks the approving client to apply through the editing protocol, in this order:
// the instructions (applyInstructionToGraph), the nodes and edges to create
// (batchCreateElements), the keys to delete (batchDeleteElements, with the deleted
// nodes' edges added by the client).
type ApplyAction struct {
	Instructions     []json.RawMessage `json:"instructions"`
	NodesToCreate    []json.RawMessage `json:"nodesToCreate"`
	EdgesToCreate    []json.RawMessage `json:"edgesToCreate"`
	NodeKeysToDelete []string          `json:"nodeKeysToDelete"`
	EdgeKeysToDelete []string          `json:"edgeKeysToDelete"`
	SheetID          string            `json:"sheetId"`
}

// Empty reports whether the action changes nothing.
func (a ApplyAction) Empty() bool {
	return len(a.Instructions) == 0 && len(a.NodesToCreate) == 0 && len(a.EdgesToCreate) == 0 &&
		len(a.NodeKeysToDelete) == 0 && len(a.EdgeKeysToDelete) == 0
}

// ApplyReport says what of an ApplyAction reached the graph. The steps run in
// order and stop at the first refusal, so everything before Failed was applied and
// nothing after it was.
type ApplyReport struct {
	Instructions int      // instructions the server acknowledged
	NodesCreated []string // keys
	EdgesCreated []string
	NodesDeleted []string
	EdgesDeleted []string
	// Failed names the step that was refused ("" when all were applied) and Reason
	// is the server's word for it (e.g. "Node not found" for a node on another sheet).
	Failed string
	Reason string
}

// Complete reports whether every step was applied.
func (r ApplyReport) Complete() bool { return r.Failed == "" }

// Applier applies an ApplyAction to a graph through the server's editing protocol,
// the way the Nodius web client does, waiting for each acknowledgement. It returns
// what was applied even when it fails part-way.
type Applier interface {
	ApplyServerAction(ctx context.Context, graphKey string, a ApplyAction) (ApplyReport, error)
}
