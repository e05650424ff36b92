package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/graphdraw"
	"github.com/nodius/nodius-ai/internal/graphpic"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// maxDrawnNodes bounds a whole-sheet drawing: past it a picture is no longer read,
// and --around is the way in.
const maxDrawnNodes = 150

// minDrawWidth is the narrowest --width accepted (a box and an arrow).
const minDrawWidth = 20

func newInspectGraphCmd(f *Factory) *cobra.Command {
	var graph, around string
	var depth, width int
	var ascii bool
	cmd := &cobra.Command{
		Use:   "graph --graph KEY [--around NODE] [--depth N] [--width N]",
		Short: "Draw the graph, or the neighbourhood of a node, in the terminal",
		Long: `Draws a graph as boxes and arrows, left to right in the order its steps run.
Each box shows a node's key, its type and a short label; edges show their labels.
Without --around every sheet is drawn; with it, the nodes within --depth hops of
NODE (drawn with a heavy border). The drawing fits the terminal (or --width):
narrower, it shows fewer details, and as a last resort becomes a list.

Colour on a terminal, none when piped or NO_COLOR is set. Piped output keeps the
box-drawing characters (files, less and grep read UTF-8); ASCII (+-|>) comes with
--ascii, a locale that is not UTF-8 (LC_ALL, LC_CTYPE or LANG, e.g. LANG=C) or
TERM=dumb.`,
		Example: `  nodius-ai inspect graph --graph demo
  nodius-ai inspect graph --graph demo --around fetch-api --depth 1
  nodius-ai inspect graph --graph demo --width 60 | less`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if depth < 0 || depth > graphpic.MaxDepth {
				return usageError("--depth must be between 0 and %d (got %d)", graphpic.MaxDepth, depth)
			}
			if width < 0 || (width > 0 && width < minDrawWidth) {
				return usageError("--width must be at least %d columns, or 0 for no limit (got %d)", minDrawWidth, width)
			}
			if !cmd.Flags().Changed("width") {
				width = outputWidth(f.IO)
			}
			src, err := f.Source(ctx)
			if err != nil {
				return err
			}
			cfg, _ := f.Config()
			if graph == "" {
				if graph = defaultGraph(ctx, cfg, src); graph == "" {
					return usageError("no graph given: pass --graph KEY")
				}
			}
			g, err := src.Graph(ctx, graph)
			if err != nil {
				if errors.Is(err, datasource.ErrNotFound) {
					return usageError("graph %q not found in this source; pick one the source holds with --graph KEY", termtext.OneLine(graph))
				}
				return err
			}
			opts := graphdraw.Options{Width: width, Color: f.IO.ColorEnabled(), ASCII: ascii || !utf8Locale(f.IO.Getenv)}
			w := f.IO.Out
			if around != "" {
				pic, err := graphpic.Around(ctx, src, graph, around, depth)
				if err != nil {
					if errors.Is(err, datasource.ErrNotFound) {
						return usageError("node %q not found in graph %q; `nodius-ai inspect graph --graph %s` draws all its nodes",
							termtext.OneLine(around), termtext.OneLine(graph), termtext.OneLine(graph))
					}
					return err
				}
				fmt.Fprintf(w, "%s, around %s, depth %d\n\n", termtext.OneLine(graphTitle(g, opts.ASCII)), termtext.OneLine(around), depth)
				_, err = io.WriteString(w, graphdraw.Draw(pic, opts))
				return err
			}
			sheets, err := graphpic.Sheets(ctx, src, graph)
			if err != nil {
				return err
			}
			for _, s := range sheets {
				if n := len(s.Graph.Nodes); n > maxDrawnNodes {
					return usageError("sheet %q of graph %q has %d nodes, too many to draw at once; draw a part with --around NODE [--depth N]",
						s.Name, termtext.OneLine(graph), n)
				}
			}
			fmt.Fprintf(w, "%s\n", termtext.OneLine(graphTitle(g, opts.ASCII)))
			if len(sheets) == 0 {
				fmt.Fprintln(w, "\n(no nodes)")
			}
			for _, s := range sheets {
				fmt.Fprintf(w, "\nsheet %s (%s)\n\n", s.Name, s.ID)
				if _, err := io.WriteString(w, graphdraw.Draw(s.Graph, opts)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&graph, "graph", "", "graph key (default: the only graph of the source)")
	cmd.Flags().StringVar(&around, "around", "", "draw only the neighbourhood of this node")
	cmd.Flags().IntVar(&depth, "depth", 2, "with --around: how many hops to follow, either way")
	cmd.Flags().IntVar(&width, "width", 0, "columns available (default: the terminal's width; no limit when piped)")
	cmd.Flags().BoolVar(&ascii, "ascii", false, "draw with ASCII characters only")
	return cmd
}

// graphTitle is the heading line: key and name.
func graphTitle(g datasource.Graph, ascii bool) string {
	if g.Name != "" && g.Name != g.Key {
		if ascii {
			return g.Key + " - " + g.Name
		}
		return g.Key + " · " + g.Name
	}
	return g.Key
}

// outputWidth is how wide a drawing may be: $COLUMNS, else the terminal's width,
// else no limit (a pipe or a file has no width).
func outputWidth(ios *IOStreams) int {
	if n, err := strconv.Atoi(ios.Getenv("COLUMNS")); err == nil && n > 0 {
		return max(n, minDrawWidth)
	}
	if !ios.OutTTY {
		return 0
	}
	if w, _ := ios.Size(); w > 0 {
		return max(w, minDrawWidth)
	}
	return 80
}

// utf8Locale reports whether the locale lets box-drawing characters through: the
// first of LC_ALL, LC_CTYPE, LANG that is set names UTF-8 (unset: assume it does).
func utf8Locale(getenv func(string) string) bool {
	if getenv("TERM") == "dumb" {
		return false
	}
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			v = strings.ToLower(v)
			return strings.Contains(v, "utf-8") || strings.Contains(v, "utf8")
		}
	}
	return true
}
