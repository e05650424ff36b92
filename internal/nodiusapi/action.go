package nodiusapi

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
	// Unsure is set when the failed step was sent but not acknowledged and the
	// live graph could not be read to tell whether it landed: it may have.
	Unsure bool
	// Saved is set once the server acknowledged forceSave after the last step:
	// the change is in its database, not only in its memory.
	Saved bool
	// SaveNote says why the save was not confirmed ("" when Saved or nothing was
	// applied).
	SaveNote string
}

// Complete reports whether every step was applied.
func (r ApplyReport) Complete() bool { return r.Failed == "" }

// Applier applies an ApplyAction to a graph through the server's editing protocol,
// the way the Nodius web client does, waiting for each acknowledgement. It returns
// what was applied even when it fails part-way.
type Applier interface {
	ApplyServerAction(ctx context.Context, graphKey string, a ApplyAction) (ApplyReport, error)
}

// Preparer is an Applier that takes the graph's editing registration before an
// approval is sent: the server records an approved action as executed the moment
// it sends ai:apply_action, so the approving client registers first and approves
// only once the server has accepted it as an editor of the graph.
type Preparer interface {
	Applier
	// PrepareServerApply opens (routed through /api/sync) and registers the
	// graph's editing socket, and holds it for one Apply. An error means nothing
	// may be approved: the change could not be applied.
	PrepareServerApply(ctx context.Context, graphKey string) (Prepared, error)
}

// Prepared is a held editing registration.
type Prepared interface {
	// Apply applies the action on the held registration (registering again first
	// if the socket dropped meanwhile), then saves the graph (forceSave).
	Apply(ctx context.Context, a ApplyAction) (ApplyReport, error)
	// Release lets the graph's other readers in; it may be called more than once.
	Release()
}
