package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/datasource"
)

// Resource URIs: nodius://graph/KEY for a whole graph, nodius://graph/KEY/node/NODE
// for one node with its edges. Keys are path-escaped.
const (
	uriPrefix    = "nodius://graph/"
	nodeTemplate = "nodius://graph/{graph}/node/{node}"
	pageTemplate = "nodius://graph/{graph}/page/{page}"
	jsonMIME     = "application/json"
)

// GraphURI is the resource URI of a graph.
func GraphURI(graph string) string { return uriPrefix + url.PathEscape(graph) }

// NodeURI is the resource URI of one node of a graph.
func NodeURI(graph, node string) string { return GraphURI(graph) + "/node/" + url.PathEscape(node) }

// parseURI splits a resource URI into its graph and node keys (node empty for a graph).
func parseURI(uri string) (graph, node string, ok bool) {
	rest, found := strings.CutPrefix(uri, uriPrefix)
	if !found || rest == "" {
		return "", "", false
	}
	g, n, hasNode := strings.Cut(rest, "/node/")
	var err error
	if graph, err = url.PathUnescape(g); err != nil || graph == "" || strings.Contains(g, "/") {
		return "", "", false
	}
	if !hasNode {
		return graph, "", true
	}
	if node, err = url.PathUnescape(n); err != nil || node == "" || strings.Contains(n, "/") {
		return "", "", false
	}
	return graph, node, true
}

// addResources registers every graph offered, the node template, and the nodes of
// the graph the tools work on (kept in step with it by syncNodes); the nodes of the
// other graphs are read through the template.
func (s *Server) addResources(ctx context.Context) error {
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: nodeTemplate, Name: "node", Title: "A node of a Nodius graph",
		Description: "One node (type, sheet, position, handles, process code, data) with the edges that touch it, as JSON.",
		MIMEType:    jsonMIME}, s.readResource)
	s.mcp.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: pageTemplate, Name: "graph page", Title: "A page of a Nodius graph",
		Description: fmt.Sprintf("Page N (from 1) of a graph: %d nodes, the edges that leave them and the node types, with page and pages, as JSON — for a graph too large to read whole.", PageNodes),
		MIMEType:    jsonMIME}, s.readResource)
	for _, g := range s.opt.Graphs {
		info, err := s.opt.Source.Graph(ctx, g)
		if err != nil {
			if errors.Is(err, datasource.ErrNotFound) {
				return &notFoundGraph{g}
			}
			return err
		}
		desc := info.Description
		if desc == "" {
			desc = "Nodius workflow graph " + g
		}
		s.mcp.AddResource(&mcp.Resource{URI: GraphURI(g), Name: g, Title: info.Name, Description: desc + " — the whole graph (nodes, edges, node types) as JSON, in the graph file format.",
			MIMEType: jsonMIME}, s.readResource)
	}
	if tools.IsHome(s.opt.Graph) {
		return nil // no graph open: no node resources
	}
	return s.syncNodes(ctx, s.opt.Graph)
}

type notFoundGraph struct{ key string }

func (e *notFoundGraph) Error() string { return "graph not found: " + e.key }
func (e *notFoundGraph) Unwrap() error { return datasource.ErrNotFound }

// syncNodes makes the listed node resources of graph match its nodes: new nodes are
// added, deleted ones removed (clients get resources/list_changed).
func (s *Server) syncNodes(ctx context.Context, graph string) error {
	nodes, err := s.opt.Source.Nodes(ctx, graph, "")
	if err != nil {
		return err
	}
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if s.listed == nil {
		s.listed = map[string]map[string]bool{}
	}
	old := s.listed[graph]
	now := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		uri := NodeURI(graph, n.Key)
		now[uri] = true
		if old[uri] {
			continue
		}
		s.mcp.AddResource(&mcp.Resource{URI: uri, Name: n.Key, Title: n.Key + " (" + n.Type + ")",
			Description: fmt.Sprintf("Node %s of graph %s, type %s, sheet %s, with its edges, as JSON.", n.Key, graph, n.Type, n.Sheet),
			MIMEType:    jsonMIME}, s.readResource)
	}
	var gone []string
	for uri := range old {
		if !now[uri] {
			gone = append(gone, uri)
		}
	}
	if len(gone) > 0 {
		s.mcp.RemoveResources(gone...)
	}
	s.listed[graph] = now
	return nil
}

// DefaultMaxResourceBytes bounds what one resource read returns (Options.
// MaxResourceBytes): a whole graph of 100,000 nodes is hundreds of MB of JSON, held
// several times over while the SDK wraps and sends it. A graph over the bound is read
// page by page (nodius://graph/KEY/page/N) or node by node.
const DefaultMaxResourceBytes = 8 << 20

// PageNodes is how many nodes one page of a graph resource holds.
const PageNodes = 500

// readResource reads a graph, a page of one, or a node as JSON, within the byte bound.
// Only the graphs this server offers can be read.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	graph, node, page, ok := parseResourceURI(uri)
	if !ok || !contains(s.opt.Graphs, graph) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var body []byte
	var err error
	if node != "" {
		body, err = s.nodeJSON(ctx, graph, node)
	} else {
		body, err = s.graphJSON(ctx, graph, page)
	}
	if errors.Is(err, datasource.ErrNotFound) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: jsonMIME, Text: string(body)}}}, nil
}

