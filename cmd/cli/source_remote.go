package cli

import (
	"context"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/server"
)

// openArango opens an arango:// or arangos:// source. The URL's ?workspace= wins over
// --workspace / NODIUS_AI_WORKSPACE, since it names the data this URL points at. The
// database is asked once here, so a wrong URL or password fails at once with a clear
// sentence rather than at the first question.
func openArango(ctx context.Context, cfg *config.Config, url string) (datasource.Source, error) {
	ac, err := arango.ParseURL(url)
	if err != nil {
		return nil, err
	}
	if ac.Workspace == "" {
		ac.Workspace = cfg.Workspace
	}
	ac.MaxResultBytes = cfg.Limits.MaxArangoResultBytes
	ac.LockWait = cfg.GraphLockWait
	src, err := arango.Open(ctx, ac)
	if err != nil {
		return nil, err // not a typed nil in the interface: the factory closes what it gets
	}
	return src, nil
}

// openServer opens a server: source, with the --fallback arango source for graphs
// the server does not hold in memory, and the bearer JWT cfg.ServerToken chooses
// for that server (never one meant for another host).
func openServer(ctx context.Context, cfg *config.Config, url string) (datasource.Source, error) {
	token, _, err := cfg.ServerToken(url)
	if err != nil {
		return nil, err
	}
	var fallback datasource.Source
	if fb := cfg.Fallback; fb != "" {
		if !strings.HasPrefix(fb, "arango://") && !strings.HasPrefix(fb, "arangos://") {
			return nil, &convo.Error{Code: convo.CodeConfig,
				Message: "--fallback must be an arango:// or arangos:// URL (the database behind the Nodius server)"}
		}
		src, err := openArango(ctx, cfg, fb)
		if err != nil {
			return nil, err
		}
		fallback = src
	}
	s, err := server.New(server.Options{BaseURL: url, Token: token, Fallback: fallback,
		MaxBytes: cfg.Limits.MaxSnapshotBytes})
	if err != nil {
		if c, ok := fallback.(interface{ Close() error }); ok {
			_ = c.Close()
		}
		return nil, err
	}
	return s, nil
}
