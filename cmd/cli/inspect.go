package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent/prompt"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/termtext"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/rag/tokens"
	"github.com/nodius/nodius-ai/rag/toon"
)

// newInspectCmd groups the offline views of what the assistant sees: no API key and
// no network needed.
func newInspectCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Show what the assistant sees: retrieval context, prompt, tools, TOON",
		Long:  "Offline views of what the assistant is given. None of them needs an API key or the network.",
	}
	cmd.AddCommand(newInspectContextCmd(f), newInspectPromptCmd(f), newInspectToolsCmd(f), newInspectToonCmd(f), newInspectEvalCmd(f), newInspectGraphCmd(f))
	return cmd
}

// retrieveOnce runs retrieval with the cache off, as a question would.
func retrieveOnce(cmd *cobra.Command, f *Factory, graph, query string) (*rag.Context, error) {
	r, key, err := inspectRetriever(cmd, f, graph)
	if err != nil {
		return nil, err
	}
	rc, err := r.Retrieve(cmd.Context(), key, query)
	if err != nil {
		return nil, err
	}
	// With retrieval.expand = "llm", say what the model added (or why nothing was).
	switch ri := rc.Retrieval; {
	case ri.ExpandError != "":
		fmt.Fprintln(f.IO.ErrOut, "warning: the question was searched without expansion: "+termtext.OneLine(ri.ExpandError))
	case len(ri.Expansion) > 0:
		fmt.Fprintln(f.IO.ErrOut, "expanded with: "+termtext.OneLine(strings.Join(ri.Expansion, ", ")))
	}
	return rc, nil
}

// contextJSON is the json shape of `inspect context`, which scripts rely on.
type contextJSON struct {
	Graph   string         `json:"graph"`
	Query   string         `json:"query"`
	Hits    []rag.Hit      `json:"hits"`
	Nodes   []contextNode  `json:"nodes"`
	Edges   []contextEdge  `json:"edges"`
	Configs []string       `json:"configs"`
	TOON    string         `json:"toon"`
	Tokens  map[string]int `json:"tokens"`
}

type contextNode struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Sheet string `json:"sheet"`
}

type contextEdge struct {
	Source string `json:"source"`
	Target string `json:"target"`
	Label  string `json:"label"`
}

func newInspectContextCmd(f *Factory) *cobra.Command {
	var graph, format string
	cmd := &cobra.Command{
		Use:   "context --graph KEY QUERY",
		Short: "Show what retrieval returns for a question, ranked, with token counts",
		Example: `  nodius-ai inspect context --graph demo "Que fait le node fetch-api ?"
  nodius-ai inspect context --graph demo --format json "error handling"`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "toon" && format != "json" {
				return usageError("--format must be toon or json (got %q)", format)
			}
			query := strings.Join(args, " ")
			rc, err := retrieveOnce(cmd, f, graph, query)
			if err != nil {
				return err
			}
			toonText := prompt.ContextMessage(rc)
			compact, _ := json.Marshal(struct {
				Nodes   []rag.ContextNode   `json:"nodes"`
				Edges   []rag.ContextEdge   `json:"edges"`
				Configs []rag.ConfigSummary `json:"configs"`
			}{rc.Nodes, rc.Edges, rc.Configs})
			counts := map[string]int{"toon": tokens.Count(toonText), "json": tokens.Count(string(compact))}
			if format == "json" {
				out := contextJSON{Graph: rc.Graph.Key, Query: query, Hits: rc.Hits, TOON: toonText, Tokens: counts,
					Nodes: []contextNode{}, Edges: []contextEdge{}, Configs: []string{}}
				if out.Hits == nil {
					out.Hits = []rag.Hit{}
				}
				for _, n := range rc.Nodes {
					out.Nodes = append(out.Nodes, contextNode{Key: n.Key, Type: n.Type, Sheet: n.Sheet})
				}
				for _, e := range rc.Edges {
					out.Edges = append(out.Edges, contextEdge{Source: e.Source, Target: e.Target, Label: e.Label})
				}
				for _, c := range rc.Configs {
					out.Configs = append(out.Configs, c.Key)
				}
				return writeJSON(f.IO.Out, out)
			}
			w := f.IO.Out
			fmt.Fprintf(w, "# Graph %s — query %q\n\n", termtext.OneLine(rc.Graph.Key), termtext.OneLine(query))
			fmt.Fprintln(w, "## Search ranking (before expansion)")
			if len(rc.Hits) == 0 {
				fmt.Fprintln(w, "(no match: the first nodes of the graph are used)")
			}
			for i, h := range rc.Hits {
				fmt.Fprintf(w, "%2d. %-28s %.3f\n", i+1, termtext.OneLine(h.Key), h.Score)
			}
			fmt.Fprintf(w, "\n## Context: %d nodes, %d edges, %d node types — %d tokens as TOON, %d as compact JSON\n\n",
				len(rc.Nodes), len(rc.Edges), len(rc.Configs), counts["toon"], counts["json"])
			fmt.Fprintln(w, termtext.Strip(toonText))
			return nil
		},
	}
	cmd.Flags().StringVarP(&graph, "graph", "g", "", "graph key")
	cmd.Flags().StringVar(&format, "format", "toon", "toon or json")
	return cmd
}

