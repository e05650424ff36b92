package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/rag/evaluate"
)

// newInspectEvalCmd measures retrieval on a file of questions with known answers, so
// that people who tune retrieval on their own graphs can see what a change does.
func newInspectEvalCmd(f *Factory) *cobra.Command {
	var graph, format string
	var textOnly bool
	cmd := &cobra.Command{
		Use:   "eval --graph KEY [--format table|json] [--text-only] QUESTIONS.json",
		Short: "Measure retrieval (Hit@1, Hit@5, MRR, context recall) on questions with known answers",
		Long: `Asks retrieval every question of QUESTIONS.json (a JSON array of
{"q": "question", "gold": ["node-key", ...], "cat": "optional kind"}; "-" reads stdin)
and prints, per kind and overall: Hit@1 and Hit@5 (a gold node is first / in the first
five of the search ranking), MRR (mean of 1/rank of the first gold node) and context
recall (share of questions with a gold node among the context's nodes). Text search,
fused with embeddings when an embedding model is configured (--text-only leaves them
out, to compare); standard error says which ranking answered. The context cache is off.`,
		Example: `  nodius-ai inspect eval --graph demo questions.json
  nodius-ai --source file:shop.json inspect eval --graph shop --format json questions.json
  nodius-ai inspect eval --graph shop --text-only questions.json   # without the embeddings, to compare`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return usageError("--format must be table or json (got %q)", format)
			}
			qs, err := readQuestions(f, args[0])
			if err != nil {
				return err
			}
			r, key, err := inspectRetrieverWith(cmd, f, graph, !textOnly)
			if err != nil {
				return err
			}
			tally := &expandTally{r: r}
			rep, err := evaluate.Run(cmd.Context(), tally, key, qs)
			if err != nil {
				return err
			}
			fmt.Fprintln(f.IO.ErrOut, rankingLine(r, tally, len(qs)))
			if r.Options().Expander != nil {
				fmt.Fprintf(f.IO.ErrOut, "query expansion: %d calls (%d prompt + %d completion tokens), %d questions searched without it\n",
					tally.calls, tally.usage.PromptTokens, tally.usage.CompletionTokens, tally.failed)
			}
			if format == "json" {
				return writeJSONIndent(f.IO.Out, rep)
			}
			writeEvalTable(f.IO.Out, rep)
			return nil
		},
	}
	cmd.Flags().StringVarP(&graph, "graph", "g", "", "graph key")
	cmd.Flags().StringVar(&format, "format", "table", "table or json")
	cmd.Flags().BoolVar(&textOnly, "text-only", false, "rank by text search alone, even with an embedding model configured")
	return cmd
}

// rankingLine says which ranking answered the evaluation: text alone, or text fused
// with vector similarity for how many questions (a question whose embedding failed,
// or a graph without vectors, falls back to text).
func rankingLine(r *rag.Retriever, t *expandTally, n int) string {
	if !r.HasEmbedder() {
		return "ranking: text search alone"
	}
	line := fmt.Sprintf("ranking: text fused with vector similarity for %d of %d questions", t.vector, n)
	if t.vector < n {
		line += " (the others by text alone: the graph's nodes have no embeddings of this model — run embed — or embedding the question failed"
		if t.embedErr != "" {
			line += ": " + termtext.OneLine(t.embedErr)
		}
		line += ")"
	}
	return line
}

// expandTally counts what query expansion did over an evaluation.
type expandTally struct {
	r             *rag.Retriever
	calls, failed int
	usage         convo.Usage
	vector        int    // questions ranked with vector similarity
	embedErr      string // the first failure to embed a question
}

func (t *expandTally) Retrieve(ctx context.Context, graphKey, query string) (*rag.Context, error) {
	c, err := t.r.Retrieve(ctx, graphKey, query)
	if err == nil {
		if u := c.Retrieval.ExpandUsage; u.Total() > 0 {
			t.calls++
			t.usage = t.usage.Add(convo.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, CachedTokens: u.CachedTokens, CostUSD: u.CostUSD})
		}
		if c.Retrieval.ExpandError != "" {
			t.failed++
		}
		if c.Retrieval.Vector {
			t.vector++
		}
		if e := c.Retrieval.EmbedError; e != "" && t.embedErr == "" {
			t.embedErr = e
		}
	}
	return c, err
}

