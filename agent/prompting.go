package agent

import (
	"context"

	"github.com/nodius/nodius-ai/agent/prompt"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/rag"
)

// configLister gives a graph's node type configs; the retriever does, from the
// graph it has just loaded (from the index cache for a large file graph, which the
// source would have to parse).
type configLister interface {
	Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error)
}

// systemPrompt builds the first message of a thread from the graph and its types.
func (a *Agent) systemPrompt(ctx context.Context, graphKey string, rc *rag.Context) (string, error) {
	var from configLister = a.opt.Source
	if r, ok := a.opt.Retriever.(configLister); ok {
		from = r
	}
	configs, err := from.Configs(ctx, graphKey)
	if err != nil {
		return "", err
	}
	return prompt.SystemPrompt(rc.Graph, configs, a.opt.Role), nil
}

// contextMessage is the retrieval context of one question, as TOON.
func contextMessage(rc *rag.Context) string { return prompt.ContextMessage(rc) }
