package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/mcpserver"
)

// mcpOptions are the flags of `nodius-ai mcp`.
type mcpOptions struct {
	Graph string
	HTTP  string
	Token string
}

func newMCPCmd(f *Factory) *cobra.Command {
	o := &mcpOptions{}
	cmd := &cobra.Command{
		Use:   "mcp [--graph KEY] [--http 127.0.0.1:PORT [--token T]]",
		Short: "Serve a graph to other agents over the Model Context Protocol (stdio by default)",
		Long: `Serve a Nodius graph to an agent that speaks the Model Context Protocol (an editor's
or a terminal's assistant): the read tools, graph_context (the retrieval context
nodius-ai's own assistant gets for a question) and, for an editor or admin, the
propose_* tools; the graphs and their nodes as JSON resources.

A proposal never changes the graph by itself: it waits in a nodius-ai thread (one per
client session, titled with the client's name) until you approve or reject it with
'nodius-ai approve THREAD' / 'reject THREAD' or in 'nodius-ai chat'; only the kinds
of change your policy sets to auto are applied at once. --role viewer offers no
write tools.

By default the server speaks MCP on stdin/stdout, for a client that starts it. With
--http it serves streamable HTTP at http://ADDR/mcp on a loopback address only, and
every request must carry 'Authorization: Bearer TOKEN': the token of --token (or
NODIUS_AI_MCP_TOKEN), else one generated and printed on stderr. In this command
--token is that bearer token; a server: source takes its JWT from NODIUS_AI_TOKEN or
the config file.`,
		Example: `  nodius-ai mcp --graph demo
  nodius-ai mcp --source file:./orders.json --role viewer
  nodius-ai mcp --source file:./orders.json --http 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Token == "" {
				o.Token = f.IO.Getenv("NODIUS_AI_MCP_TOKEN")
			}
			if o.HTTP == "" && cmd.Flags().Changed("token") {
				return usageError("--token goes with --http: over stdio only the client that started nodius-ai talks to it")
			}
			if o.HTTP != "" {
				if err := mcpserver.CheckLoopback(o.HTTP); err != nil {
					return usageError("%s", err.Error())
				}
			}
			return runMCP(cmd.Context(), f, *o)
		},
	}
	cmd.Flags().StringVarP(&o.Graph, "graph", "g", "", "graph the tools work on (default: the source's only graph)")
	cmd.Flags().StringVar(&o.HTTP, "http", "", "serve streamable HTTP on this loopback address (127.0.0.1:PORT) instead of stdio")
	cmd.Flags().StringVar(&o.Token, "token", "", "bearer token HTTP clients must send (default: NODIUS_AI_MCP_TOKEN, else generated and printed)")
	return cmd
}

// runMCP wires the runtime into an MCP server and serves it until the client hangs
// up (stdio) or the process is interrupted (HTTP).
func runMCP(ctx context.Context, f *Factory, o mcpOptions) error {
	f.localAgent() // the tools are nodius-ai's, on the login's server when it is the default
	rt, err := f.Runtime(ctx)
	if err != nil {
		return err
	}
	graph := o.Graph
	if graph == "" {
		graph = rt.DefaultGraph
	}
	if graph == "" {
		return usageError("this source holds several graphs: pass --graph KEY")
	}
	if _, err := rt.Source.Graph(ctx, graph); err != nil && !tools.IsHome(graph) {
		return err // a wrong --graph becomes a usage error listing the graphs, in Execute
	}
	graphs := graphKeys(ctx, rt.Source)
	srv, err := mcpserver.New(ctx, mcpserver.Options{
		Agent: rt.Agent, Source: rt.Source, Retriever: rt.Retriever, Proposals: rt.Store,
		Graph: graph, Graphs: graphs,
		DecideFlags: decideFlags(rt, config.DefaultDBPath(f.IO.Getenv)), SourceNote: sourceNote(rt),
		Version: version, Logger: rt.Logger,
	})
	if err != nil {
		return err
	}
	rt.Logger.Info("mcp server", "graph", graph, "role", rt.Config.Role, "http", o.HTTP != "")
	if f.IO.Getenv("GOGC") == "" {
		// Nearly all a call allocates is the SDK's transient JSON, and the live heap is
		// one graph: collecting at 5x the live heap instead of 2x takes a quarter to a
		// third off the server's CPU per call (BenchmarkStdioReadNodeDetail, server
		// CPU with GOGC=100 set or not) for a few MB of memory.
		debug.SetGCPercent(400)
	}
	if o.HTTP == "" {
		if f.IO.InTTY {
			fmt.Fprintln(f.IO.ErrOut, "nodius-ai: serving MCP on stdin/stdout for an MCP client to start (see 'nodius-ai mcp --help'); Ctrl-D ends it")
		}
		t := mcpserver.StdioTransport(f.IO.In, f.IO.Out) // a malformed message is answered, not fatal
		if err := srv.Run(ctx, t); err != nil && ctx.Err() == nil && !isClosed(err) {
			return fmt.Errorf("mcp over stdio: %w", err)
		}
		return nil
	}
	return serveMCPHTTP(ctx, f, srv, o)
}

// serveMCPHTTP serves streamable HTTP on the loopback address until ctx ends.
func serveMCPHTTP(ctx context.Context, f *Factory, srv *mcpserver.Server, o mcpOptions) error {
	token, generated := o.Token, false
	if token == "" {
		t, err := mcpserver.NewToken()
		if err != nil {
			return err
		}
		token, generated = t, true
	}
	ln, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w — pick another port", o.HTTP, err)
	}
	hs := &http.Server{Handler: mcpserver.RequireBearer(token, srv.Handler()), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(f.IO.ErrOut, "nodius-ai: serving MCP at http://%s/mcp (Ctrl-C ends it)\n", ln.Addr())
	if generated {
		fmt.Fprintf(f.IO.ErrOut, "nodius-ai: bearer token: %s\n", token)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go srv.Watch(wctx)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mcp over http: %w", err)
	case <-ctx.Done():
	}
	sctx, scancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer scancel()
	_ = hs.Shutdown(sctx)
	return nil
}

// decideFlags are the flags `approve` and `reject` need to reach the threads and the
// graph this server uses, as a person would type them: the file of a file: source
// and the database when one was chosen. Other sources are named by the same
// environment or config the person set for this server (their URLs may hold
// credentials, never shown).
func decideFlags(rt *Runtime, defaultDB string) string {
	var b strings.Builder
	if p, ok := strings.CutPrefix(rt.Config.Source, "file:"); ok {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		b.WriteString(" --source " + shellQuote("file:"+p))
	}
	if rt.Config.DB != "" && rt.Config.DB != defaultDB {
		db := rt.Config.DB
		if abs, err := filepath.Abs(db); err == nil {
			db = abs
		}
		b.WriteString(" --db " + shellQuote(db))
	}
	return b.String()
}

// sourceNote warns when approvals from another process cannot reach this server's
// graph: the demo graph lives in this process's memory.
func sourceNote(rt *Runtime) string {
	if rt.Config.Source == "" || rt.Config.Source == "demo" {
		return "Note: this server serves the embedded demo graph, which lives in its memory: an approval made in another process changes that process's copy, not this one — serve a file:PATH source to decide from the command line."
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isClosed tells the end of a session (the client closed stdin) from a failure.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) || strings.Contains(err.Error(), "closed")
}
