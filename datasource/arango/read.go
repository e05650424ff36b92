package arango

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/search"
)

// MaxDepth bounds traversals: the graph is walked at most this many hops.
const MaxDepth = 10

// Graph reads a graph's metadata; a graph of another workspace is not found.
func (s *Source) Graph(ctx context.Context, graphKey string) (datasource.Graph, error) {
	docs, err := queryAll[json.RawMessage](ctx, s, qGraph, map[string]any{"key": graphKey, "ws": s.cfg.Workspace})
	if err != nil {
		return datasource.Graph{}, s.classify(err, "read graph "+graphKey)
	}
	if len(docs) == 0 {
		return datasource.Graph{}, &datasource.NotFoundError{Kind: "graph", Key: graphKey}
	}
	g, err := decodeGraph(docs[0])
	if err == nil {
		s.checkedMu.Lock()
		if s.checked == nil {
			s.checked = map[string]checkedGraph{}
		}
		s.checked[graphKey] = checkedGraph{at: time.Now(), graph: g}
		s.checkedMu.Unlock()
	}
	return g, err
}

// checkedGraph is a graph document that passed the workspace check, and when.
type checkedGraph struct {
	at    time.Time
	graph datasource.Graph
}

// checkFresh is how long a passed workspace check is trusted by reads: long enough
// for the reads of one question, short enough that a graph moved to another
// workspace is not found again within seconds. Writes always check.
const checkFresh = 2 * time.Second

// checkRead is the workspace check of a read: the graph query, unless the graph
// passed it less than checkFresh ago.
func (s *Source) checkRead(ctx context.Context, graphKey string) error {
	_, err := s.graphFresh(ctx, graphKey)
	return err
}

// graphFresh is the graph document as the workspace check read it, read again
// when that was checkFresh ago or more.
func (s *Source) graphFresh(ctx context.Context, graphKey string) (datasource.Graph, error) {
	s.checkedMu.Lock()
	c, ok := s.checked[graphKey]
	s.checkedMu.Unlock()
	if ok && time.Since(c.at) < checkFresh {
		return c.graph, nil
	}
	return s.Graph(ctx, graphKey)
}

// Nodes lists a graph's nodes (of one sheet when sheet is not empty).
func (s *Source) Nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	return s.nodes(ctx, graphKey, sheet)
}

// nodes reads nodes without the workspace check (the caller has made it).
func (s *Source) nodes(ctx context.Context, graphKey, sheet string) ([]datasource.Node, error) {
	return s.nodesOn(ctx, s.db, graphKey, sheet)
}

// nodesOn is nodes read on db (see queryOn).
func (s *Source) nodesOn(ctx context.Context, db arangodb.DatabaseQuery, graphKey, sheet string) ([]datasource.Node, error) {
	q, bind := qNodes, map[string]any{"gk": graphKey}
	if sheet != "" {
		q, bind["sheet"] = qNodesSheet, sheet
	}
	out := []datasource.Node{}
	err := s.queryOn(ctx, db, q, bind, func(raw json.RawMessage) error {
		n, err := decodeNode(graphKey, raw)
		if err != nil {
			return err
		}
		out = append(out, n)
		return nil
	})
	if err != nil {
		return nil, s.classify(err, "read the nodes of graph "+graphKey)
	}
	return out, nil
}

// Edges lists a graph's edges (of one sheet when sheet is not empty).
func (s *Source) Edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	return s.edges(ctx, graphKey, sheet)
}

func (s *Source) edges(ctx context.Context, graphKey, sheet string) ([]datasource.Edge, error) {
	return s.edgesOn(ctx, s.db, graphKey, sheet)
}

