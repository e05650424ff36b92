package cli

import (
	"context"
	"errors"
	"fmt"

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
	f.warnIfDamaged(ctx, s, path)
	return s, nil
}

// warnIfDamaged checks the database before a command uses it and says so on stderr
// when SQLite finds it damaged: the command still runs (what can be read is worth
// reading), but the person knows before anything more is written to it.
func (f *Factory) warnIfDamaged(ctx context.Context, s *threads.Store, path string) {
	problems, err := s.CheckOnOpen(ctx)
	if err == nil && len(problems) == 0 {
		return
	}
	n := fmt.Sprintf("%d problem(s)", len(problems))
	if err != nil && len(problems) == 0 {
		n = "it could not be checked"
	}
	fmt.Fprintf(f.IO.ErrOut, "warning: the threads database %s is damaged (%s) — run 'nodius-ai threads check' for what to do before writing more to it\n", path, n)
}

// ReadStore is Store for the commands that only read (threads list, show, search,
// export): on a database that cannot be written (a read-only file or directory, a
// backup mounted read-only) it opens it read-only instead of failing.
func (f *Factory) ReadStore(ctx context.Context) (*threads.Store, error) {
	s, err := f.Store(ctx)
	if err == nil || !errors.Is(err, threads.ErrReadOnly) {
		return s, err
	}
	cfg, cerr := f.Config()
	if cerr != nil {
		return nil, cerr
	}
	path := cfg.DB
	if path == "" {
		path = config.DefaultDBPath(f.IO.Getenv)
	}
	ro, rerr := threads.Open(ctx, path, threads.Options{ReadOnly: true})
	if rerr != nil {
		return nil, err // the first error says what is wrong with the file
	}
	f.closers = append(f.closers, ro)
	f.warnIfDamaged(ctx, ro, path)
	return ro, nil
}
