package cli

import (
	"context"

	"github.com/nodius/nodius-ai/agent/tools"
)

// homeGraph picks home mode for ask and chat given no graph (no --graph, no default
// graph): the assistant then talks about the source's graphs — lists them, proposes
// a new one — as the Nodius server's does under graph key "home". It is offered only
// where the local agent runs and the source can list its graphs; otherwise the
// caller keeps its usage error.
func homeGraph(ctx context.Context, rt *Runtime) (string, bool) {
	if rt.Remote != nil || rt.Source == nil {
		return "", false
	}
	if _, ok, err := tools.ListGraphs(ctx, rt.Source); !ok || err != nil {
		return "", false
	}
	return tools.HomeGraphKey, true
}
