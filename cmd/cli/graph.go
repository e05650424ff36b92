package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/ndex"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// newGraphCmd groups the commands over graph files.
func newGraphCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Work on graph files (convert)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newGraphConvertCmd(f))
	return cmd
}

// newGraphConvertCmd converts a graph file of the earlier format, a .ndex export
// or an export's payload to a graph file in Nodius's own format. Files are never
// converted otherwise: a source writes a file back in the format it was read in.
func newGraphConvertCmd(f *Factory) *cobra.Command {
	var secret string
	var force bool
	var typeFiles []string
	cmd := &cobra.Command{
		Use:   "convert IN OUT",
		Short: "Convert a graph file, a .ndex export or its payload to a graph file in Nodius's format",
		Long: `Convert IN to a new graph file OUT in Nodius's own format (sheetsList, nodes without
code, each node type's code in its config's node.process). IN may be a graph file of
nodius-ai's earlier format (code on nodes, sheets), a Nodius export (.ndex, decrypted
with --secret, NODIUS_EXPORT_SECRET or the server's default secret) or an export's
JSON payload; OUT is writable with --source file:OUT. OUT must not exist unless
--force is given.

A graph export holds no node types: Nodius exports each type on its own, without
its key. Give those exports with --node-type KEY=FILE (the type key the graph's
nodes use, and the type's .ndex export or its JSON payload), once per type, and
OUT holds their configs and code.`,
		Example: `  nodius-ai graph convert old.json new.json
  nodius-ai graph convert team.ndex team.json --node-type api-call=api-call.ndex`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			in, out := args[0], args[1]
			if secret == "" {
				secret = f.IO.Getenv(ndex.SecretEnv)
			}
			doc, err := file.Load(cmd.Context(), in, file.Options{Secret: secret})
			if err != nil {
				if cmd.Context().Err() != nil {
					return err
				}
				return &fault.Error{Code: fault.Config, Message: err.Error(), Err: err}
			}
			if len(typeFiles) > 0 {
				if err := addTypeExports(cmd.Context(), &doc, typeFiles, secret); err != nil {
					return err
				}
			}
			from := "nodius-ai's earlier format"
			if doc.Format == datasource.FormatNodius {
				from = "Nodius's format"
			}
			conv, err := doc.ToNodius()
			if err != nil {
				return &fault.Error{Code: fault.Config, Message: fmt.Sprintf("cannot convert %s: %v", in, err), Err: err}
			}
			if err := file.Create(out, conv, force); err != nil {
				return &fault.Error{Code: fault.Config, Message: err.Error(), Err: err}
			}
			fmt.Fprintf(f.IO.Out, "%s (%s) → %s (Nodius's format): graph %q, %d nodes, %d edges, %d node types\n",
				termtext.OneLine(in), from, termtext.OneLine(out), termtext.OneLine(conv.Graph.Key), len(conv.Nodes), len(conv.Edges), len(conv.NodeConfigs))
			if n := datasource.MissingTypesNotice(conv.MissingTypes()); n != "" {
				fmt.Fprintln(f.IO.ErrOut, "nodius-ai: "+termtext.OneLine(n))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&secret, "secret", "", "the secret of a .ndex export (default: $"+ndex.SecretEnv+", else the Nodius server's default)")
	cmd.Flags().BoolVar(&force, "force", false, "replace OUT if it exists")
	cmd.Flags().StringArrayVar(&typeFiles, "node-type", nil, "`KEY=FILE`: the node type KEY of the graph's nodes is the type exported in FILE (.ndex or its payload); repeatable")
	return cmd
}

// addTypeExports reads each --node-type KEY=FILE and gives doc those types.
func addTypeExports(ctx context.Context, doc *datasource.Document, specs []string, secret string) error {
	var configs []datasource.NodeConfig
	for _, spec := range specs {
		key, path, ok := strings.Cut(spec, "=")
		if !ok || key == "" || path == "" {
			return &fault.Error{Code: fault.Config, Message: fmt.Sprintf("--node-type %q: expected KEY=FILE (the node type's key in the graph, and its export)", termtext.OneLine(spec))}
		}
		c, err := file.LoadTypeExport(ctx, path, key, secret)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return &fault.Error{Code: fault.Config, Message: err.Error(), Err: err}
		}
		configs = append(configs, c)
	}
	if err := file.AddTypes(doc, configs); err != nil {
		return &fault.Error{Code: fault.Config, Message: "--node-type: " + err.Error(), Err: err}
	}
	return nil
}