func readQuestions(f *Factory, path string) ([]evaluate.Question, error) {
	var r io.Reader = f.IO.In
	if path != "-" {
		file, err := os.Open(path)
		if err != nil {
			return nil, usageError("cannot read the questions file: %v", err)
		}
		defer file.Close()
		r = file
	}
	qs, err := evaluate.Load(r)
	if err != nil {
		return nil, usageError("%s: %v (expected [{\"q\": \"...\", \"gold\": [\"key\"], \"cat\": \"...\"}])", path, err)
	}
	return qs, nil
}

// inspectRetriever is the retriever the inspect commands use: the configured source
// and embedder, the context cache off, and the graph key (the default graph when
// none is given).
func inspectRetriever(cmd *cobra.Command, f *Factory, graph string) (*rag.Retriever, string, error) {
	return inspectRetrieverWith(cmd, f, graph, true)
}

// inspectRetrieverWith is inspectRetriever, without the embedder when embeddings is
// false.
func inspectRetrieverWith(cmd *cobra.Command, f *Factory, graph string, embeddings bool) (*rag.Retriever, string, error) {
	ctx := cmd.Context()
	src, err := f.Source(ctx)
	if err != nil {
		return nil, "", err
	}
	cfg, _ := f.Config()
	if graph == "" {
		graph = defaultGraph(ctx, cfg, src)
		if graph == "" {
			return nil, "", usageError("no graph given: pass --graph KEY")
		}
	}
	opts := rag.DefaultOptions()
	opts.CacheTTL = 0
	opts.Store = f.IndexStore()
	if f.IO.ErrTTY {
		opts.Progress = terminalProgress(f.IO.ErrOut)
	}
	opts.Expander = f.Expander()
	var emb rag.Embedder
	if embeddings {
		emb, _ = f.Embedder()
	}
	return rag.New(src, opts, emb), graph, nil
}

func writeEvalTable(w io.Writer, rep evaluate.Report) {
	fmt.Fprintf(w, "Graph %s — %d questions\n\n", termtext.OneLine(rep.Graph), rep.Overall.N)
	fmt.Fprintf(w, "%-16s %4s %6s %6s %6s %8s\n", "kind", "n", "Hit@1", "Hit@5", "MRR", "context")
	row := func(name string, m evaluate.Metrics) {
		fmt.Fprintf(w, "%-16s %4d %6.3f %6.3f %6.3f %7.1f%%\n", name, m.N, m.Hit1, m.Hit5, m.MRR, 100*m.ContextRecall)
	}
	cats := rep.Cats()
	if len(cats) > 1 || len(cats) == 1 && cats[0] != "" {
		for _, c := range cats {
			name := c
			if name == "" {
				name = "(none)"
			}
			row(termtext.OneLine(name), rep.ByCat[c])
		}
	}
	row("all", rep.Overall)
	first := true
	for _, o := range rep.Outcomes {
		if o.Rank == 1 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nNot ranked first (rank, question → top of the ranking):")
			first = false
		}
		rank := "-"
		if o.Rank > 0 {
			rank = fmt.Sprint(o.Rank)
		}
		ctx := ""
		if !o.InContext {
			ctx = " [not in context]"
		}
		fmt.Fprintf(w, "  %3s  %s → %s%s\n", rank, termtext.OneLine(o.Q), termtext.OneLine(fmt.Sprint(o.Top)), ctx)
	}
}

// terminalProgress shows the stages of a slow graph load on one terminal line,
// erased when the load is done.
func terminalProgress(w io.Writer) func(string) {
	return func(stage string) {
		if stage == "" {
			fmt.Fprint(w, "\r\x1b[K")
			return
		}
		fmt.Fprintf(w, "\r\x1b[K%s…", termtext.OneLine(stage))
	}
}
