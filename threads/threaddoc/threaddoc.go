// Package threaddoc is the thread document: the server's AIThreadDocument (seed
// 001, the nodius_ai_threads collection) that `threads export` writes and `threads
// import` reads, with nodius-ai's own record of the thread inside it, and the checks
// a document passes before it may become a thread.
//
// It knows nothing of the database: package threads turns a stored thread into a
// document and a checked document into a stored thread. Kept apart, the format can be
// read, tested and fuzzed on its own.
package threaddoc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// ErrInvalid: the document cannot become a thread (package threads returns the same
// error for any input it cannot keep).
var ErrInvalid = errors.New("invalid input")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrInvalid)
}

// invalidBecause is invalid with the failure that made the input unusable, kept
// reachable (errors.As finds a *json.SyntaxError, say) without changing the text.
func invalidBecause(cause error, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %w", fmt.Sprintf(format, args...), cause, ErrInvalid)
}

// Document is the server's thread document (AIThreadDocument, in the
// nodius_ai_threads collection), so a thread can move between the web client and the
// terminal. Times are Unix milliseconds. Title is an addition the server ignores.
type Document struct {
	Key                 string        `json:"_key"`
	GraphKey            string        `json:"graphKey"`
	Workspace           string        `json:"workspace"`
	UserID              string        `json:"userId"`
	ContextType         string        `json:"contextType"`
	Title               string        `json:"title"`
	ConversationHistory []DocMessage  `json:"conversationHistory"`
	PendingInterrupt    *DocInterrupt `json:"pendingInterrupt"`
	// The totals and counts the web chat's thread list shows. The server rewrites
	// them after each of its turns; here they are the thread's own.
	TotalPromptTokens     int     `json:"totalPromptTokens"`
	TotalCompletionTokens int     `json:"totalCompletionTokens"`
	TotalTokens           int     `json:"totalTokens"`
	TotalCost             float64 `json:"totalCost"`
	Provider              string  `json:"provider"`
	Model                 string  `json:"model"`
	MessageCount          int     `json:"messageCount"`
	ToolCallCount         int     `json:"toolCallCount"`
	CreatedTime           int64   `json:"createdTime"`
	LastUpdatedTime       int64   `json:"lastUpdatedTime"`
	// Local is what only nodius-ai keeps of the thread (the model, tokens and costs of
	// each message, statuses, every proposal with its decision and outcome, the tool
	// runs, provenance, the recorded source), so that an export imported again loses
	// nothing. The server drops it when it next writes the thread; an import uses it
	// only when it agrees with conversationHistory (a thread continued elsewhere
	// falls back to the history).
	Local *LocalRecord `json:"nodiusAi,omitempty"`
}

// LocalRecord is the whole stored thread, as threads show --format json prints it.
// Version says which parts it has: 1 (or absent) before undo records, 2 with them.
// A record newer than this build knows is refused rather than imported with parts
// missing.
type LocalRecord struct {
	Version   int              `json:"version,omitempty"`
	Thread    convo.Thread     `json:"thread"`
	Messages  []convo.Message  `json:"messages"`
	ToolRuns  []convo.ToolRun  `json:"toolRuns"`
	Proposals []convo.Proposal `json:"proposals"`
	Created   []CreatedKey     `json:"created"`
	Undos     []UndoRecord     `json:"undos,omitempty"`
}

// LocalVersion is the version of the local record this build writes and the newest
// it reads.
const LocalVersion = 2

