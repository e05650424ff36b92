// Package agent runs the Nodius assistant in-process: retrieval, prompt, the streaming
// LLM tool loop, proposals that stop the loop for a person's decision, and resume. It
// emits events and persists every step through a Store; it never prints.
package agent

import (
	"context"
	"errors"

	"github.com/nodius/nodius-ai/agent/convo"
)

// SendRequest is one question. An empty ThreadID starts a new thread on GraphKey.
type SendRequest struct {
	GraphKey string
	ThreadID string
	Text     string
	// Mentions are node keys the user named with @: added to the retrieval context in full.
	Mentions []string
}

// Result is how a run ended: a final answer (Text), or a proposal awaiting a decision.
type Result struct {
	ThreadID string
	Text     string
	Proposal *convo.Proposal
	Usage    convo.Usage // this run's tokens and cost
}

// Agent is the assistant runtime, shared by all threads of a process.
type Agent struct{}

// Send asks a question. emit is called synchronously, in order, for every event
// (the first is always EventThread).
func (a *Agent) Send(ctx context.Context, req SendRequest, emit func(convo.Event)) (Result, error) {
	return Result{}, errors.New("agent: not built yet")
}

// Resume decides the thread's pending proposal and continues the conversation.
func (a *Agent) Resume(ctx context.Context, threadID string, d convo.Decision, emit func(convo.Event)) (Result, error) {
	return Result{}, errors.New("agent: not built yet")
}