// edgesOn is edges read on db (see queryOn).
func (s *Source) edgesOn(ctx context.Context, db arangodb.DatabaseQuery, graphKey, sheet string) ([]datasource.Edge, error) {
	q, bind := qEdges, map[string]any{"gk": graphKey}
	if sheet != "" {
		q, bind["sheet"] = qEdgesSheet, sheet
	}
	out := []datasource.Edge{}
	err := s.queryOn(ctx, db, q, bind, func(raw json.RawMessage) error {
		e, err := decodeEdge(graphKey, raw)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, s.classify(err, "read the edges of graph "+graphKey)
	}
	return out, nil
}

// Node reads one node by its local key.
func (s *Source) Node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return datasource.Node{}, err
	}
	return s.node(ctx, graphKey, nodeKey)
}

func (s *Source) node(ctx context.Context, graphKey, nodeKey string) (datasource.Node, error) {
	return s.nodeOn(ctx, s.db, graphKey, nodeKey)
}

// nodeOn is node read on db (see queryOn).
func (s *Source) nodeOn(ctx context.Context, db arangodb.DatabaseQuery, graphKey, nodeKey string) (datasource.Node, error) {
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qNode, map[string]any{"key": compositeKey(graphKey, nodeKey), "gk": graphKey})
	if err != nil {
		return datasource.Node{}, s.classify(err, "read node "+nodeKey)
	}
	if len(docs) == 0 {
		return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
	}
	return decodeNode(graphKey, docs[0])
}

// Configs lists the custom node types of the graph's workspace.
func (s *Source) Configs(ctx context.Context, graphKey string) ([]datasource.NodeConfig, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	return s.configs(ctx)
}

