package convo

import (
	"encoding/json"
	"time"

	"github.com/nodius/nodius-ai/datasource"
)

// KindUndo marks the system message that tells the model (and the transcript) that
// a person undid an applied change.
const KindUndo Kind = "undo"

// UndoState is where the undo of an applied change stands.
type UndoState string

const (
	NotUndone   UndoState = ""        // applied, not undone
	UndoClaimed UndoState = "claimed" // an undo is being applied by claimed_by
	Undone      UndoState = "undone"
)

// Undoable is an applied change of a thread with what undoing it needs.
type Undoable struct {
	ProposalID string
	Tool       string
	Action     datasource.Action // as applied, keys assigned
	OpID       string            // the apply's operation
	AppliedAt  time.Time
	// Reversal is the recorded reversal (package datasource/undo), nil when the
	// change was applied before nodius-ai kept one.
	Reversal json.RawMessage

	State     UndoState
	UndoOp    string
	ClaimedBy string
	ClaimedAt time.Time
	Plan      json.RawMessage // the steps a claimed undo reverses
}
