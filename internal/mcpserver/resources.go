package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/datasource"
)

// Resource URIs: nodius://graph/KEY for a whole graph, nodius://graph/KEY/node/NODE
// for one node with its edges. Keys are path-escaped.
const (
	uriPrefix    = "nodius://graph/"
	nodeTemplate = "nodius://graph/{graph}/node/{node}"
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

// readResource reads a graph or a node as JSON. Only the graphs this server offers
// can be read.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	graph, node, ok := parseURI(uri)
	if !ok || !contains(s.opt.Graphs, graph) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	snap, err := datasource.LoadSnapshot(ctx, s.opt.Source, graph)
	if err != nil {
		if errors.Is(err, datasource.ErrNotFound) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		return nil, fmt.Errorf("reading graph %s: %s", graph, errorSentence(ctx, err))
	}
	for i := range snap.Nodes {
		snap.Nodes[i].Embedding = nil // vectors: big, and of no use to a reader
	}
	var body []byte
	if node == "" {
		body, err = json.Marshal(datasource.DocumentFromSnapshot(snap, nil))
	} else {
		body, err = nodeJSON(snap, graph, node)
		if errors.Is(err, datasource.ErrNotFound) {
			return nil, mcp.ResourceNotFoundError(uri)
		}
	}
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: jsonMIME, Text: string(body)}}}, nil
}

// nodeJSON is one node with the edges that touch it: {"graph","node","edges"}.
func nodeJSON(snap datasource.Snapshot, graph, key string) ([]byte, error) {
	for _, n := range snap.Nodes {
		if n.Key != key {
			continue
		}
		edges := []datasource.Edge{}
		for _, e := range snap.Edges {
			if e.Source == key || e.Target == key {
				edges = append(edges, e)
			}
		}
		return json.Marshal(struct {
			Graph string            `json:"graph"`
			Node  datasource.Node   `json:"node"`
			Edges []datasource.Edge `json:"edges"`
		}{graph, n, edges})
	}
	return nil, &datasource.NotFoundError{Kind: "node", Key: key}
}