func (s *Source) configs(ctx context.Context) ([]datasource.NodeConfig, error) {
	out := []datasource.NodeConfig{}
	err := s.query(ctx, qConfigs, map[string]any{"ws": s.cfg.Workspace}, func(raw json.RawMessage) error {
		c, err := decodeConfig(raw)
		if err != nil {
			return err
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, s.classify(err, "read the node types of workspace "+s.cfg.Workspace)
	}
	return out, nil
}

// Snapshot reads the whole graph: the workspace check once, then nodes, edges and
// configs.
func (s *Source) Snapshot(ctx context.Context, graphKey string) (datasource.Snapshot, error) {
	g, err := s.Graph(ctx, graphKey)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	nodes, err := s.nodes(ctx, graphKey, "")
	if err != nil {
		return datasource.Snapshot{}, err
	}
	edges, err := s.edges(ctx, graphKey, "")
	if err != nil {
		return datasource.Snapshot{}, err
	}
	configs, err := s.configs(ctx)
	if err != nil {
		return datasource.Snapshot{}, err
	}
	// On the real schema the code is the node type's (node.process), not the node's.
	datasource.CodeFromTypes(nodes, configs)
	return datasource.Snapshot{Graph: g, Nodes: nodes, Edges: edges, Configs: configs}, nil
}

// Search ranks nodes: by vector similarity on the server when queryEmbedding is given
// and the graph has embeddings, else (or on any vector error) by text: in ArangoDB
// when the search View is there (TextSearch), else over all the graph's nodes and
// types, read into this process.
func (s *Source) Search(ctx context.Context, graphKey, query string, limit int, queryEmbedding []float32) ([]datasource.ScoredNode, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	if len(queryEmbedding) > 0 {
		if hits, err := s.vectorSearch(ctx, graphKey, queryEmbedding, limit); err == nil && len(hits) > 0 {
			configs, err := s.configs(ctx)
			if err != nil {
				return nil, err
			}
			withTypeCode(hits, configs)
			return hits, nil
		}
	}
	if hits, err := s.textSearch(ctx, graphKey, query, limit); !errors.Is(err, datasource.ErrNoTextIndex) {
		if limit > 0 && len(hits) > limit {
			hits = hits[:limit]
		}
		return hits, err
	}
	// In process, the whole graph is read and ranked as a file: graph is, edge
	// labels and sheet names included, as the View ranks them.
	g, err := s.graphFresh(ctx, graphKey)
	if err != nil {
		return nil, err
	}
	nodes, err := s.nodes(ctx, graphKey, "")
	if err != nil {
		return nil, err
	}
	edges, err := s.edges(ctx, graphKey, "")
	if err != nil {
		return nil, err
	}
	configs, err := s.configs(ctx)
	if err != nil {
		return nil, err
	}
	datasource.CodeFromTypes(nodes, configs) // a node's code is its type's
	hits := search.NewGraph(datasource.Snapshot{Graph: g, Nodes: nodes, Edges: edges, Configs: configs}).Search(query, limit)
	out := make([]datasource.ScoredNode, 0, len(hits))
	for _, h := range hits {
		out = append(out, datasource.ScoredNode{Node: nodes[h.Index], Score: h.Score})
	}
	return out, nil
}

// Neighborhood walks edges from nodeKey, breadth first, up to depth hops (at most
// MaxDepth) in the given direction, as datasource/memgraph does: the nodes reached,
// the start first, and every edge walked, parallel edges and edges between nodes
// already reached included. Edges come in the order the walk takes them (by the
// node they are walked from, outgoing before incoming, then by key).
func (s *Source) Neighborhood(ctx context.Context, graphKey, nodeKey string, depth int, dir datasource.Direction) (datasource.Neighborhood, error) {
	start, err := s.Node(ctx, graphKey, nodeKey)
	if err != nil {
		return datasource.Neighborhood{}, err
	}
	nb := datasource.Neighborhood{Nodes: []datasource.Node{start}, Edges: []datasource.Edge{}}
	if depth <= 0 {
		return nb, nil
	}
	depth = min(depth, MaxDepth)
	var q string
	switch dir {
	case datasource.Any, "":
		q = qTraverseAny
	case datasource.Inbound:
		q = qTraverseIn
	case datasource.Outbound:
		q = qTraverseOut
	default:
		return nb, fmt.Errorf("unknown direction %q", dir)
	}
	// The traversal returns each vertex once (uniqueVertices "global") and each edge
	// once (one pass over the edge collection): nothing to de-duplicate.
	err = s.query(ctx, q, map[string]any{"depth": depth, "start": nodeID(graphKey, nodeKey), "gk": graphKey}, func(raw json.RawMessage) error {
		var row struct {
			Node json.RawMessage `json:"node"`
			Edge json.RawMessage `json:"edge"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return fmt.Errorf("decode traversal row: %w", err)
		}
		if len(row.Node) > 0 && string(row.Node) != "null" {
			n, err := decodeNode(graphKey, row.Node)
			if err != nil {
				return err
			}
			if n.Key != start.Key { // the start vertex is the traversal's first row
				nb.Nodes = append(nb.Nodes, n)
			}
		}
		if len(row.Edge) > 0 && string(row.Edge) != "null" {
			e, err := decodeEdge(graphKey, row.Edge)
			if err != nil {
				return err
			}
			nb.Edges = append(nb.Edges, e)
		}
		return nil
	})
	if err != nil {
		return datasource.Neighborhood{}, s.classify(err, "walk the neighbours of node "+nodeKey)
	}
	sortWalked(nb, dir)
	return nb, nil
}

// sortWalked puts the edges in the order a breadth-first walk takes them: by the
// position of the node each is walked from (the earlier end for Any), outgoing
// before incoming, then by key.
func sortWalked(nb datasource.Neighborhood, dir datasource.Direction) {
	pos := make(map[string]int, len(nb.Nodes))
	for i, n := range nb.Nodes {
		pos[n.Key] = i
	}
	at := func(key string) int {
		if i, ok := pos[key]; ok {
			return i
		}
		return len(pos)
	}
	type step struct{ from, incoming int }
	walk := func(e datasource.Edge) step {
		src, tgt := at(e.Source), at(e.Target)
		switch {
		case dir == datasource.Inbound:
			return step{tgt, 1}
		case dir == datasource.Outbound || src <= tgt:
			return step{src, 0}
		}
		return step{tgt, 1}
	}
	slices.SortStableFunc(nb.Edges, func(a, b datasource.Edge) int {
		sa, sb := walk(a), walk(b)
		return cmp.Or(cmp.Compare(sa.from, sb.from), cmp.Compare(sa.incoming, sb.incoming), strings.Compare(a.Key, b.Key))
	})
}
