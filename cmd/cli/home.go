package cli

import (
	"context"

	"github.com/nodius/nodius-ai/agent/tools"
)

// homeGraph picks home mode for ask and chat given no graph (no --graph, no default
// graph): the assistant then talks about the source's graphs — lists them, proposes
// a new one — as the Nodius server's does under graph key "home". The server's own
// assistant (--agent server:URL) always can: it lists the user's graphs itself.
// The local agent can where the source lists its graphs; otherwise the caller
// keeps its usage error.
func homeGraph(ctx context.Context, rt *Runtime) (string, bool) {
	if rt.Remote != nil {
		return tools.HomeGraphKey, true
	}
	if rt.Source == nil {
		return "", false
	}
	if _, ok, err := tools.ListGraphs(ctx, rt.Source); !ok || err != nil {
		return "", false
	}
	return tools.HomeGraphKey, true
}
