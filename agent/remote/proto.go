// Package remote is the second runtime behind the TUI and the commands: instead of
// running the agent in-process, it asks the Nodius server's own assistant over the
// server's WebSocket (internal/nodiusapi: routing through /api/sync and the authenticate
// handshake) with the real ai:* protocol of the server's assistant (docs/protocol.md):
// ai:chat and ai:resume in; ai:token, ai:tool_start, ai:tool_result, ai:usage,
// ai:tool_limit, ai:complete, ai:error and ai:apply_action out. It also reads the
// server's HTTP endpoints (POST /api/ai/threads, GET /api/ai/thread/:id/messages,
// DELETE /api/ai/thread/:id). It turns what the server sends into the same events
// the local agent emits, applies approved changes through the editing protocol (a
// nodiusapi.Applier), and keeps a copy of every exchange in the local thread store.
package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// Message types of the protocol.
const (
	TypeChat      = "ai:chat"
	TypeResume    = "ai:resume"
	TypeInterrupt = "ai:interrupt" // never sent: the server's aborts every user's run

	TypeToken       = "ai:token"
	TypeToolStart   = "ai:tool_start"
	TypeToolResult  = "ai:tool_result"
	TypeUsage       = "ai:usage"
	TypeToolLimit   = "ai:tool_limit"
	TypeComplete    = "ai:complete"
	TypeError       = "ai:error"
	TypeApplyAction = "ai:apply_action"
)

// ChatRequest is ai:chat: a question on a graph, in a new thread (ThreadID empty) or
// an existing one. The server validates it with a strict zod schema: every field
// here is one it knows, and no other may be sent (a token field is refused: the
// socket is authenticated once, by nodiusapi.Dial).
type ChatRequest struct {
	Type        string `json:"type"`
	ID          int64  `json:"_id"`
	GraphKey    string `json:"graphKey"`
	Message     string `json:"message"`
	ThreadID    string `json:"threadId,omitempty"`
	ContextType string `json:"contextType,omitempty"` // graph, nodeConfig, htmlClass, home
}

// ResumeRequest is ai:resume: the decision on what the thread waits on (a proposal,
// or the tool-round limit: approved continues, not approved asks for an answer now).
type ResumeRequest struct {
	Type     string `json:"type"`
	ID       int64  `json:"_id"`
	ThreadID string `json:"threadId"`
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
}

// contextTypes are the server's values of contextType.
var contextTypes = []string{"graph", "nodeConfig", "htmlClass", "home"}

// Validate checks a request as the server's schema will, so a bad one fails here
// with a clear sentence rather than as an ai:error.
func (r ChatRequest) Validate() error {
	switch {
	case r.Type != TypeChat:
		return fmt.Errorf("ai:chat has type %q", r.Type)
	case r.ID <= 0:
		return errors.New("ai:chat needs a positive _id")
	case strings.TrimSpace(r.GraphKey) == "":
		return errors.New("ai:chat needs a graph key")
	case strings.TrimSpace(r.Message) == "":
		return errors.New("ai:chat needs a message")
	}
	if r.ContextType != "" {
		ok := false
		for _, c := range contextTypes {
			ok = ok || c == r.ContextType
		}
		if !ok {
			return fmt.Errorf("the context type %q is not one of %s", r.ContextType, strings.Join(contextTypes, ", "))
		}
	}
	return nil
}

// Validate checks an ai:resume request.
func (r ResumeRequest) Validate() error {
	switch {
	case r.Type != TypeResume:
		return fmt.Errorf("ai:resume has type %q", r.Type)
	case r.ID <= 0:
		return errors.New("ai:resume needs a positive _id")
	case strings.TrimSpace(r.ThreadID) == "":
		return errors.New("ai:resume needs the server's thread id")
	}
	return nil
}

// Usage is ai:usage's usage: the tokens of one model call. Cost is set only when
// the server sends one (the real server keeps it in the thread's metadata).
type Usage struct {
	PromptTokens     int      `json:"promptTokens"`
	CompletionTokens int      `json:"completionTokens"`
	TotalTokens      int      `json:"totalTokens"`
	Cost             *float64 `json:"cost"`
}

// Inbound is one message from the server, checked: Type is one of the outbound
// types and the fields that type requires are set.
type Inbound struct {
	Type  string
	ID    int64
	HasID bool

	Token      string                // ai:token
	ToolCallID string                // ai:tool_start, ai:tool_result
	ToolName   string                // ai:tool_start
	Result     string                // ai:tool_result: the tool's output as text
	Usage      Usage                 // ai:usage
	ThreadID   string                // ai:complete
	FullText   string                // ai:complete
	Error      string                // ai:error: the server's message for the user
	Details    string                // ai:error: the schema issues, in words
	Code       string                // ai:error, optional
	Retryable  bool                  // ai:error, optional
	Apply      nodiusapi.ApplyAction // ai:apply_action
}