func newInspectPromptCmd(f *Factory) *cobra.Command {
	var graph string
	cmd := &cobra.Command{
		Use:     "prompt --graph KEY QUERY",
		Short:   "Show the full prompt the model would get for a first question, with token counts",
		Example: `  nodius-ai inspect prompt --graph demo "what does fetch-api do?"`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			query := strings.Join(args, " ")
			rc, err := retrieveOnce(cmd, f, graph, query)
			if err != nil {
				return err
			}
			src, _ := f.Source(cmd.Context())
			configs, err := src.Configs(cmd.Context(), rc.Graph.Key)
			if err != nil {
				return err
			}
			cfg, _ := f.Config()
			role := "editor"
			if cfg != nil && cfg.Role != "" {
				role = cfg.Role
			}
			parts := []struct{ role, text string }{
				{"system", prompt.SystemPrompt(rc.Graph, configs, role)},
				{"system", prompt.ContextMessage(rc)},
				{"user", query},
			}
			defs := tools.ToolDefs(role, policyAllows(cfg))
			defsJSON, _ := json.Marshal(defs)
			total := 0
			w := f.IO.Out
			for i, p := range parts {
				n := tokens.Count(p.text)
				total += n
				fmt.Fprintf(w, "──── message %d · %s · %d tokens ────\n%s\n\n", i+1, p.role, n, termtext.Strip(p.text))
			}
			toolTokens := tokens.Count(string(defsJSON))
			fmt.Fprintf(w, "──── %d tools offered (role %s) · %d tokens ────\n", len(defs), role, toolTokens)
			for _, d := range defs {
				fmt.Fprintf(w, "  %s\n", d.Name)
			}
			fmt.Fprintf(w, "\nTotal: about %d prompt tokens (o200k tokenizer).\n", total+toolTokens)
			return nil
		},
	}
	cmd.Flags().StringVarP(&graph, "graph", "g", "", "graph key")
	return cmd
}

// policyAllows turns the configured approval policy into the tool filter.
func policyAllows(cfg *config.Config) func(datasource.ActionType) bool {
	return func(t datasource.ActionType) bool {
		return cfg == nil || cfg.Policy[t] != config.PolicyDeny
	}
}

func newInspectToolsCmd(f *Factory) *cobra.Command {
	var role string
	cmd := &cobra.Command{
		Use:   "tools [--role viewer|editor|admin]",
		Short: "Print the tool definitions as sent to the model (JSON)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := f.Config()
			if err != nil {
				return err
			}
			if role == "" {
				role = cfg.Role
			}
			switch role {
			case "viewer", "editor", "admin":
			default:
				return usageError("--role must be viewer, editor or admin (got %q)", role)
			}
			type fn struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			}
			type tool struct {
				Type     string `json:"type"`
				Function fn     `json:"function"`
			}
			var out []tool
			for _, d := range tools.ToolDefs(role, policyAllows(cfg)) {
				out = append(out, tool{Type: "function", Function: fn{d.Name, d.Description, d.Parameters}})
			}
			return writeJSONIndent(f.IO.Out, out)
		},
	}
	cmd.Flags().StringVar(&role, "role", "", "role whose tools to show (default: the configured role)")
	return cmd
}

func newInspectToonCmd(f *Factory) *cobra.Command {
	var delim string
	var indent int
	cmd := &cobra.Command{
		Use:   "toon [--delimiter ,|tab|pipe] [--indent N] < doc.json",
		Short: "Encode the JSON document on stdin as TOON",
		Long:  "Reads one JSON document on standard input and writes it as TOON (spec v4), byte for byte what the reference encoder writes.",
		Example: `  echo '{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}]}' | nodius-ai inspect toon
  nodius-ai inspect toon --delimiter tab < graph.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := toon.Options{Indent: indent}
			switch delim {
			case ",", "comma", "":
				opts.Delimiter = ','
			case "tab", "\t", `\t`:
				opts.Delimiter = '\t'
			case "pipe", "|":
				opts.Delimiter = '|'
			default:
				return usageError("--delimiter must be , tab or pipe (got %q)", delim)
			}
			if indent < 1 || indent > 16 {
				return usageError("--indent must be between 1 and 16 (got %s)", strconv.Itoa(indent))
			}
			data, err := io.ReadAll(io.LimitReader(f.IO.In, 256<<20))
			if err != nil {
				return fmt.Errorf("reading stdin: %w", err)
			}
			v, err := toon.ParseJSON(data)
			if err != nil {
				return usageError("stdin is not valid JSON: %v", err)
			}
			out := toon.Encode(v, opts)
			if out != "" {
				out += "\n"
			}
			_, err = io.WriteString(f.IO.Out, out)
			return err
		},
	}
	cmd.Flags().StringVar(&delim, "delimiter", ",", "array delimiter: , (comma), tab or pipe")
	cmd.Flags().IntVar(&indent, "indent", 2, "spaces per indentation level")
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func writeJSONIndent(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
