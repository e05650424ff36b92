package agent

import (
	"github.com/nodius/nodius-ai/agent/convo"
)

// completionReserve is kept free of the context window for the answer.
const completionReserve = 4096

// estimateTokens is a cheap upper-side estimate (about 4 bytes a token for English
// and code; JSON and French run a little denser). It runs on every call over the
// whole history, so it must not tokenize.
func estimateTokens(s string) int { return len(s)/3 + 1 }

func estimateMessage(m convo.Message) int {
	n := 4 + estimateTokens(m.Content)
	for _, c := range m.ToolCalls {
		n += 8 + estimateTokens(c.Name) + estimateTokens(c.Arguments)
	}
	return n
}

func estimateMessages(ms []convo.Message) int {
	n := 0
	for _, m := range ms {
		n += estimateMessage(m)
	}
	return n
}

func estimateTools(ts []convo.ToolDef) int {
	n := 0
	for _, t := range ts {
		n += 8 + estimateTokens(t.Name) + estimateTokens(t.Description) + estimateTokens(string(t.Parameters))
	}
	return n
}

// fitHistory returns the messages to send so that they fit the context window. The
// history is append-only (so providers' prefix caches keep hitting) until it would
// overflow; then the oldest retrieval contexts go first, then the oldest whole turns.
// A turn is a user message and everything up to the next one, so an assistant
// tool-call message never loses its tool results. The system prompt and the current
// turn are always kept. window <= 0 sends everything.
func fitHistory(h []convo.Message, window int, tools []convo.ToolDef) []convo.Message {
	if window <= 0 {
		return h
	}
	budget := window - completionReserve - estimateTools(tools)
	total := estimateMessages(h)
	if total <= budget {
		return h
	}
	drop := make([]bool, len(h))
	lastUser := -1
	for i, m := range h {
		if m.Role == convo.User {
			lastUser = i
		}
	}
	// The context of the current turn sits right before its user message.
	current := lastUser
	if current > 0 && h[current-1].Kind == convo.KindContext {
		current--
	}
	// 1. Old retrieval contexts, oldest first.
	for i := 0; i < current && total > budget; i++ {
		if h[i].Role == convo.System && h[i].Kind == convo.KindContext {
			drop[i] = true
			total -= estimateMessage(h[i])
		}
	}
	// 2. Old whole turns, oldest first.
	for i := 0; i < current && total > budget; {
		if h[i].Role != convo.User || drop[i] {
			i++
			continue
		}
		j := i + 1
		for j < current && h[j].Role != convo.User {
			j++
		}
		for k := i; k < j; k++ {
			if !drop[k] && h[k].Kind != convo.KindPrompt {
				drop[k] = true
				total -= estimateMessage(h[k])
			}
		}
		i = j
	}
	out := make([]convo.Message, 0, len(h))
	for i, m := range h {
		if !drop[i] {
			out = append(out, m)
		}
	}
	return out
}
