package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/ndex"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// openDemo returns the embedded demo graph (key "demo"); changes stay in memory.
func openDemo() (datasource.Source, error) {
	src, err := demo.New()
	if err != nil {
		return nil, fmt.Errorf("demo source: %w", err)
	}
	return src, nil
}

// openFile opens a graph JSON file; approved proposals are written back to it
// atomically. A missing or malformed file is a configuration error (exit 2): the
// message names the file, and the line, column and field at fault.
// The file's notices (an earlier format, an export, types whose code is unknown)
// go to ios.ErrOut; a .ndex export's secret is NODIUS_EXPORT_SECRET's.
func openFile(ctx context.Context, path string, lockWait time.Duration, ios *IOStreams) (datasource.Source, error) {
	if path == "" {
		return nil, &fault.Error{Code: fault.Config, Message: "file source needs a path: use --source file:PATH"}
	}
	// Parsed on first use: with the index cache, retrieval over an unchanged
	// graph never needs to parse it.
	errOut, getenv := io.Writer(io.Discard), os.Getenv
	if ios != nil && ios.ErrOut != nil {
		errOut = ios.ErrOut
	}
	if ios != nil && ios.Getenv != nil {
		getenv = ios.Getenv
	}
	src, err := file.OpenLazyWith(ctx, path, file.Options{
		Notify: func(msg string) { fmt.Fprintln(errOut, "nodius-ai: "+termtext.OneLine(msg)) },
		Secret: getenv(ndex.SecretEnv), // the server's default when unset
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, &fault.Error{Code: fault.Config, Message: err.Error(), Err: err}
	}
	src.LockWait = lockWait
	src.WrapErr = func(err error) error { return &fault.Error{Code: fault.Config, Message: err.Error(), Err: err} }
	return src, nil
}
