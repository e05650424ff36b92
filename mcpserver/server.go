// Package mcpserver serves Nodius graphs to other agents over the Model Context
// Protocol (the official Go SDK, github.com/modelcontextprotocol/go-sdk), keeping
// retrieval and human approval in nodius-ai's hands.
//
// A client gets the tools the built-in assistant gets — the seven read tools with
// their strict schemas and validation (agent/tools), graph_context (the retrieval
// context the assistant sees for a question, as TOON), and for an editor or admin
// the propose_* tools — and the graphs of the source as JSON resources. A proposal
// never changes the graph by itself: the agent stores it as the pending proposal of a
// nodius-ai thread (one per client session), where a person approves or rejects it
// (nodius-ai approve, the TUI); only the action types the person set to "auto" are
// applied at once, through the agent's own apply path. When an approval changes a
// graph, subscribed clients get a resource-updated notification.
//
// Every mistake a client can make is answered as a tool error with one sentence;
// graph content travels as data (JSON and TOON escape control characters), never
// printed to a terminal.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent"
	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/threads"
)

// Retriever finds the part of a graph relevant to a question (rag.Retriever).
type Retriever interface {
	RetrieveRequest(ctx context.Context, req rag.Request) (*rag.Context, error)
}

// Proposals is what the server reads of the thread store to learn that a proposal it
// stored was decided elsewhere (threads.Store).
type Proposals interface {
	Transcript(ctx context.Context, id string) (threads.Transcript, error)
}

// Options wire a Server.
type Options struct {
	Agent     *agent.Agent // offers the tools, stores and applies proposals
	Source    datasource.Source
	Retriever Retriever
	Proposals Proposals

	// Graph is the graph the tools work on; Graphs are the graphs offered as
	// resources (Graph is added when missing; at most MaxGraphs are kept).
	Graph  string
	Graphs []string

	// DecideFlags are appended to the approve and reject commands a proposal's
	// result shows (say " --source file:/abs/graph.json"), so that they reach the
	// same threads and graph as this server.
	DecideFlags string
	// SourceNote, when set, is added to every proposal's result: what the person
	// deciding must know about the source (the demo graph lives in this process).
	SourceNote string

	// MaxResourceBytes bounds one resource read (default DefaultMaxResourceBytes):
	// a larger graph is read by pages or by node.
	MaxResourceBytes int

	Version string // the server's version, sent to clients
	Logger  *slog.Logger
	// Poll is how often the server looks for decisions and graph changes made by
	// other processes (default 1s).
	Poll time.Duration
}

// MaxGraphs bounds the graphs a server offers as resources: a workspace may hold
// many, and each is read at start.
const MaxGraphs = 100

// Server is one MCP server over one graph source. It serves any number of sessions
// (one over stdio, several over HTTP); each session gets its own thread for its
// proposals, created at its first proposal.
type Server struct {
	opt  Options
	log  *slog.Logger
	mcp  *mcp.Server
	exec *tools.Executor

	// proposeMu serialises proposals: a thread holds one pending proposal at a time,
	// and two calls of one session must not both see none.
	proposeMu sync.Mutex
	mu        sync.Mutex
	threads   map[string]string // session key -> thread id

	listMu sync.Mutex
	listed map[string]map[string]bool // graph -> node URIs listed as resources

	watch watcher

	// graphReads holds a token while a graph resource (whole or a page) is read.
	graphReads chan struct{}
}

// New builds the server: tools from the agent (by role and policy), graph_context,
// the graph and node resources.
func New(ctx context.Context, o Options) (*Server, error) {
	if o.Agent == nil || o.Source == nil || o.Retriever == nil || o.Proposals == nil {
		return nil, fmt.Errorf("mcpserver: Agent, Source, Retriever and Proposals are required")
	}
	if o.Graph == "" {
		return nil, &fault.Error{Code: fault.Config, Message: "no graph given — pass --graph KEY"}
	}
	graphs := []string{o.Graph}
	if tools.IsHome(o.Graph) {
		graphs = nil // home mode is no graph: the source's graphs are the resources
	}
	for _, g := range o.Graphs {
		if g != o.Graph && len(graphs) < MaxGraphs {
			graphs = append(graphs, g)
		}
	}
	o.Graphs = graphs
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{opt: o, log: o.Logger, exec: tools.NewExecutor(o.Source, o.Graph), threads: map[string]string{},
		graphReads: make(chan struct{}, 1)}
	s.watch.init(s)
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "nodius-ai", Title: "Nodius graphs (nodius-ai)", Version: o.Version},
		&mcp.ServerOptions{
			Instructions:       s.instructions(),
			Logger:             o.Logger,
			SubscribeHandler:   s.watch.subscribe,
			UnsubscribeHandler: s.watch.unsubscribe,
			Capabilities:       &mcp.ServerCapabilities{}, // no logging capability: we send no log messages
		})
	s.addTools()
	if err := s.addResources(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// MCP returns the SDK server, to connect transports to (tests use in-memory ones).
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Run serves one session over t (stdio) until the client hangs up or ctx ends,
// watching meanwhile for decisions and changes made elsewhere.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	return s.mcp.Run(ctx, t)
}

// Watch polls for decisions and graph changes made by other processes and tells
// subscribed clients, until ctx ends.
func (s *Server) Watch(ctx context.Context) {
	t := time.NewTicker(s.opt.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.watch.check(ctx)
		}
	}
}

// Handler serves streamable HTTP at /mcp, for any number of sessions. It does no
// authentication: wrap it in RequireBearer.
func (s *Server) Handler() http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Logger: s.log})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	return mux
}

func (s *Server) instructions() string {
	var b strings.Builder
	if tools.IsHome(s.opt.Graph) {
		b.WriteString("nodius-ai serves the user's Nodius graphs in home mode (no graph open): list_user_graphs, list_user_html_classes and list_node_configs read them; ")
		b.WriteString("propose_create_graph and propose_create_html_class propose a new one, which waits in a nodius-ai thread for the user's decision (nodius-ai approve / reject). ")
		b.WriteString("The graphs are also resources (nodius://graph/KEY, JSON).")
		return b.String()
	}
	fmt.Fprintf(&b, "nodius-ai serves the Nodius workflow graph %q. ", s.opt.Graph)
	b.WriteString("Use graph_context with the user's question first: it returns the relevant nodes, edges and node types as TOON, exactly as nodius-ai's own assistant sees them. ")
	b.WriteString("Then read precisely with the read tools (search_nodes, read_node_detail, explore_neighborhood, list_node_edges, ...). ")
	if hasWriteTools(s.opt.Agent.Tools()) {
		b.WriteString("The propose_* tools never change the graph by themselves: each proposal waits in a nodius-ai thread for the user's decision (nodius-ai approve / reject, or the nodius-ai TUI), unless the user set that kind of change to auto-approve. ")
	} else {
		b.WriteString("This server is read-only: the user's role offers no write tools. ")
	}
	b.WriteString("The graphs are also resources (nodius://graph/KEY and nodius://graph/KEY/node/NODE, JSON; a graph too large to read whole is read by pages, nodius://graph/KEY/page/N).")
	return b.String()
}

func hasWriteTools(defs []convo.ToolDef) bool {
	for _, d := range defs {
		if tools.IsWriteTool(d.Name) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
