package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/internal/fault"
)

// newArangoCmd groups what prepares an ArangoDB database for nodius-ai.
func newArangoCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "arango",
		Short: "Prepare an ArangoDB database for nodius-ai",
		Long:  "Commands that prepare the ArangoDB database of an arango:// source.",
	}
	cmd.AddCommand(newArangoSetupCmd(f))
	return cmd
}

func newArangoSetupCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "setup [--source arango://USER:PASS@HOST:PORT/DB?workspace=W]",
		Short: "Make text search run in ArangoDB (creates a search view)",
		Long: `Create what text search in ArangoDB needs, or find it already there:
two analyzers (nodius_text_en and nodius_text_fr: words of identifiers split,
lowercased, accents folded, stemmed in English or French) and an ArangoSearch
view, nodius_nodes_search, over the nodes (key, type, code and the text values of
their data), the edges (labels) and the node types (their code, node.process,
where Nodius keeps a node's code). A view made by an earlier version is updated
to index what it lacks, and the output says what was added.

Without the view, every question over an arango:// source reads all the nodes of
the graph and ranks them in this process. With it, ArangoDB ranks the nodes (BM25)
and sends only the best few with their neighbours. Nothing in the collections
changes; dropping the view and the two analyzers undoes it all.

Running it again changes nothing. It needs a user that may create analyzers and
views in the database. ArangoDB indexes existing nodes in the background: on a
large graph, searches find everything after a short while.`,
		Example: `  nodius-ai arango setup --source 'arango://root:pw@localhost:8529/nodius?workspace=acme'
  NODIUS_AI_SOURCE='arango://root:pw@db:8529/nodius' nodius-ai arango setup`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runArangoSetup(cmd.Context(), f) },
	}
}

func runArangoSetup(ctx context.Context, f *Factory) error {
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if !isArangoSpec(cfg.Source) {
		what := "no source"
		if cfg.Source != "" {
			what = "the source " + fault.MaskCredentials(cfg.Source)
		}
		return &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
			"arango setup needs an arango:// source, and %s is in effect — pass --source 'arango://USER:PASS@HOST:PORT/DB?workspace=W' or set NODIUS_AI_SOURCE", what)}
	}
	f.quietSearchHint = true
	src, err := f.Source(ctx)
	if err != nil {
		return err
	}
	as, ok := src.(*arango.Source)
	if !ok { // cannot happen with an arango:// spec; said plainly all the same
		return &fault.Error{Code: fault.Config, Message: "arango setup needs an arango:// source"}
	}
	steps, err := as.SetupSearch(ctx)
	out := f.IO.Out
	for _, s := range steps {
		fmt.Fprintln(out, s.String())
	}
	if err != nil {
		return err
	}
	changed := false
	for _, s := range steps {
		changed = changed || s.State != "already there"
	}
	if changed {
		fmt.Fprintf(out, "Text search now runs in ArangoDB (%s); it indexes the existing nodes in the background.\n", as.DescribeDatabase())
	} else {
		fmt.Fprintf(out, "Nothing to do: text search already runs in ArangoDB (%s).\n", as.DescribeDatabase())
	}
	return nil
}

func isArangoSpec(spec string) bool {
	return strings.HasPrefix(spec, "arango://") || strings.HasPrefix(spec, "arangos://")
}

// searchHint tells, once per process, that an arango:// source ranks text in
// process because its database has no search view, and how to change that. It is
// logged always and printed on stderr only when stderr is a terminal, so scripts
// and pipes stay quiet. It is asked when the source is opened, before any
// full-screen interface starts. A failure to ask is left to the first real
// request, which reports it.
func (f *Factory) searchHint(ctx context.Context, src datasource.Source) {
	as, ok := src.(*arango.Source)
	if !ok || f.quietSearchHint {
		return
	}
	ready, err := as.SearchReady(ctx)
	if err != nil || ready {
		return
	}
	f.Logger().Info("text search ranks in process: no search view in ArangoDB", "view", arango.SearchView, "source", as.Describe())
	if f.IO.ErrTTY {
		fmt.Fprintf(f.IO.ErrOut, "nodius-ai: hint: %s has no search view (or one from an earlier version), so each question reads the whole graph — run `nodius-ai arango setup` once to search in ArangoDB\n", as.Describe())
	}
}