// DocMessage is one message in the OpenAI chat format the server keeps and sends.
// Content is null on an assistant message that only calls tools.
type DocMessage struct {
	Role       string        `json:"role"`
	Content    *string       `json:"content"`
	ToolCalls  []DocToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

// UnmarshalJSON also accepts content as an array of text parts and the camelCase
// names (toolCalls, toolCallId) of the server's AIChatMessage.
func (m *DocMessage) UnmarshalJSON(b []byte) error {
	var raw struct {
		Role        string          `json:"role"`
		Content     json.RawMessage `json:"content"`
		ToolCalls   []DocToolCall   `json:"tool_calls"`
		ToolCallsC  []DocToolCall   `json:"toolCalls"`
		ToolCallID  string          `json:"tool_call_id"`
		ToolCallIDC string          `json:"toolCallId"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = DocMessage{Role: raw.Role, ToolCalls: raw.ToolCalls, ToolCallID: raw.ToolCallID}
	if m.ToolCalls == nil {
		m.ToolCalls = raw.ToolCallsC
	}
	if m.ToolCallID == "" {
		m.ToolCallID = raw.ToolCallIDC
	}
	c := bytes.TrimSpace(raw.Content)
	switch {
	case len(c) == 0 || string(c) == "null":
	case c[0] == '"':
		var s string
		if err := json.Unmarshal(c, &s); err != nil {
			return err
		}
		m.Content = &s
	case c[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(c, &parts); err != nil {
			return fmt.Errorf("content parts: %w", err)
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		s := sb.String()
		m.Content = &s
	default:
		return fmt.Errorf("content must be a string, null or an array of parts, not %s", c)
	}
	return nil
}

// DocToolCall is an OpenAI tool call.
type DocToolCall struct {
	ID       string      `json:"id"`
	Type     string      `json:"type"`
	Function DocFunction `json:"function"`
}

// DocFunction is the function part of a tool call; Arguments is JSON text.
type DocFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// DocInterrupt is what a thread waits on, in the server's shape: Kind "hitl" is a
// proposal (the propose_* call ToolCallID, its ToolName and parsed Args), Kind
// "tool_limit" the tool-round limit (no call). The server reads only those four
// when it resumes; Context, ToolCallLog and RemainingToolCalls are written as it
// writes them. ToolCall, ProposedAction, Reason and CreatedTime are nodius-ai's own
// record of the proposal (the validated action awaiting a decision); a document the
// server wrote has none, and the action is read from ToolName and Args.
type DocInterrupt struct {
	Kind               string            `json:"kind"`
	ToolCallID         string            `json:"toolCallId"`
	ToolName           string            `json:"toolName"`
	Args               json.RawMessage   `json:"args"`
	Context            json.RawMessage   `json:"context"`
	ToolCallLog        []json.RawMessage `json:"toolCallLog"`
	RemainingToolCalls []DocToolCall     `json:"remainingToolCalls"`

	ToolCall       DocToolCall       `json:"toolCall"`
	ProposedAction datasource.Action `json:"proposedAction"`
	Reason         string            `json:"reason,omitempty"`
	CreatedTime    int64             `json:"createdTime,omitempty"`
}

// Interrupt kinds.
const (
	KindProposal  = "hitl"
	KindToolLimit = "tool_limit"
)

// ToolLimit reports whether the thread waits at the tool-round limit, not on a
// proposal.
func (in *DocInterrupt) ToolLimit() bool { return in != nil && in.Kind == KindToolLimit }

// fillAction reads the proposed action of an interrupt the server wrote (ToolName
// and Args, no proposedAction): the action type is the tool's name without
// "propose_", its payload the arguments, as the server's parseProposedAction
// makes it (see serverPayload).
func (in *DocInterrupt) fillAction() error {
	if in.ToolLimit() || in.ProposedAction.Type != "" || in.ToolName == "" {
		return nil
	}
	if in.ToolCall.Function.Name == "" {
		in.ToolCall = DocToolCall{ID: in.ToolCallID, Type: "function", Function: DocFunction{Name: in.ToolName, Arguments: string(in.Args)}}
	}
	args := in.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	var reason struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(args, &reason)
	if in.Reason == "" {
		in.Reason = reason.Reason
	}
	raw, err := serverAction(strings.TrimPrefix(in.ToolName, "propose_"), args)
	if err == nil {
		err = json.Unmarshal(raw, &in.ProposedAction)
	}
	if err != nil {
		return invalidBecause(err, "pendingInterrupt: the arguments of %s are not a proposal this nodius-ai reads", in.ToolName)
	}
	return nil
}

// serverAction is the {"type","payload"} action the server makes of a propose_*
// tool's arguments: the arguments themselves, except that an update's "updates"
// are its payload's "changes", and a batch's flat steps ({"type", ...fields})
// become actions of their own.
func serverAction(typ string, args json.RawMessage) (json.RawMessage, error) {
	switch typ {
	case "update_node":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(args, &m); err != nil {
			return nil, err
		}
		if u, ok := m["updates"]; ok {
			if _, has := m["changes"]; !has {
				m["changes"] = u
			}
			delete(m, "updates")
		}
		var err error
		if args, err = json.Marshal(m); err != nil {
			return nil, err
		}
	case "batch":
		var b struct {
			Actions []map[string]json.RawMessage `json:"actions"`
		}
		if err := json.Unmarshal(args, &b); err != nil {
			return nil, err
		}
		steps := make([]json.RawMessage, len(b.Actions))
		for i, step := range b.Actions {
			var t string
			if err := json.Unmarshal(step["type"], &t); err != nil {
				return nil, fmt.Errorf("batch step %d has no type", i+1)
			}
			if _, ok := step["payload"]; ok { // already an action
				steps[i], _ = json.Marshal(step)
				continue
			}
			delete(step, "type")
			fields, _ := json.Marshal(step)
			a, err := serverAction(t, fields)
			if err != nil {
				return nil, err
			}
			steps[i] = a
		}
		var err error
		if args, err = json.Marshal(map[string][]json.RawMessage{"actions": steps}); err != nil {
			return nil, err
		}
	}
	return json.Marshal(map[string]json.RawMessage{
		"type":    json.RawMessage(strconv.Quote(typ)),
		"payload": args,
	})
}

// UndoRecord is what a thread keeps to undo one applied change, and where that undo
// stands: threads show --format json prints it and an export carries it, so that an
// imported thread can still walk its changes back (and does not offer again what
// was undone).
type UndoRecord struct {
	ProposalID string `json:"proposal_id"`
	// OpID is the apply's operation the reversal belongs to (a proposal applied
	// again after a released claim gets a new one).
	OpID string `json:"op_id"`
	// Applied is the action as it was applied, keys assigned (absent when it was
	// not kept).
	Applied *datasource.Action `json:"applied_action,omitempty"`
	// Reversal is the recorded steps (package datasource/undo).
	Reversal  json.RawMessage `json:"reversal"`
	State     convo.UndoState `json:"state,omitempty"`
	UndoOp    string          `json:"undo_op,omitempty"`
	ClaimedBy string          `json:"claimed_by,omitempty"`
	ClaimedAt time.Time       `json:"claimed_at,omitzero"`
	Plan      json.RawMessage `json:"plan,omitempty"` // the steps a claimed undo reverses
	UndoneAt  time.Time       `json:"undone_at,omitzero"`
	Left      []string        `json:"left,omitempty"` // what a forced undo left as it was
}

// CreatedKey is one node or edge an approved proposal of a thread created.
type CreatedKey struct {
	Kind       string `json:"kind"` // "node" or "edge"
	Key        string `json:"key"`
	Graph      string `json:"graph"`
	ToolCallID string `json:"tool_call_id"`
	CreatedAt  int64  `json:"created_ms"`
}

// MaxDocumentSize bounds what Parse reads (a thread is text; 64 MiB is far
// beyond any real one).
const MaxDocumentSize = 64 << 20

// Parse reads and checks one thread document. Every failure wraps ErrInvalid.
func Parse(r io.Reader) (Document, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxDocumentSize+1))
	if err != nil {
		return Document{}, fmt.Errorf("read the thread document: %w", err)
	}
	if len(b) > MaxDocumentSize {
		return Document{}, invalid("the thread document is larger than %d MiB", MaxDocumentSize>>20)
	}
	var doc Document
	if err := json.Unmarshal(b, &doc); err != nil {
		return Document{}, invalidBecause(err, "the thread document is not valid JSON")
	}
	doc.uniqueCallIDs()
	if in := doc.PendingInterrupt; in != nil {
		if err := in.fillAction(); err != nil {
			return Document{}, err
		}
	}
	return doc, doc.Validate()
}

// uniqueCallIDs renames a tool call id used again by a later assistant message
// (some providers number calls per response: "call_0" in every round) to
// "ID~N", with the tool results that answer it, so that every call of the thread has
// its own id; the pending interrupt and the calls it has still to run follow theirs.
func (d *Document) uniqueCallIDs() {
	seen := map[string]int{}
	current := map[string]string{} // id as written -> id in force since the last assistant message
	for i := range d.ConversationHistory {
		m := &d.ConversationHistory[i]
		switch m.Role {
		case "assistant":
			for j := range m.ToolCalls {
				c := &m.ToolCalls[j]
				id := c.ID
				seen[id]++
				if n := seen[id]; n > 1 {
					c.ID = fmt.Sprintf("%s~%d", id, n)
				}
				current[id] = c.ID
			}
		case "tool":
			if id, ok := current[m.ToolCallID]; ok {
				m.ToolCallID = id
			}
		}
	}
	if in := d.PendingInterrupt; in != nil && in.ToolCallID != "" {
		if id, ok := current[in.ToolCallID]; ok {
			in.ToolCallID = id
			if in.ToolCall.ID != "" {
				in.ToolCall.ID = id
			}
		}
	}
	if in := d.PendingInterrupt; in != nil {
		for j := range in.RemainingToolCalls {
			if id, ok := current[in.RemainingToolCalls[j].ID]; ok {
				in.RemainingToolCalls[j].ID = id
			}
		}
	}
}

// Validate checks that the document can become a thread whose history every
// provider accepts.
func (d Document) Validate() error {
	if err := CheckID(d.Key); err != nil {
		return fmt.Errorf("_key: %w", err)
	}
	if strings.TrimSpace(d.GraphKey) == "" {
		return invalid("the thread document has no graphKey")
	}
	calls := map[string]string{} // id -> name
	for i, m := range d.ConversationHistory {
		where := fmt.Sprintf("conversationHistory[%d]", i)
		switch convo.Role(m.Role) {
		case convo.System, convo.User:
		case convo.Assistant:
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Function.Name == "" {
					return invalid("%s.tool_calls[%d] needs an id and a function name", where, j)
				}
				if _, dup := calls[c.ID]; dup {
					return invalid("%s.tool_calls[%d]: tool call id %q is used twice", where, j, c.ID)
				}
				calls[c.ID] = c.Function.Name
			}
		case convo.Tool:
			if m.ToolCallID == "" {
				return invalid("%s is a tool message without tool_call_id", where)
			}
		default:
			return invalid("%s has role %q (not system, user, assistant or tool)", where, m.Role)
		}
	}
	if in := d.PendingInterrupt; in != nil && !in.ToolLimit() {
		id := in.ToolCallID
		if id == "" {
			id = in.ToolCall.ID
		}
		if id == "" {
			return invalid("pendingInterrupt has no toolCallId")
		}
		if _, ok := calls[id]; !ok {
			return invalid("pendingInterrupt.toolCallId %q matches no tool call in conversationHistory", id)
		}
		if in.ProposedAction.Type == "" {
			return invalid("pendingInterrupt has no proposedAction")
		}
	}
	if l := d.Local; l != nil {
		if l.Version > LocalVersion {
			return invalid("nodiusAi.version is %d, newer than this nodius-ai reads (%d): update nodius-ai to import it", l.Version, LocalVersion)
		}
		if err := validateUndos(l); err != nil {
			return err
		}
	}
	return nil
}

// validateUndos checks the undo records of a local record: each belongs to one of
// its proposals, once, with an operation, a reversal whose every step can be run
// and a known state (an undone one says when).
func validateUndos(l *LocalRecord) error {
	props := map[string]bool{}
	actions := map[string]datasource.Action{}
	for _, p := range l.Proposals {
		props[p.ID] = true
		actions[p.ID] = p.Action
	}
	seen := map[string]bool{}
	for i, r := range l.Undos {
		where := fmt.Sprintf("nodiusAi.undos[%d]", i)
		switch {
		case r.ProposalID == "":
			return invalid("%s names no proposal_id", where)
		case !props[r.ProposalID]:
			return invalid("%s is for proposal %q, which the thread does not have", where, r.ProposalID)
		case seen[r.ProposalID]:
			return invalid("%s: proposal %q has two undo records", where, r.ProposalID)
		case r.OpID == "":
			return invalid("%s names no op_id (the apply it reverses)", where)
		}
		seen[r.ProposalID] = true
		// The record is checked against the change it belongs to: the proposal's
		// action with the keys its apply (r.OpID) assigned. A record naming anything
		// else would make undo remove or overwrite it.
		applied := datasource.AssignKeys(actions[r.ProposalID], r.OpID)
		if r.Applied != nil && !sameAction(*r.Applied, applied) {
			return invalid("%s.applied_action is not the action of proposal %q (%s)", where, r.ProposalID, datasource.Describe(applied))
		}
		rev, err := undo.Parse(r.Reversal)
		if err != nil {
			return invalidBecause(err, "%s.reversal cannot be used", where)
		}
		if err := undo.Belongs(rev, applied); err != nil {
			return invalidBecause(err, "%s.reversal cannot be used", where)
		}
		if len(r.Plan) > 0 {
			plan, err := undo.Parse(r.Plan)
			if err != nil {
				return invalidBecause(err, "%s.plan cannot be used", where)
			}
			if err := undo.Belongs(plan, applied); err != nil {
				return invalidBecause(err, "%s.plan cannot be used", where)
			}
		}
		switch r.State {
		case convo.NotUndone, convo.UndoClaimed:
		case convo.Undone:
			if r.UndoneAt.IsZero() {
				return invalid("%s is undone but has no undone_at", where)
			}
		default:
			return invalid("%s has state %q (not \"\", \"claimed\" or \"undone\")", where, r.State)
		}
		if r.Applied != nil && r.Applied.Type == "" {
			return invalid("%s.applied_action has no type", where)
		}
	}
	return nil
}

// sameAction reports whether two actions are the same change (their JSON).
func sameAction(a, b datasource.Action) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// CheckID rejects thread ids that could not round-trip through a terminal, a file name or
// an ArangoDB _key.
func CheckID(id string) error {
	if id == "" || len(id) > 254 {
		return invalid("thread id %q must be 1 to 254 bytes", id)
	}
	for _, r := range id {
		if r > unicode.MaxASCII || unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' {
			return invalid("thread id %q may only hold printable ASCII without spaces or '/'", id)
		}
	}
	return nil
}
