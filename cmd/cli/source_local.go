package cli

import (
	"context"
	"errors"

	"github.com/nodius/nodius-ai/datasource"
)

// openDemo returns the embedded demo graph. TODO(datasource): wire datasource/demo.
func openDemo() (datasource.Source, error) { return nil, errors.New("demo source: not built yet") }

// openFile opens a graph JSON file. TODO(datasource): wire datasource/file.
func openFile(ctx context.Context, path string) (datasource.Source, error) {
	return nil, errors.New("file source: not built yet")
}
