// Package graphpic makes terminal pictures of Nodius graphs: a whole sheet, the
// neighbourhood of a node, and a proposed change as the neighbourhood before and
// after it. It turns datasource values into graphdraw's boxes and lines (text
// stripped of terminal control sequences) and leaves layout and drawing to
// graphdraw. The CLI (`inspect graph`, `threads show --pictures`) and the TUI's
// proposal dialog call it.
package graphpic

import (
	"context"
	"fmt"
	"sort"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/graphdraw"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// MaxDepth bounds how many hops a neighbourhood picture walks.
const MaxDepth = 6

// Convert turns nodes and edges into a drawable graph. Edges whose ends are not
// among nodes are left out (a neighbourhood's rim).
func Convert(nodes []datasource.Node, edges []datasource.Edge) graphdraw.Graph {
	g := graphdraw.Graph{Nodes: make([]graphdraw.Node, 0, len(nodes))}
	have := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		have[n.Key] = true
		g.Nodes = append(g.Nodes, drawNode(n))
	}
	for _, e := range edges {
		if have[e.Source] && have[e.Target] {
			g.Edges = append(g.Edges, drawEdge(e))
		}
	}
	return g
}

func drawNode(n datasource.Node) graphdraw.Node {
	return graphdraw.Node{
		Key:   termtext.OneLine(n.Key),
		Type:  termtext.OneLine(n.Type),
		Label: termtext.OneLine(label(n)),
	}
}

func drawEdge(e datasource.Edge) graphdraw.Edge {
	return graphdraw.Edge{
		From:  termtext.OneLine(e.Source),
		To:    termtext.OneLine(e.Target),
		Label: termtext.OneLine(e.Label),
	}
}

// label is a node's short name, when its data has one: label, title, name or
// description, the first that is a non-empty string.
func label(n datasource.Node) string {
	m, ok := n.Data.(map[string]any)
	if !ok {
		return ""
	}
	for _, k := range []string{"label", "title", "name", "description"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// Sheet is the drawable graph of one sheet.
type Sheet struct {
	ID, Name string
	Graph    graphdraw.Graph
}

// Sheets returns the whole graph, one drawable graph per sheet in sheet id order
// (sheets without nodes left out).
func Sheets(ctx context.Context, src datasource.Source, graphKey string) ([]Sheet, error) {
	snap, err := datasource.LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return nil, err
	}
	bySheet := map[string][]datasource.Node{}
	for _, n := range snap.Nodes {
		bySheet[n.Sheet] = append(bySheet[n.Sheet], n)
	}
	ids := make([]string, 0, len(bySheet))
	for id := range bySheet {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Sheet, 0, len(ids))
	for _, id := range ids {
		out = append(out, Sheet{
			ID: termtext.OneLine(id), Name: termtext.OneLine(snap.Graph.SheetName(id)),
			Graph: Convert(bySheet[id], snap.Edges),
		})
	}
	return out, nil
}

// Around returns the nodes within depth hops of nodeKey (edges followed either
// way), the node itself drawn as the focus. An unknown node gives an error wrapping
// datasource.ErrNotFound.
func Around(ctx context.Context, src datasource.Source, graphKey, nodeKey string, depth int) (graphdraw.Graph, error) {
	if depth < 0 || depth > MaxDepth {
		return graphdraw.Graph{}, fmt.Errorf("depth must be between 0 and %d (got %d)", MaxDepth, depth)
	}
	nb, err := src.Neighborhood(ctx, graphKey, nodeKey, depth, datasource.Any)
	if err != nil {
		return graphdraw.Graph{}, err
	}
	// A walk of depth hops does not follow the edges between two nodes on its rim;
	// one more hop does, and Convert drops the nodes beyond.
	edges := nb.Edges
	if wider, err := src.Neighborhood(ctx, graphKey, nodeKey, depth+1, datasource.Any); err == nil {
		edges = wider.Edges
	}
	g := Convert(nb.Nodes, edges)
	focus := termtext.OneLine(nodeKey)
	for i := range g.Nodes {
		if g.Nodes[i].Key == focus {
			g.Nodes[i].Focus = true
		}
	}
	return g, nil
}
