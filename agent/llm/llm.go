// Package llm talks to language model providers: OpenAI-compatible chat completions
// (through openai-go) and Anthropic's native API, both streamed, plus embeddings.
// Providers turn a conversation into deltas as they arrive and a final, accumulated
// reply; they never print and know nothing of threads or graphs.
package llm

import (
	"context"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm/chatstream"
)

// Request is one LLM call.
type Request struct {
	Messages []convo.Message
	// Tools offered to the model; empty means none (the tools parameter is then omitted).
	Tools []convo.ToolDef
	// MaxTokens caps the completion; 0 uses the provider's default (Anthropic needs one: 4096).
	MaxTokens int
}

// The vocabulary of a streamed reply lives in package chatstream, which parses
// what providers send apart from their SDKs; these are its names here.
type (
	// DeltaKind tells what a Delta carries.
	DeltaKind = chatstream.DeltaKind
	// Delta is a piece of the reply as it streams.
	Delta = chatstream.Delta
	// Reply is the whole reply of one call, accumulated from the stream.
	Reply = chatstream.Reply
)

const (
	DeltaText      = chatstream.DeltaText      // Text holds answer text
	DeltaReasoning = chatstream.DeltaReasoning // Text holds reasoning text
	DeltaToolStart = chatstream.DeltaToolStart // ToolCall holds the id and name of a call that began
)

// Provider streams one chat completion. onDelta is called on the caller's goroutine
// for each delta, in order; Stream returns when the stream ends. Errors are
// *fault.Error, classified (rate_limit, auth_error, ...) with Retryable set.
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
