package agent

import (
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/rag"
)

// recordExpansion accounts for the question's expansion call (retrieval.expand =
// "llm"), made during retrieval: its tokens are priced and counted like any call (a
// usage event, the run's total, the thread's limits), and a failed expansion is told
// as a note, since the question then went on unexpanded. It returns the priced usage
// for the context message to carry into the thread's totals.
func (r *run) recordExpansion(info rag.RetrievalInfo) convo.Usage {
	if info.ExpandError != "" {
		r.emit(convo.Event{Type: convo.EventNote, Text: "the question was searched without expansion: " + info.ExpandError})
	}
	x := info.ExpandUsage
	if x.Total() == 0 {
		return convo.Usage{}
	}
	u := convo.Usage{PromptTokens: x.PromptTokens, CompletionTokens: x.CompletionTokens, CachedTokens: x.CachedTokens, CostUSD: x.CostUSD}
	// Over a limit, the next call's check stops the run with budget_exceeded.
	priced, _ := r.usage().Record(u)
	r.emit(convo.Event{Type: convo.EventUsage, Usage: priced})
	r.result.Usage = r.result.Usage.Add(priced)
	return priced
}
