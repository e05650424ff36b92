package cli

import (
	"context"
	"errors"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
)

// openArango opens an arango:// source. TODO(arango): wire datasource/arango.
func openArango(ctx context.Context, cfg *config.Config, url string) (datasource.Source, error) {
	return nil, errors.New("arango source: not built yet")
}

// openServer opens a server: source. TODO(arango): wire datasource/server.
func openServer(ctx context.Context, cfg *config.Config, url string) (datasource.Source, error) {
	return nil, errors.New("server source: not built yet")
}
