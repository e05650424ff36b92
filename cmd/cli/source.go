package cli

import (
	"context"
	"fmt"
	"github.com/nodius/nodius-ai/internal/fault"
	"io"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
)

// openSource turns the --source spec into a data source. errOut receives the
// notes a source has for the user (a server: source that could read only the saved
// state).
func openSource(ctx context.Context, cfg *config.Config, errOut io.Writer) (datasource.Source, error) {
	spec := cfg.Source
	switch {
	case spec == "" || spec == "demo":
		return openDemo()
	case strings.HasPrefix(spec, "file:"):
		return openFile(ctx, strings.TrimPrefix(spec, "file:"), cfg.GraphLockWait)
	case strings.HasPrefix(spec, "arango://"), strings.HasPrefix(spec, "arangos://"):
		return openArango(ctx, cfg, spec)
	case strings.HasPrefix(spec, "server:"):
		return openServer(ctx, cfg, strings.TrimPrefix(spec, "server:"), errOut)
	}
	return nil, &convo.Error{Code: convo.CodeConfig, Message: fmt.Sprintf(
		"unknown data source %q — use demo, file:PATH, arango://USER:PASS@HOST:PORT/DB?workspace=W or server:URL", fault.MaskCredentials(spec))}
}
