// Package llm talks to language model providers: OpenAI-compatible chat completions
// (through openai-go) and Anthropic's native API, both streamed, plus embeddings.
// Providers turn a conversation into deltas as they arrive and a final, accumulated
// reply; they never print and know nothing of threads or graphs.
package llm

import (
	"context"

	"github.com/nodius/nodius-ai/agent/convo"
)

// Request is one LLM call.
type Request struct {
	Messages []convo.Message
	// Tools offered to the model; empty means none (the tools parameter is then omitted).
	Tools []convo.ToolDef
	// MaxTokens caps the completion; 0 uses the provider's default (Anthropic needs one: 4096).
	MaxTokens int
}

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

// Provider streams one chat completion. onDelta is called on the caller's goroutine
// for each delta, in order; Stream returns when the stream ends. Errors are
// *convo.Error, classified (rate_limit, auth_error, ...) with Retryable set.
// Cancelling ctx stops the HTTP stream at once and returns the reply so far with an
// error whose code is interrupted.
type Provider interface {
	Name() string
	Model() string
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Reply, error)
}

// Embedder turns texts into vectors (one per text, same order).
type Embedder interface {
	Model() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
