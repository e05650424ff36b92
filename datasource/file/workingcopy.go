package file

import (
	"context"

	"github.com/nodius/nodius-ai/datasource"
)

// Change runs fn over one working copy of the graph under the file's lock, with the
// file read again first, and saves the file once: all of fn's changes or none.
func (s *Source) Change(ctx context.Context, graphKey string, fn func(datasource.WorkingCopy) error) error {
	return s.write(ctx, func() error { return s.store.Change(ctx, graphKey, fn) })
}

// Change opens the file when it is not yet and runs Source.Change.
func (l *Lazy) Change(ctx context.Context, graphKey string, fn func(datasource.WorkingCopy) error) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	defer l.wrote()
	return s.Change(ctx, graphKey, fn)
}
