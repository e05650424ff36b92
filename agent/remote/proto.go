// Package remote is the second runtime behind the TUI and the commands: instead of
// running the agent in-process, it asks the Nodius server's own assistant over the
// server's WebSocket ai:* protocol (ai:chat, ai:resume, ai:interrupt in; ai:token,
// ai:tool_start, ai:tool_result, ai:complete, ai:error out) and its HTTP endpoints
// (POST /api/ai/threads, DELETE /api/ai/thread/:id). It turns what the server sends
// into the same events the local agent emits, and keeps a copy of every exchange in
// the local thread store so threads can be read offline.
package remote

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// Message types of the protocol.
const (
	TypeChat      = "ai:chat"
	TypeResume    = "ai:resume"
	TypeInterrupt = "ai:interrupt"

	TypeToken      = "ai:token"
	TypeToolStart  = "ai:tool_start"
	TypeToolResult = "ai:tool_result"
	TypeComplete   = "ai:complete"
	TypeError      = "ai:error"
)

// ChatRequest is ai:chat: a question on a graph, in a new thread (ThreadID empty) or
// an existing one. The server validates it with a strict schema: every field here is
// one it knows, and no other may be sent.
type ChatRequest struct {
	Type     string `json:"type"`
	ID       int64  `json:"_id"`
	GraphKey string `json:"graphKey"`
	Message  string `json:"message"`
	ThreadID string `json:"threadId,omitempty"`
	Token    string `json:"token,omitempty"`
}

// ResumeRequest is ai:resume: the decision on the proposal the thread waits on.
type ResumeRequest struct {
	Type     string `json:"type"`
	ID       int64  `json:"_id"`
	ThreadID string `json:"threadId"`
	Approved bool   `json:"approved"`
	Feedback string `json:"feedback,omitempty"`
	Token    string `json:"token,omitempty"`
}

// InterruptRequest is ai:interrupt: stop the run numbered ID.
type InterruptRequest struct {
	Type     string `json:"type"`
	ID       int64  `json:"_id"`
	ThreadID string `json:"threadId"`
	Token    string `json:"token,omitempty"`
}

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

// Validate checks an ai:interrupt request.
func (r InterruptRequest) Validate() error {
	switch {
	case r.Type != TypeInterrupt:
		return fmt.Errorf("ai:interrupt has type %q", r.Type)
	case r.ID <= 0:
		return errors.New("ai:interrupt needs a positive _id")
	}
	return nil
}

// Inbound is one message from the server, checked: Type is one of the five
// outbound types and the fields that type requires are set.
type Inbound struct {
	Type  string
	ID    int64
	HasID bool

	Token      string // ai:token
	ToolCallID string // ai:tool_start, ai:tool_result
	ToolName   string // ai:tool_start
	Result     string // ai:tool_result: the tool's output as text
	ThreadID   string // ai:complete
	FullText   string // ai:complete
	Error      string // ai:error: the server's message for the user
	Code       string // ai:error, optional
	Retryable  bool   // ai:error, optional
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
	ThreadID   *string         `json:"threadId"`
	FullText   *string         `json:"fullText"`
	Error      json.RawMessage `json:"error"`
	Code       *string         `json:"code"`
	Retryable  *bool           `json:"retryable"`
}

// ParseInbound decodes and checks one server message. A message that is not an
// ai:* message (ok false, nil error) is not ours to read. Fields the protocol does
// not name are tolerated (the server may add some); missing or mistyped required
// fields are a *MalformedError.
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
		return in, false, malformed("no type")
	}
	in.Type = *w.Type
	if !strings.HasPrefix(in.Type, "ai:") {
		return in, false, nil
	}
	if len(w.ID) > 0 && string(w.ID) != "null" {
		var id json.Number
		if err := json.Unmarshal(w.ID, &id); err != nil {
			return in, false, malformed("%s has an _id that is not a number", in.Type)
		}
		n, err := id.Int64()
		if err != nil {
			return in, false, malformed("%s has an _id that is not an integer", in.Type)
		}
		in.ID, in.HasID = n, true
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
	case TypeComplete:
		if in.ThreadID, err = need("threadId", w.ThreadID); err == nil {
			in.FullText, err = need("fullText", w.FullText)
		}
		if err == nil && in.ThreadID == "" {
			err = malformed("ai:complete with an empty threadId")
		}
	case TypeError:
		in.Error, err = errorText(w.Error)
		if w.Code != nil {
			in.Code = *w.Code
		}
		if w.Retryable != nil {
			in.Retryable = *w.Retryable
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

func shortErr(err error) string {
	s := err.Error()
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// Interrupt is the JSON an ai:complete's fullText holds when the server's agent
// stopped at a proposal ({"type":"interrupt","proposedAction":…,"toolCall":…}, the
// server's own shape).
type Interrupt struct {
	Action   datasource.Action
	ToolCall WireToolCall
	Reason   string // the "reason" argument of the tool call, when it has one
	Message  string // text the model wrote before proposing, when the server sends it
}

// WireToolCall is a tool call in the OpenAI format the server's history uses.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// ParseInterrupt reads fullText as an interrupt. ok is false when fullText is an
// ordinary answer (not a JSON object whose type is "interrupt"); an interrupt with
// a missing or broken action or tool call is a *MalformedError.
func ParseInterrupt(fullText string) (it Interrupt, ok bool, err error) {
	t := strings.TrimSpace(fullText)
	if !strings.HasPrefix(t, "{") || !strings.HasSuffix(t, "}") {
		return it, false, nil
	}
	var head struct {
		Type string `json:"type"`
	}
	if json.Unmarshal([]byte(t), &head) != nil || head.Type != "interrupt" {
		return it, false, nil
	}
	var w struct {
		ProposedAction json.RawMessage `json:"proposedAction"`
		ToolCall       json.RawMessage `json:"toolCall"`
		Message        *string         `json:"message"`
	}
	if err := json.Unmarshal([]byte(t), &w); err != nil {
		return it, false, malformed("interrupt: %v", shortErr(err))
	}
	if len(w.ProposedAction) == 0 || string(w.ProposedAction) == "null" {
		return it, false, malformed("interrupt without proposedAction")
	}
	if err := json.Unmarshal(w.ProposedAction, &it.Action); err != nil {
		return it, false, malformed("interrupt with an unreadable proposedAction (%v)", shortErr(err))
	}
	if len(w.ToolCall) == 0 || string(w.ToolCall) == "null" {
		return it, false, malformed("interrupt without toolCall")
	}
	if err := json.Unmarshal(w.ToolCall, &it.ToolCall); err != nil {
		return it, false, malformed("interrupt with an unreadable toolCall (%v)", shortErr(err))
	}
	if it.ToolCall.ID == "" || it.ToolCall.Function.Name == "" {
		return it, false, malformed("interrupt whose toolCall has no id or no function name")
	}
	if w.Message != nil {
		it.Message = *w.Message
	}
	var args struct {
		Reason string `json:"reason"`
	}
	if json.Unmarshal([]byte(it.ToolCall.Function.Arguments), &args) == nil {
		it.Reason = args.Reason
	}
	return it, true, nil
}
