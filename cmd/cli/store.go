package cli

import (
	"context"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/threads"
)

// Store opens the threads database (--db, NODIUS_AI_DB, the config file, else
// $XDG_DATA_HOME/nodius-ai/threads.db) once per run; Close closes it. Only commands
// that need threads call it, so `version` or `inspect toon` never touch the disk.
func (f *Factory) Store(ctx context.Context) (*threads.Store, error) {
	// The open store is kept among the closers rather than in a field of its own, so
	// a second call within the run finds it there.
	for _, c := range f.closers {
		if s, ok := c.(*threads.Store); ok {
			return s, nil
		}
	}
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	path := cfg.DB // --db, wherever it was typed, reaches it through setFlags
	if path == "" {
		path = config.DefaultDBPath(f.IO.Getenv)
	}
	s, err := threads.Open(ctx, path, threads.Options{})
	if err != nil {
		return nil, err
	}
	f.closers = append(f.closers, s)
	return s, nil
}
