package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/internal/fault"
)

type embedOptions struct {
	Graph string
	Force bool
	Batch int
	Delay time.Duration
}

func newEmbedCmd(f *Factory) *cobra.Command {
	var o embedOptions
	cmd := &cobra.Command{
		Use:   "embed --graph KEY [--force] [--batch N] [--delay D]",
		Short: "Compute node embeddings for vector search",
		Long: `Compute an embedding for each node of a graph whose content changed since its
last embedding (type, process, data, handles — moving or resizing a node does not
count), and store it with the node: in the graph file for file:PATH, on the node
document for arango://. Retrieval then ranks nodes by meaning as well as by words.

Needs an embedding model (--embedding-model or NODIUS_AI_EMBEDDING_MODEL). Nodes are
sent in batches of --batch, with --delay between batches to stay under rate limits;
a node that fails is counted and the others go on.`,
		Example: `  nodius-ai embed --graph demo --source file:graph.json --embedding-model text-embedding-3-small
  nodius-ai embed --graph nba --source 'arango://root:pw@localhost:8529/nodius?workspace=acme' --batch 50 --delay 200ms
  nodius-ai embed --graph nba --force`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEmbed(cmd.Context(), f, o) },
	}
	cmd.Flags().StringVarP(&o.Graph, "graph", "g", "", "graph key")
	cmd.Flags().BoolVar(&o.Force, "force", false, "embed every node, even unchanged ones")
	cmd.Flags().IntVar(&o.Batch, "batch", 100, "nodes per embedding request")
	cmd.Flags().DurationVar(&o.Delay, "delay", 0, "pause between batches (e.g. 200ms), for rate limits")
	return cmd
}

func runEmbed(ctx context.Context, f *Factory, o embedOptions) error {
	if o.Batch < 1 {
		return usageError("--batch must be at least 1 (got %d)", o.Batch)
	}
	if o.Delay < 0 {
		return usageError("--delay cannot be negative (got %s)", o.Delay)
	}
	cfg, err := f.Config()
	if err != nil {
		return err
	}
	if cfg.EmbeddingModel == "" {
		return &fault.Error{Code: fault.Config,
			Message: "embed needs an embedding model — pass --embedding-model (e.g. text-embedding-3-small) or set NODIUS_AI_EMBEDDING_MODEL"}
	}
	e, err := f.Embedder()
	if err != nil {
		return err
	}
	emb, ok := e.(embedding.Embedder)
	if !ok {
		return &fault.Error{Code: fault.Config,
			Message: "no embeddings endpoint for model " + cfg.EmbeddingModel + " — set NODIUS_AI_EMBEDDING_BASE_URL, or use a provider with embeddings (OPENAI_API_KEY)"}
	}
	src, err := f.Source(ctx)
	if err != nil {
		return err
	}
	es, ok := src.(embedding.Source)
	if !ok {
		return &fault.Error{Code: fault.Config,
			Message: fmt.Sprintf("the %s source cannot store embeddings — use --source file:PATH or arango://...", describeSource(src, orDemo(cfg.Source)))}
	}
	graph := o.Graph
	if graph == "" {
		graph = defaultGraph(ctx, cfg, src)
	}
	if graph == "" {
		return usageError("no graph given: pass --graph KEY")
	}
	return embedGraph(ctx, f.IO, es, emb, graph, o)
}

// embedGraph runs the embedding and reports: a progress bar on stderr when it is a
// terminal, the summary line on stdout, the first failures on stderr. Failed nodes
// make the exit code 1, after the summary.
func embedGraph(ctx context.Context, ios *IOStreams, src embedding.Source, emb embedding.Embedder, graph string, o embedOptions) error {
	var bar *progressBar
	if ios.ErrTTY {
		bar = &progressBar{w: ios.ErrOut, width: 30}
	}
	opts := embedding.Options{Force: o.Force, Batch: o.Batch, Delay: o.Delay}
	if bar != nil {
		opts.Progress = bar.update
	}
	sum, err := embedding.Run(ctx, src, graph, emb, opts)
	if bar != nil {
		bar.done()
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(ios.Out, "embedded %d, skipped %d, failed %d of %d nodes (graph %s, model %s)\n",
		sum.Embedded, sum.Skipped, sum.Failed, sum.Total, graph, emb.Model())
	if sum.Failed > 0 {
		for _, e := range sum.Errors {
			fmt.Fprintf(ios.ErrOut, "nodius-ai: embed: %s\n", oneLine(e))
		}
		if more := sum.Failed - len(sum.Errors); more > 0 {
			fmt.Fprintf(ios.ErrOut, "nodius-ai: embed: … and %d more failure(s)\n", more)
		}
		fmt.Fprintln(ios.ErrOut, "nodius-ai: run embed again to retry the failed nodes (unchanged nodes are skipped)")
		return &ExitError{Code: ExitRuntime}
	}
	return nil
}

func oneLine(err error) string {
	if ce, ok := fault.As(err); ok {
		return ce.Message
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

func orDemo(spec string) string {
	if spec == "" {
		return "demo"
	}
	return spec
}

// progressBar draws "[#####.....]  12/40 nodes" on one terminal line.
type progressBar struct {
	w     io.Writer
	width int
	drawn bool
}

func (p *progressBar) update(done, total int) {
	if total == 0 {
		return
	}
	filled := p.width * done / total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d nodes", strings.Repeat("#", filled), strings.Repeat(".", p.width-filled), done, total)
	p.drawn = true
}

func (p *progressBar) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\n")
	}
}
