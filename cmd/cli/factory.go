package cli

import (
	"context"
	"io"
	"log/slog"
	"sync"

	"github.com/spf13/pflag"

	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/rag"
)

// Factory hands commands what they need, built on first use and shared within one
// run: the resolved configuration, the data source, the thread store.
type Factory struct {
	IO    *IOStreams
	flags *pflag.FlagSet

	cfgOnce sync.Once
	cfg     *config.Config
	cfgErr  error

	srcOnce sync.Once
	src     datasource.Source
	srcErr  error
	// quietSearchHint keeps searchHint silent (arango setup, which is the remedy).
	quietSearchHint bool

	rt     *Runtime
	logger *slog.Logger

	expOnce  sync.Once
	expander rag.Expander

	closers []io.Closer
}

// NewFactory returns a Factory over the given streams.
func NewFactory(ios *IOStreams) *Factory { return &Factory{IO: ios} }

// Config resolves flags > environment > config file, once.
func (f *Factory) Config() (*config.Config, error) {
	f.cfgOnce.Do(func() {
		opts := config.LoadOptions{Getenv: f.IO.Getenv, Flags: map[string]string{}}
		if f.flags != nil {
			opts.Flags = setFlags(f.flags)
			opts.ConfigPath = opts.Flags["config"]
		}
		f.cfg, f.cfgErr = config.Load(opts)
		if f.cfgErr == nil {
			f.cfg.Stored = f.storedToken
		}
	})
	return f.cfg, f.cfgErr
}

// Source opens the configured data source, once.
func (f *Factory) Source(ctx context.Context) (datasource.Source, error) {
	f.srcOnce.Do(func() {
		cfg, err := f.Config()
		if err != nil {
			f.srcErr = err
			return
		}
		f.src, f.srcErr = openSource(ctx, cfg, f.IO)
		if c, ok := f.src.(io.Closer); ok {
			f.closers = append(f.closers, c)
		}
		if f.srcErr == nil {
			f.searchHint(ctx, f.src)
		}
	})
	return f.src, f.srcErr
}

// Close releases what the factory opened (database, connections).
func (f *Factory) Close() {
	for i := len(f.closers) - 1; i >= 0; i-- {
		_ = f.closers[i].Close()
	}
	f.closers = nil
}
