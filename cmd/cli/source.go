package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/internal/fault"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
)

// openSource turns the --source spec into a data source. ios.ErrOut receives the
// notes a source has for the user (an earlier-format graph file, an export, a
// server: source that could read only the saved state).
func openSource(ctx context.Context, cfg *config.Config, ios *IOStreams) (datasource.Source, error) {
	spec := cfg.Source
	switch {
	case spec == "" || spec == "demo":
		return openDemo()
	case strings.HasPrefix(spec, "file:"):
		return openFile(ctx, strings.TrimPrefix(spec, "file:"), cfg.GraphLockWait, ios)
	case strings.HasPrefix(spec, "arango://"), strings.HasPrefix(spec, "arangos://"):
		return openArango(ctx, cfg, spec)
	case strings.HasPrefix(spec, "server:"):
		return openServer(ctx, cfg, strings.TrimPrefix(spec, "server:"), ios.ErrOut)
	}
	return nil, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
		"unknown data source %q — use demo, file:PATH, arango://USER:PASS@HOST:PORT/DB?workspace=W or server:URL", fault.MaskCredentials(spec))}
}
