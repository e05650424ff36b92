package llm

import (
	"fmt"
	"sync"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Tracker counts tokens and cost per call and per thread
// and enforces the configured limits with budget_exceeded. One Tracker per thread
// run; start it from the thread's stored usage so limits span sessions.
type Tracker struct {
	mu      sync.Mutex
	pricing config.Pricing
	limits  config.Limits
	thread  convo.Usage
}

// NewTracker starts from the thread's usage so far.
func NewTracker(p config.Pricing, l config.Limits, thread convo.Usage) *Tracker {
	return &Tracker{pricing: p, limits: l, thread: thread}
}

// Check says, before a call, whether the thread is already over its limits.
func (t *Tracker) Check() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.over(convo.Usage{})
}

// Record prices one call's usage (cached tokens apart), adds it to the thread and
// returns the priced usage; the error is budget_exceeded when a limit is passed
// (the call's tokens are still counted: they were spent).
func (t *Tracker) Record(u convo.Usage) (convo.Usage, error) {
	u.CostUSD = t.pricing.Cost(u.PromptTokens, u.CachedTokens, u.CompletionTokens)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.thread = t.thread.Add(u)
	return u, t.over(u)
}

// Thread returns the thread's totals.
func (t *Tracker) Thread() convo.Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.thread
}

func (t *Tracker) over(call convo.Usage) error {
	l := t.limits
	switch {
	case l.MaxTokensPerCall > 0 && call.Total() > l.MaxTokensPerCall:
		return budget(fmt.Sprintf("the last call used %d tokens, over the limit of %d per call — raise max_tokens_per_call in [limits]", call.Total(), l.MaxTokensPerCall))
	case l.MaxTokensPerThread > 0 && t.thread.Total() > l.MaxTokensPerThread:
		return budget(fmt.Sprintf("this thread used %d tokens, over the limit of %d — start a new thread or raise max_tokens_per_thread", t.thread.Total(), l.MaxTokensPerThread))
	case l.MaxCostUSD > 0 && t.thread.CostUSD > l.MaxCostUSD:
		return budget(fmt.Sprintf("this thread cost $%.4f, over the limit of $%.4f — start a new thread or raise max_cost_usd", t.thread.CostUSD, l.MaxCostUSD))
	}
	return nil
}

func budget(msg string) error { return &fault.Error{Code: fault.BudgetExceeded, Message: msg} }
