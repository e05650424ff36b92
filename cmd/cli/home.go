package cli

import (
	"context"

	"github.com/nodius/nodius-ai/agent/tools"
)

// homeGraph picks home mode for ask and chat given no graph (no --graph, no default
// graph): the assistant then talks about the source's graphs — lists them, proposes
// a new one — as the Nodius server's does under graph key "home". The server's own
// assistant (--agent server:URL) always can: it lists the user's graphs itself.
// The local agent can where the source lists its graphs (a server: source asks the
// server); otherwise the caller keeps its usage error. err is why a source that
// lists its graphs could not (a refused token, a server down): said rather than
// the usage error, which would hide it.
func homeGraph(ctx context.Context, rt *Runtime) (string, bool, error) {
	if rt.Remote != nil {
		return tools.HomeGraphKey, true, nil
	}
	if rt.Source == nil {
		return "", false, nil
	}
	_, ok, err := tools.ListGraphs(ctx, rt.Source)
	if !ok {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return tools.HomeGraphKey, true, nil
}