// parseResourceURI is parseURI, and a page: nodius://graph/KEY/page/N (N from 1).
func parseResourceURI(uri string) (graph, node string, page int, ok bool) {
	if rest, found := strings.CutPrefix(uri, uriPrefix); found {
		if g, n, paged := strings.Cut(rest, "/page/"); paged && !strings.Contains(g, "/node/") {
			p, err := strconv.Atoi(n)
			graph, err2 := url.PathUnescape(g)
			if err != nil || err2 != nil || p < 1 || graph == "" || strings.Contains(g, "/") {
				return "", "", 0, false
			}
			return graph, "", p, true
		}
	}
	graph, node, ok = parseURI(uri)
	return graph, node, 0, ok
}

// PageURI is the resource URI of page n (from 1) of a graph.
func PageURI(graph string, n int) string { return GraphURI(graph) + "/page/" + strconv.Itoa(n) }

func (s *Server) maxResourceBytes() int {
	if s.opt.MaxResourceBytes > 0 {
		return s.opt.MaxResourceBytes
	}
	return DefaultMaxResourceBytes
}

// graphJSON is the whole graph (page 0) in the graph file format, or one page of it:
// PageNodes nodes, the edges that leave them, and the node types, with "page" and
// "pages". What would pass the byte bound is refused before it is built, with the
// way to read it instead.
func (s *Server) graphJSON(ctx context.Context, graph string, page int) ([]byte, error) {
	// One graph read at a time: each holds a copy of the graph while it runs, and a
	// client may send many at once.
	select {
	case s.graphReads <- struct{}{}:
		defer func() { <-s.graphReads }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	snap, err := datasource.LoadSnapshot(ctx, s.opt.Source, graph)
	if err != nil {
		if errors.Is(err, datasource.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("reading graph %s: %s", graph, errorSentence(ctx, err))
	}
	for i := range snap.Nodes {
		snap.Nodes[i].Embedding = nil // vectors: big, and of no use to a reader
	}
	pages := max(1, (len(snap.Nodes)+PageNodes-1)/PageNodes)
	limit := s.maxResourceBytes()
	if page == 0 {
		if size, over := jsonSize(snap.Nodes, snap.Edges, limit); over {
			return nil, fmt.Errorf("graph %s is too large to read whole (%d nodes, over the %d bytes one resource read returns, %d+ bytes as JSON): read it in %d pages, %s to %s, or node by node (%s)",
				graph, len(snap.Nodes), limit, size, pages, PageURI(graph, 1), PageURI(graph, pages), NodeURI(graph, "NODE"))
		}
		return json.Marshal(datasource.DocumentFromSnapshot(snap, nil))
	}
	if page > pages {
		return nil, fmt.Errorf("graph %s has %d pages of %d nodes: there is no page %d", graph, pages, PageNodes, page)
	}
	nodes := snap.Nodes[(page-1)*PageNodes : min(page*PageNodes, len(snap.Nodes))]
	in := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		in[n.Key] = true
	}
	edges := []datasource.Edge{}
	for _, e := range snap.Edges {
		if in[e.Source] {
			edges = append(edges, e)
		}
	}
	if _, over := jsonSize(nodes, edges, limit); over {
		return nil, fmt.Errorf("page %d of graph %s is over the %d bytes one resource read returns (its nodes hold much code or data): read its nodes one by one (%s)",
			page, graph, limit, NodeURI(graph, "NODE"))
	}
	return json.Marshal(struct {
		Graph       datasource.Graph        `json:"graph"`
		Page        int                     `json:"page"`
		Pages       int                     `json:"pages"`
		Nodes       []datasource.Node       `json:"nodes"`
		Edges       []datasource.Edge       `json:"edges"`
		NodeConfigs []datasource.NodeConfig `json:"nodeConfigs"`
	}{snap.Graph, page, pages, nodes, edges, snap.Configs})
}

// jsonSize adds up the JSON of nodes and edges one at a time (never the whole in
// memory), stopping once it passes limit (over).
func jsonSize(nodes []datasource.Node, edges []datasource.Edge, limit int) (size int, over bool) {
	for _, n := range nodes {
		b, err := json.Marshal(n)
		if err != nil {
			continue
		}
		if size += len(b) + 1; size > limit {
			return size, true
		}
	}
	for _, e := range edges {
		b, err := json.Marshal(e)
		if err != nil {
			continue
		}
		if size += len(b) + 1; size > limit {
			return size, true
		}
	}
	return size, false
}

// nodeJSON is one node with the edges that touch it: {"graph","node","edges"}, read
// without loading the whole graph.
func (s *Server) nodeJSON(ctx context.Context, graph, key string) ([]byte, error) {
	n, err := s.opt.Source.Node(ctx, graph, key)
	if err != nil {
		if errors.Is(err, datasource.ErrNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("reading node %s of graph %s: %s", key, graph, errorSentence(ctx, err))
	}
	n.Embedding = nil
	all, err := s.opt.Source.Edges(ctx, graph, "")
	if err != nil {
		return nil, fmt.Errorf("reading the edges of graph %s: %s", graph, errorSentence(ctx, err))
	}
	edges := []datasource.Edge{}
	for _, e := range all {
		if e.Source == key || e.Target == key {
			edges = append(edges, e)
		}
	}
	b, err := json.Marshal(struct {
		Graph string            `json:"graph"`
		Node  datasource.Node   `json:"node"`
		Edges []datasource.Edge `json:"edges"`
	}{graph, n, edges})
	if err == nil && len(b) > s.maxResourceBytes() {
		return nil, fmt.Errorf("node %s of graph %s is over the %d bytes one resource read returns", key, graph, s.maxResourceBytes())
	}
	return b, err
}
