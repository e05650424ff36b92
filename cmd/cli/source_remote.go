package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/server"
	"github.com/nodius/nodius-ai/internal/termtext"
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
	ac.IgnoreLiveServer = cfg.ArangoIgnoreServer
	src, err := arango.Open(ctx, ac)
	if err != nil {
		return nil, err // not a typed nil in the interface: the factory closes what it gets
	}
	return src, nil
}

// openServer opens a server: source with the bearer JWT cfg.ServerToken chooses for
// that server (never one meant for another host). It reads the live graph (the
// saved state and the editing messages since) and applies approved changes through
// the server's editing socket. What the user should know about a read (only the
// saved state could be had) is said once on errOut. --fallback is not used: the
// server reads its own database.
func openServer(ctx context.Context, cfg *config.Config, url string, errOut io.Writer) (datasource.Source, error) {
	token, _, err := cfg.ServerToken(url)
	if err != nil {
		return nil, err
	}
	notice := func(msg string) { fmt.Fprintln(errOut, "nodius-ai: note: "+termtext.OneLine(msg)) }
	if cfg.Fallback != "" {
		notice("--fallback is ignored with a server: source: the Nodius server reads its own database")
	}
	s, err := server.New(server.Options{BaseURL: url, WSURL: wsURLFor(cfg, url), Token: token, MaxBytes: cfg.Limits.MaxSnapshotBytes, Notice: notice})
	if err != nil {
		return nil, err
	}
	return s, nil
}
