package nodiusapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nodius/nodius-ai/internal/fault"
)

// The node type side of the editing protocol, as the web editor's node type
// editor speaks it: one socket registered on one node type
// (registerUserOnNodeConfig), which then sends instructions on the type's document
// (applyInstructionToNodeConfig) and asks for it to be saved now (forceSave). The
// server keeps an edited type in memory and writes it to its database when saved,
// so every editor of the type sees the change at once and keeps it.

// RegisterNodeConfig registers this socket as an editor of node type key and
// returns the type's editing messages after fromTimestamp (ms), oldest first. A
// socket registered on a type is registered on nothing else: the server's
// forceSave saves the graph of a socket registered on one.
func (c *Editor) RegisterNodeConfig(ctx context.Context, key, name string, fromTimestamp int64) ([]json.RawMessage, error) {
	raw, _, err := c.request(ctx, map[string]any{"type": "registerUserOnNodeConfig", "nodeConfigKey": key,
		"name": name, "fromTimestamp": fromTimestamp})
	if err != nil {
		return nil, err
	}
	var ans struct {
		Missing []json.RawMessage `json:"missingMessages"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, &fault.Error{Code: fault.ServerError, Err: err, Message: "the Nodius server's answer to registerUserOnNodeConfig is malformed"}
	}
	return ans.Missing, nil
}

// ApplyNodeConfigInstructions sends one applyInstructionToNodeConfig (at most
// MaxInstructions instructions, each {i: instruction}); the server applies all or
// none of it to the registered type.
func (c *Editor) ApplyNodeConfigInstructions(ctx context.Context, instructions []json.RawMessage) error {
	if len(instructions) > MaxInstructions {
		return fmt.Errorf("%d instructions in one message: the server takes at most %d", len(instructions), MaxInstructions)
	}
	_, _, err := c.request(ctx, map[string]any{"type": "applyInstructionToNodeConfig", "instructions": nonNil(instructions)})
	return err
}

// SaveNodeConfig sends forceSave on a socket registered on a node type: the server
// writes the type as its editors have it to its database, then acknowledges.
func (c *Editor) SaveNodeConfig(ctx context.Context) error {
	_, _, err := c.request(ctx, map[string]any{"type": "forceSave"})
	return err
}
