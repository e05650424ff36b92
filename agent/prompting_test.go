package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/threads"
)

// noConfigs is a source that must not be asked for the node type configs.
type noConfigs struct{ datasource.Source }

func (noConfigs) Configs(context.Context, string) ([]datasource.NodeConfig, error) {
	return nil, errors.New("the source was asked for configs")
}

// The system prompt's node types come from the retriever's loaded graph: over a
// large file graph the index cache answers, asking the source would parse the file.
func TestSystemPromptTypesComeFromTheRetriever(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	store, err := threads.Open(ctx, filepath.Join(t.TempDir(), "threads.db"), threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	snap, err := src.Snapshot(ctx, "demo")
	if err != nil || len(snap.Configs) == 0 {
		t.Fatalf("demo configs: %v, %v", snap.Configs, err)
	}
	p := &scripted{turns: []turn{{text: "ok"}}}
	a := agent.New(agent.Options{Provider: p, Source: noConfigs{src}, Store: store, Retriever: retrieverNoCache(src)})
	if _, err := a.Send(ctx, agent.SendRequest{GraphKey: "demo", Text: "what does fetch-api do?"}, func(convo.Event) {}); err != nil {
		t.Fatal(err)
	}
	if sys := p.requests()[0].Messages[0].Content; !strings.Contains(sys, snap.Configs[0].Key) {
		t.Fatalf("system prompt lacks the type %q:\n%s", snap.Configs[0].Key, sys)
	}
}
