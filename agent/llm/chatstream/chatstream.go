// Package chatstream assembles a model's reply from what a provider streams: the
// deltas shown as they arrive, the accumulated Reply, the per-response limits every
// provider applies (Bounds, LimitLines), and the parser of OpenAI-compatible
// chat-completion event streams (Accumulator).
//
// It is the part of package llm that reads bytes a model or a server chose, kept
// apart from the provider SDKs and their HTTP clients so that it can be read, tested
// and fuzzed on its own. Package llm re-exports Delta and Reply under its own names.
package chatstream

import "github.com/nodius/nodius-ai/agent/convo"

// DeltaKind tells what a Delta carries.
type DeltaKind int

const (
	DeltaText      DeltaKind = iota + 1 // Text holds answer text
	DeltaReasoning                      // Text holds reasoning text
	DeltaToolStart                      // ToolCall holds the id and name of a call that began
)

// Delta is a piece of the reply as it streams.
type Delta struct {
	Kind     DeltaKind
	Text     string
	ToolCall convo.ToolCall
}

// Reply is the whole reply of one call, accumulated from the stream. Tool calls are
// complete here (arguments whole), in the order the model gave them.
type Reply struct {
	Content      string
	Reasoning    string
	ToolCalls    []convo.ToolCall
	FinishReason string
	Usage        convo.Usage // tokens of this call (cost filled by the caller's pricing)
	Model        string
}
