package convo

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nodius/nodius-ai/internal/fault"
)

// EventType names an agent event. The public ones are the NDJSON events of
// `ask --format json` (docs/reference.md), which scripts rely on; Status is internal (TUI only) and never written as NDJSON.
type EventType string

const (
	EventThread     EventType = "thread"
	EventToken      EventType = "token"
	EventReasoning  EventType = "reasoning"
	EventToolStart  EventType = "tool_start"
	EventToolResult EventType = "tool_result"
	EventProposal   EventType = "proposal"
	EventUsage      EventType = "usage"
	EventComplete   EventType = "complete"
	EventError      EventType = "error"
	// EventToolLimit: the assistant used its tool rounds and waits for a choice:
	// continue with more rounds, or answer now with what it has.
	EventToolLimit EventType = "tool_limit"

	// EventStatus reports what the agent is doing (State): for status bars only.
	EventStatus EventType = "status"
	// EventNote is a warning about how a run went that did not stop it (Text: one
	// sentence, e.g. the question was searched without its expansion). Internal:
	// written on stderr, never as NDJSON.
	EventNote EventType = "note"
)

// State is what a run is doing, carried by EventStatus.
type State string

const (
	StateRetrieving State = "retrieving"
	StateWaiting    State = "waiting" // waiting for the first token of an LLM call
	StateStreaming  State = "streaming"
	StateTool       State = "tool"
	StateRetrying   State = "retrying"
)

// Event is one thing that happened during a run. Which fields are set depends on Type.
type Event struct {
	Type EventType

	ThreadID string // thread, complete
	Graph    string // thread
	Text     string // token, reasoning, complete

	ToolCall ToolCall      // tool_start, tool_result (ID, Name, Arguments)
	Result   string        // tool_result
	ToolErr  string        // tool_result: empty when the tool succeeded
	Duration time.Duration // tool_result

	Proposal *Proposal // proposal

	Usage Usage // usage

	ToolLimit *ToolLimit // tool_limit

	Err *fault.Error // error

	State State // status

	// With StateRetrying: the attempt about to be made (2 for the first retry), of
	// how many in all, after waiting Wait; Err is why the last attempt failed.
	Attempt, Attempts int
	Wait              time.Duration
}

// Public reports whether the event belongs to the NDJSON contract.
func (e Event) Public() bool { return e.Type != EventStatus && e.Type != EventNote && e.Type != "" }

// MarshalJSON writes the NDJSON form docs/reference.md documents, field for field:
// scripts parse it, so a field is never renamed.
func (e Event) MarshalJSON() ([]byte, error) {
	switch e.Type {
	case EventThread:
		return json.Marshal(struct {
			Type     EventType `json:"type"`
			ThreadID string    `json:"thread_id"`
			Graph    string    `json:"graph"`
		}{e.Type, e.ThreadID, e.Graph})
	case EventToken, EventReasoning:
		return json.Marshal(struct {
			Type EventType `json:"type"`
			Text string    `json:"text"`
		}{e.Type, e.Text})
	case EventToolStart:
		return json.Marshal(struct {
			Type EventType       `json:"type"`
			ID   string          `json:"id"`
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}{e.Type, e.ToolCall.ID, e.ToolCall.Name, argsJSON(e.ToolCall.Arguments)})
	case EventToolResult:
		return json.Marshal(struct {
			Type   EventType `json:"type"`
			ID     string    `json:"id"`
			Name   string    `json:"name"`
			Result string    `json:"result"`
			Error  string    `json:"error"`
		}{e.Type, e.ToolCall.ID, e.ToolCall.Name, e.Result, e.ToolErr})
	case EventProposal:
		p := e.Proposal
		if p == nil {
			return nil, errors.New("proposal event without a proposal")
		}
		return json.Marshal(struct {
			Type   EventType `json:"type"`
			ID     string    `json:"id"`
			Tool   string    `json:"tool"`
			Action any       `json:"action"`
			Reason string    `json:"reason"`
		}{e.Type, p.ID, p.Tool, p.Action, p.Reason})
	case EventUsage:
		return json.Marshal(struct {
			Type             EventType `json:"type"`
			PromptTokens     int       `json:"prompt_tokens"`
			CompletionTokens int       `json:"completion_tokens"`
			CachedTokens     int       `json:"cached_tokens"`
			CostUSD          float64   `json:"cost_usd"`
		}{e.Type, e.Usage.PromptTokens, e.Usage.CompletionTokens, e.Usage.CachedTokens, e.Usage.CostUSD})
	case EventToolLimit:
		tl := e.ToolLimit
		if tl == nil {
			tl = &ToolLimit{}
		}
		return json.Marshal(struct {
			Type        EventType `json:"type"`
			ThreadID    string    `json:"thread_id"`
			RoundsUsed  int       `json:"rounds_used"`
			MaxExtended int       `json:"max_extended"`
		}{e.Type, e.ThreadID, tl.RoundsUsed, tl.MaxExtended})
	case EventComplete:
		return json.Marshal(struct {
			Type     EventType `json:"type"`
			ThreadID string    `json:"thread_id"`
			Text     string    `json:"text"`
		}{e.Type, e.ThreadID, e.Text})
	case EventError:
		er := e.Err
		if er == nil {
			er = &fault.Error{Code: fault.Internal, Message: "unknown error"}
		}
		return json.Marshal(struct {
			Type      EventType  `json:"type"`
			Code      fault.Code `json:"code"`
			Message   string     `json:"message"`
			Retryable bool       `json:"retryable"`
		}{e.Type, er.Code, er.Message, er.Retryable})
	case EventStatus:
		return json.Marshal(struct {
			Type  EventType `json:"type"`
			State State     `json:"state"`
		}{e.Type, e.State})
	case EventNote:
		return json.Marshal(struct {
			Type EventType `json:"type"`
			Text string    `json:"text"`
		}{e.Type, e.Text})
	}
	return nil, fmt.Errorf("unknown event type %q", e.Type)
}

// argsJSON returns the arguments as JSON when they parse, else as a JSON string.
func argsJSON(args string) json.RawMessage {
	if args == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// ErrDecided is wrapped by the error of a decision on a proposal that is no longer
// pending (another person or process decided it first).
var ErrDecided = errors.New("already decided")

// DecidedError is a decision (or an undo) another person or process took first.
// What says what became of it, in words a person reads ("proposal call_1 was
// already approved"); errors.Is(err, ErrDecided) holds.
type DecidedError struct{ What string }

func (e *DecidedError) Error() string        { return e.What + ": already decided" }
func (e *DecidedError) Is(target error) bool { return target == ErrDecided }

// ToolLimit is a run stopped at the tool-round limit: RoundsUsed rounds were used,
// and continuing allows up to MaxExtended in all. The thread waits for the choice
// (approve: continue; reject: answer now without tools).
type ToolLimit struct {
	RoundsUsed  int `json:"rounds_used"`
	MaxExtended int `json:"max_extended"`
}
