package agent

import (
	"context"

	"github.com/nodius/nodius-ai/agent/prompt"
	"github.com/nodius/nodius-ai/rag"
)

// systemPrompt builds the first message of a thread from the graph and its types.
func (a *Agent) systemPrompt(ctx context.Context, graphKey string, rc *rag.Context) (string, error) {
	configs, err := a.opt.Source.Configs(ctx, graphKey)
	if err != nil {
		return "", err
	}
	return prompt.SystemPrompt(rc.Graph, configs, a.opt.Role), nil
}

// contextMessage is the retrieval context of one question, as TOON.
func contextMessage(rc *rag.Context) string { return prompt.ContextMessage(rc) }