// MalformedError is a message from the server that breaks the protocol.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return "malformed message from the server: " + e.Reason }

func malformed(format string, args ...any) error {
	return &MalformedError{Reason: fmt.Sprintf(format, args...)}
}

// inboundWire is the union of every field a server message may carry. Pointers
// tell a missing field from an empty one; Result stays raw (a string, or JSON).
type inboundWire struct {
	Type       *string         `json:"type"`
	ID         json.RawMessage `json:"_id"`
	Token      *string         `json:"token"`
	ToolCallID *string         `json:"toolCallId"`
	ToolName   *string         `json:"toolName"`
	Result     json.RawMessage `json:"result"`
	Usage      *Usage          `json:"usage"`
	ThreadID   *string         `json:"threadId"`
	FullText   *string         `json:"fullText"`
	Error      json.RawMessage `json:"error"`
	Details    json.RawMessage `json:"details"`
	Code       *string         `json:"code"`
	Retryable  *bool           `json:"retryable"`
	Action     json.RawMessage `json:"action"`
}

// ParseInbound decodes and checks one server message. A message that is not an
// ai:* message (ok false, nil error) is not ours to read: the same socket carries
// the editing protocol's broadcasts and {"error":"Invalid JSON"} answers. Fields
// the protocol does not name are tolerated; missing or mistyped required fields are
// a *MalformedError.
func ParseInbound(data []byte) (in Inbound, ok bool, err error) {
	var w inboundWire
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&w); err != nil {
		return in, false, malformed("not a JSON object (%v)", shortErr(err))
	}
	if dec.More() {
		return in, false, malformed("more than one JSON value in one message")
	}
	if w.Type == nil {
		return in, false, nil // e.g. {"error":"Invalid JSON"}: no type, not an ai:* frame
	}
	in.Type = *w.Type
	if !strings.HasPrefix(in.Type, "ai:") {
		return in, false, nil
	}
	if len(w.ID) > 0 && string(w.ID) != "null" {
		var id json.Number
		if json.Unmarshal(w.ID, &id) == nil {
			if n, err := id.Int64(); err == nil {
				in.ID, in.HasID = n, true
			}
		}
		// A non-numeric _id (the server echoes what an invalid request carried) is
		// no run's id.
	}
	need := func(field string, v *string) (string, error) {
		if v == nil {
			return "", malformed("%s without %s", in.Type, field)
		}
		return *v, nil
	}
	switch in.Type {
	case TypeToken:
		in.Token, err = need("token", w.Token)
	case TypeToolStart:
		if in.ToolCallID, err = need("toolCallId", w.ToolCallID); err == nil {
			in.ToolName, err = need("toolName", w.ToolName)
		}
		if err == nil && in.ToolName == "" {
			err = malformed("ai:tool_start with an empty toolName")
		}
	case TypeToolResult:
		if in.ToolCallID, err = need("toolCallId", w.ToolCallID); err == nil {
			in.Result, err = resultText(w.Result)
		}
	case TypeUsage:
		if w.Usage == nil {
			err = malformed("ai:usage without usage")
		} else {
			in.Usage = *w.Usage
		}
	case TypeComplete:
		if in.ThreadID, err = need("threadId", w.ThreadID); err == nil {
			in.FullText, err = need("fullText", w.FullText)
		}
		if err == nil && in.ThreadID == "" {
			err = malformed("ai:complete with an empty threadId")
		}
	case TypeError:
		in.Error, err = errorText(w.Error)
		in.Details = detailsText(w.Details)
		if w.Code != nil {
			in.Code = *w.Code
		}
		if w.Retryable != nil {
			in.Retryable = *w.Retryable
		}
	case TypeApplyAction:
		if len(w.Action) == 0 || string(w.Action) == "null" {
			err = malformed("ai:apply_action without action")
		} else if e := json.Unmarshal(w.Action, &in.Apply); e != nil {
			err = malformed("ai:apply_action with an unreadable action (%v)", shortErr(e))
		}
	case TypeChat, TypeResume, TypeInterrupt:
		return in, false, malformed("the server sent a client message (%s)", in.Type)
	default:
		// A type this client does not know: not an error (the server may grow new
		// ones), but nothing to act on either.
		return in, false, nil
	}
	if err != nil {
		return Inbound{}, false, err
	}
	return in, true, nil
}

