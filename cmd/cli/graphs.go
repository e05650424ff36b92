package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
)

// graphKeys lists the graphs a source holds, sorted, for completion and for the
// message of a wrong --graph. A source that cannot list its graphs gives nil.
func graphKeys(ctx context.Context, src datasource.Source) []string {
	keys, _, _ := tools.ListGraphs(ctx, src)
	return keys
}

// graphNotFound rewrites "graph not found: KEY" as a usage error (exit 2) that lists
// the graphs the source has, when it can list them.
func graphNotFound(ctx context.Context, f *Factory, err error) error {
	var nf *datasource.NotFoundError
	if !errors.As(err, &nf) || nf.Kind != "graph" {
		return err
	}
	msg := fmt.Sprintf("there is no graph %q in the source %s", nf.Key, f.sourceName())
	if f.src != nil {
		if keys := graphKeys(ctx, f.src); len(keys) > 0 {
			if len(keys) > 20 {
				keys = append(keys[:20:20], "…")
			}
			msg += "; its graphs: " + strings.Join(keys, ", ") + " — pass one with --graph KEY"
		}
	}
	return &ExitError{Code: ExitUsage, Err: errors.New(msg)}
}

// sourceName names the configured source for messages, without credentials.
func (f *Factory) sourceName() string {
	if f.src != nil {
		if d, ok := f.src.(datasource.Describer); ok {
			return d.Describe()
		}
	}
	if f.cfg != nil && f.cfg.Source != "" {
		return config.RedactURL(f.cfg.Source)
	}
	return "demo"
}