// resultText accepts a tool result sent as a string or as any JSON value.
func resultText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 {
		return "", malformed("ai:tool_result without result")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", malformed("ai:tool_result with an unreadable result")
	}
	return buf.String(), nil
}

// errorText accepts ai:error's error as a string, or an object with a message.
func errorText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", malformed("ai:error without error")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var o struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &o); err == nil && o.Message != "" {
		return o.Message, nil
	}
	return "", malformed("ai:error whose error is neither a string nor an object with a message")
}

// detailsText writes ai:error's zod issues ([{code, path, keys, message}]) as
// "path: message" pairs; "" when there are none or they cannot be read.
func detailsText(raw json.RawMessage) string {
	var issues []struct {
		Path    []any  `json:"path"`
		Message string `json:"message"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &issues) != nil {
		return ""
	}
	parts := make([]string, 0, len(issues))
	for _, is := range issues {
		p := make([]string, len(is.Path))
		for i, e := range is.Path {
			p[i] = fmt.Sprint(e)
		}
		if len(p) > 0 {
			parts = append(parts, strings.Join(p, ".")+": "+is.Message)
		} else {
			parts = append(parts, is.Message)
		}
	}
	return strings.Join(parts, "; ")
}

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// Interrupt is a proposal: the JSON an ai:complete's fullText holds when the
// server's agent stopped at a write tool, {"type":"interrupt","proposedAction",
// "codeDiffs"?,"toolCall":{"id","name","args"}}.
type Interrupt struct {
	Action   datasource.Action
	ToolCall WireToolCall
	Reason   string // the "reason" argument of the tool call, when it has one
}

// WireToolCall is the interrupt's tool call; Args is the arguments' JSON text.
type WireToolCall struct {
	ID   string
	Name string
	Args string
}

// ToolLimitNotice is the fullText of an ai:complete that ends a run at the
// tool-round limit: {"type":"tool_limit","roundsUsed","maxExtended"}.
type ToolLimitNotice struct {
	RoundsUsed  int `json:"roundsUsed"`
	MaxExtended int `json:"maxExtended"`
}

// fullTextType returns the "type" of a fullText that is a JSON object, else "".
func fullTextType(fullText string) string {
	t := strings.TrimSpace(fullText)
	if !strings.HasPrefix(t, "{") || !strings.HasSuffix(t, "}") {
		return ""
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(t), &head) != nil {
		return ""
	}
	return head.Type
}

// ParseToolLimit reads fullText as a tool-limit notice; ok is false for anything else.
func ParseToolLimit(fullText string) (n ToolLimitNotice, ok bool) {
	if fullTextType(fullText) != "tool_limit" {
		return n, false
	}
	if json.Unmarshal([]byte(strings.TrimSpace(fullText)), &n) != nil {
		return n, false
	}
	return n, true
}

// ParseInterrupt reads fullText as an interrupt. ok is false when fullText is an
// ordinary answer (not a JSON object whose type is "interrupt"); an interrupt with
// a missing or broken action or tool call is a *MalformedError.
func ParseInterrupt(fullText string) (it Interrupt, ok bool, err error) {
	if fullTextType(fullText) != "interrupt" {
		return it, false, nil
	}
	var w struct {
		ProposedAction json.RawMessage       `json:"proposedAction"`
		CodeDiffs      []datasource.CodeDiff `json:"codeDiffs"`
		ToolCall       *struct {
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"toolCall"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(fullText)), &w); err != nil {
		return it, false, malformed("interrupt: %v", shortErr(err))
	}
	if len(w.ProposedAction) == 0 || string(w.ProposedAction) == "null" {
		return it, false, malformed("interrupt without proposedAction")
	}
	if err := json.Unmarshal(w.ProposedAction, &it.Action); err != nil {
		return it, false, malformed("interrupt with an unreadable proposedAction (%v)", shortErr(err))
	}
	if w.ToolCall == nil || w.ToolCall.ID == "" || w.ToolCall.Name == "" {
		return it, false, malformed("interrupt whose toolCall has no id or no name")
	}
	it.ToolCall = WireToolCall{ID: w.ToolCall.ID, Name: w.ToolCall.Name, Args: "{}"}
	if a := bytes.TrimSpace(w.ToolCall.Args); len(a) > 0 && string(a) != "null" {
		it.ToolCall.Args = string(a)
	}
	if len(w.CodeDiffs) > 0 && it.Action.ConfigureNodeType != nil {
		it.Action.ConfigureNodeType.CodeDiffs = w.CodeDiffs
	}
	var args struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal([]byte(it.ToolCall.Args), &args) == nil {
		it.Reason = args.Reason
	}
	return it, true, nil
}
