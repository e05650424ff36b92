package graphpic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/graphdraw"
	"github.com/nodius/nodius-ai/internal/termtext"
)

// Change is a proposed action seen as pictures: the neighbourhood of what it
// touches before and after it is applied, and both in one (Unified), with created
// parts marked Added, removed parts Removed, and edited or moved nodes Changed.
type Change struct {
	Before, After, Unified graphdraw.Graph
}

// nearby is how many nodes, nearest on the canvas, are drawn beside a created node
// that the change does not connect to anything, to show where it lands.
const nearby = 3

// ProposedChange applies a to a copy of the neighbourhood (depth hops) of every
// node it touches and compares the copy with the original. The source is only
// read. An action that cannot be applied to the graph as it is now (a node that is
// gone, an edge that exists already) gives an error saying why.
func ProposedChange(ctx context.Context, src datasource.Source, graphKey string, a datasource.Action, depth int) (Change, error) {
	if depth < 0 || depth > MaxDepth {
		return Change{}, fmt.Errorf("depth must be between 0 and %d (got %d)", MaxDepth, depth)
	}
	a = lowered(a)
	g, err := src.Graph(ctx, graphKey)
	if err != nil {
		return Change{}, err
	}
	configs, err := src.Configs(ctx, graphKey)
	if err != nil {
		return Change{}, err
	}
	t := touched{nodes: map[string]bool{}}
	t.collect(a, 0)

	before := newSubgraph()
	for _, ek := range t.edgeKeys {
		if err := before.addEdgeEnds(ctx, src, graphKey, ek); err != nil {
			return Change{}, err
		}
	}
	for _, key := range t.order {
		nb, err := src.Neighborhood(ctx, graphKey, key, depth, datasource.Any)
		if errors.Is(err, datasource.ErrNotFound) {
			continue // a node the action creates, or one it names wrongly: applying says which
		}
		if err != nil {
			return Change{}, err
		}
		before.add(nb)
		if wider, err := src.Neighborhood(ctx, graphKey, key, depth+1, datasource.Any); err == nil {
			before.addEdges(wider.Edges)
		}
	}
	for _, c := range t.lone {
		before.addNearest(ctx, src, graphKey, c)
	}

	snap := datasource.Snapshot{Graph: g, Nodes: before.nodes, Configs: configs}
	for _, e := range before.edges {
		if before.has[e.Source] && before.has[e.Target] {
			snap.Edges = append(snap.Edges, e)
		}
	}
	n := 0
	store, err := memgraph.New([]datasource.Snapshot{snap}, memgraph.WithKeyGenerator(func(kind string) string {
		n++
		return "new-" + kind + "-" + strconv.Itoa(n)
	}))
	if err != nil {
		return Change{}, fmt.Errorf("copy the neighbourhood: %w", err)
	}
	if _, err := store.ApplyAction(ctx, graphKey, a); err != nil {
		return Change{}, fmt.Errorf("the change cannot be applied to the graph as it is now: %w", err)
	}
	after, err := store.Snapshot(ctx, graphKey)
	if err != nil {
		return Change{}, err
	}
	return compare(snap, after, t.nodes), nil
}

// touched gathers the keys an action names, in the order it names them.
type touched struct {
	nodes    map[string]bool
	order    []string
	edgeKeys []string
	lone     []datasource.CreateNodePayload // created nodes no edge of the action joins
	ends     map[string]bool                // node keys joined by created edges
}

func (t *touched) node(k string) {
	if k != "" && !t.nodes[k] {
		t.nodes[k] = true
		t.order = append(t.order, k)
	}
}

func (t *touched) collect(a datasource.Action, depth int) {
	if depth > datasource.MaxBatchDepth {
		return
	}
	switch {
	case a.CreateNode != nil:
		t.node(a.CreateNode.NodeKey)
		t.lone = append(t.lone, *a.CreateNode)
	case a.UpdateNode != nil:
		t.node(a.UpdateNode.NodeKey)
	case a.MoveNode != nil:
		t.node(a.MoveNode.NodeKey)
	case a.DeleteNode != nil:
		t.node(a.DeleteNode.NodeKey)
	case a.CreateEdge != nil:
		t.node(a.CreateEdge.SourceKey)
		t.node(a.CreateEdge.TargetKey)
		if t.ends == nil {
			t.ends = map[string]bool{}
		}
		t.ends[a.CreateEdge.SourceKey], t.ends[a.CreateEdge.TargetKey] = true, true
	case a.DeleteEdge != nil:
		if e := a.DeleteEdge.Edge; e != nil {
			t.node(e.Source)
			t.node(e.Target)
		}
		t.edgeKeys = append(t.edgeKeys, a.DeleteEdge.EdgeKey)
	case a.Batch != nil:
		for _, sub := range a.Batch.Actions {
			t.collect(sub, depth+1)
		}
	case a.ConfigureNodeType != nil:
		// A change of a type's look reaches every node of the type: shown too.
		for _, k := range a.ConfigureNodeType.Nodes {
			t.node(k)
		}
	}
	if depth == 0 {
		// A created node an edge of the same change joins is shown by that edge.
		kept := t.lone[:0]
		for _, c := range t.lone {
			if c.NodeKey == "" || !t.ends[c.NodeKey] {
				kept = append(kept, c)
			}
		}
		t.lone = kept
	}
}

// subgraph is the copy being assembled: nodes and edges without duplicates.
type subgraph struct {
	nodes    []datasource.Node
	edges    []datasource.Edge
	has      map[string]bool
	hasEdge  map[string]bool
	allEdges []datasource.Edge // the graph's edges, read once when an edge key must be found
}

func newSubgraph() *subgraph {
	return &subgraph{has: map[string]bool{}, hasEdge: map[string]bool{}}
}

func (s *subgraph) add(nb datasource.Neighborhood) {
	for _, n := range nb.Nodes {
		if !s.has[n.Key] {
			s.has[n.Key] = true
			s.nodes = append(s.nodes, n)
		}
	}
	s.addEdges(nb.Edges)
}

func (s *subgraph) addEdges(es []datasource.Edge) {
	for _, e := range es {
		if !s.hasEdge[e.Key] {
			s.hasEdge[e.Key] = true
			s.edges = append(s.edges, e)
		}
	}
}

// addEdgeEnds brings in the two nodes of an edge the action deletes, when the
// payload did not say which they are.
func (s *subgraph) addEdgeEnds(ctx context.Context, src datasource.Source, graphKey, edgeKey string) error {
	if s.allEdges == nil {
		all, err := src.Edges(ctx, graphKey, "")
		if err != nil {
			return err
		}
		s.allEdges = all
	}
	for _, e := range s.allEdges {
		if e.Key != edgeKey {
			continue
		}
		for _, k := range []string{e.Source, e.Target} {
			if n, err := src.Node(ctx, graphKey, k); err == nil && !s.has[k] {
				s.has[k] = true
				s.nodes = append(s.nodes, n)
			}
		}
		s.addEdges([]datasource.Edge{e})
	}
	return nil
}

// addNearest brings in the nodes nearest to where a created node lands.
func (s *subgraph) addNearest(ctx context.Context, src datasource.Source, graphKey string, c datasource.CreateNodePayload) {
	nodes, err := src.Nodes(ctx, graphKey, c.Sheet)
	if err != nil {
		return
	}
	dist := func(n datasource.Node) float64 { return math.Hypot(n.PosX-c.PosX, n.PosY-c.PosY) }
	sort.SliceStable(nodes, func(i, j int) bool { return dist(nodes[i]) < dist(nodes[j]) })
	for _, n := range nodes[:min(nearby, len(nodes))] {
		if !s.has[n.Key] {
			s.has[n.Key] = true
			s.nodes = append(s.nodes, n)
		}
		// Their edges, so that the neighbours are drawn as connected as they are.
		if nb, err := src.Neighborhood(ctx, graphKey, n.Key, 1, datasource.Any); err == nil {
			s.addEdges(nb.Edges)
		}
	}
}

// compare marks what differs between the two snapshots. Nodes keep the order of
// before, created ones after them.
func compare(before, after datasource.Snapshot, touched map[string]bool) Change {
	afterNodes := map[string]datasource.Node{}
	for _, n := range after.Nodes {
		afterNodes[n.Key] = n
	}
	beforeNodes := map[string]datasource.Node{}
	for _, n := range before.Nodes {
		beforeNodes[n.Key] = n
	}
	afterEdges := map[string]bool{}
	for _, e := range after.Edges {
		afterEdges[e.Key] = true
	}
	beforeEdges := map[string]bool{}
	for _, e := range before.Edges {
		beforeEdges[e.Key] = true
	}

	var c Change
	for _, n := range before.Nodes {
		dn := drawNode(n)
		if _, ok := afterNodes[n.Key]; !ok {
			dn.Mark = graphdraw.Removed
		} else if touched[n.Key] && nodeChanged(n, afterNodes[n.Key]) {
			dn.Mark = graphdraw.Changed
		}
		dn.Focus = touched[n.Key] && dn.Mark == graphdraw.Same
		c.Before.Nodes = append(c.Before.Nodes, dn)
		c.Unified.Nodes = append(c.Unified.Nodes, dn)
		if dn.Mark != graphdraw.Removed {
			c.After.Nodes = append(c.After.Nodes, dn)
		}
	}
	for _, n := range after.Nodes {
		if _, ok := beforeNodes[n.Key]; ok {
			continue
		}
		dn := drawNode(n)
		dn.Mark = graphdraw.Added
		c.After.Nodes = append(c.After.Nodes, dn)
		c.Unified.Nodes = append(c.Unified.Nodes, dn)
	}
	for _, e := range before.Edges {
		de := drawEdge(e)
		if !afterEdges[e.Key] {
			de.Mark = graphdraw.Removed
		}
		c.Before.Edges = append(c.Before.Edges, de)
		c.Unified.Edges = append(c.Unified.Edges, de)
		if de.Mark != graphdraw.Removed {
			c.After.Edges = append(c.After.Edges, de)
		}
	}
	for _, e := range after.Edges {
		if beforeEdges[e.Key] {
			continue
		}
		de := drawEdge(e)
		de.Mark = graphdraw.Added
		c.After.Edges = append(c.After.Edges, de)
		c.Unified.Edges = append(c.Unified.Edges, de)
	}
	return c
}

// nodeChanged reports whether an update or a move changed what a node is.
func nodeChanged(a, b datasource.Node) bool {
	return a.Type != b.Type || a.Process != b.Process || a.PosX != b.PosX || a.PosY != b.PosY ||
		a.Sheet != b.Sheet || !reflect.DeepEqual(a.Data, b.Data) || !reflect.DeepEqual(a.Handles, b.Handles)
}

// Style of a change picture.
type Style int

const (
	// Unified draws one picture, created parts marked +, removed ones −: the most
	// compact, for a dialog.
	Unified Style = iota
	// BeforeAfter draws the neighbourhood as it is, then as it would be.
	BeforeAfter
)

// Draw draws the change, with a legend line saying what the markers mean.
func (c Change) Draw(style Style, opts graphdraw.Options) string {
	var b strings.Builder
	if style == BeforeAfter {
		b.WriteString("before:\n")
		b.WriteString(graphdraw.Draw(c.Before, opts))
		b.WriteString("\nafter:\n")
		b.WriteString(graphdraw.Draw(c.After, opts))
	} else {
		b.WriteString(graphdraw.Draw(c.Unified, opts))
	}
	b.WriteString(Legend(opts))
	return b.String()
}

// Legend is the line that says what the markers of a change picture mean.
func Legend(opts graphdraw.Options) string {
	minus := "−"
	if opts.ASCII {
		minus = "-"
	}
	return "+ created   " + minus + " removed   ~ changed\n"
}

// AppliedChange is the picture of an applied change, see Applied.
type AppliedChange struct {
	Graph graphdraw.Graph
	// Removed lists what the change deleted ("node KEY", "edge KEY"): gone from the
	// graph, so not drawn.
	Removed []string
	// Unseen is set when the graph does not show the change: something it created
	// is missing or something it deleted is there (it was applied to another copy,
	// such as the demo's memory, or undone since).
	Unseen bool
}

// Applied pictures a change that has been applied: the neighbourhood (depth hops)
// of what it touched as the graph is now, with what it created marked Added.
func Applied(ctx context.Context, src datasource.Source, graphKey string, a datasource.Action, created datasource.Created, depth int) (AppliedChange, error) {
	var out AppliedChange
	if depth < 0 || depth > MaxDepth {
		return out, fmt.Errorf("depth must be between 0 and %d (got %d)", MaxDepth, depth)
	}
	a = lowered(a)
	g, err := applied(ctx, src, graphKey, a, created, depth)
	if err != nil {
		return out, err
	}
	out.Graph, out.Removed = g, removedBy(a, 0)
	has := map[string]bool{}
	for _, n := range g.Nodes {
		has[n.Key] = true
	}
	for _, k := range created.Nodes {
		if !has[termtext.OneLine(k)] {
			out.Unseen = true
		}
	}
	for _, k := range deletedNodes(a, 0) {
		if _, err := src.Node(ctx, graphKey, k); err == nil {
			out.Unseen = true
		}
	}
	return out, nil
}

// lowered is a proposal of the server's own kinds (a node with its edges, a new
// layout, a node type's code) as the single changes it comes down to, so that its
// picture shows the nodes it touches: every node of a type whose code changes.
// A node it creates has no key yet.
func lowered(a datasource.Action) datasource.Action {
	if l, ok := datasource.Lower(a, func() string { return "" }); ok {
		return l
	}
	return a
}

// deletedNodes lists the keys of the nodes an action deletes.
func deletedNodes(a datasource.Action, depth int) []string {
	switch {
	case a.DeleteNode != nil:
		return []string{a.DeleteNode.NodeKey}
	case a.Batch != nil && depth < datasource.MaxBatchDepth:
		var out []string
		for _, sub := range a.Batch.Actions {
			out = append(out, deletedNodes(sub, depth+1)...)
		}
		return out
	}
	return nil
}

func applied(ctx context.Context, src datasource.Source, graphKey string, a datasource.Action, created datasource.Created, depth int) (g graphdraw.Graph, err error) {
	t := touched{nodes: map[string]bool{}}
	t.collect(a, 0)
	keys := append(append([]string(nil), t.order...), created.Nodes...)
	sub := newSubgraph()
	for _, k := range keys {
		nb, err := src.Neighborhood(ctx, graphKey, k, depth, datasource.Any)
		if errors.Is(err, datasource.ErrNotFound) {
			continue
		}
		if err != nil {
			return g, err
		}
		sub.add(nb)
		if wider, err := src.Neighborhood(ctx, graphKey, k, depth+1, datasource.Any); err == nil {
			sub.addEdges(wider.Edges)
		}
	}
	isNew := map[string]bool{}
	for _, k := range created.Nodes {
		isNew[k] = true
	}
	for _, k := range created.Edges {
		isNew["edge:"+k] = true
	}
	for _, n := range sub.nodes {
		dn := drawNode(n)
		if isNew[n.Key] {
			dn.Mark = graphdraw.Added
		}
		dn.Focus = t.nodes[n.Key] && dn.Mark == graphdraw.Same
		g.Nodes = append(g.Nodes, dn)
	}
	for _, e := range sub.edges {
		if !sub.has[e.Source] || !sub.has[e.Target] {
			continue
		}
		de := drawEdge(e)
		if isNew["edge:"+e.Key] {
			de.Mark = graphdraw.Added
		}
		g.Edges = append(g.Edges, de)
	}
	return g, nil
}

// removedBy lists what an action deletes, as "node KEY" and "edge KEY".
func removedBy(a datasource.Action, depth int) []string {
	var out []string
	switch {
	case a.DeleteNode != nil:
		out = append(out, "node "+termtext.OneLine(a.DeleteNode.NodeKey))
		for _, e := range a.DeleteNode.RemovedEdges {
			out = append(out, "edge "+termtext.OneLine(e.Key))
		}
	case a.DeleteEdge != nil:
		out = append(out, "edge "+termtext.OneLine(a.DeleteEdge.EdgeKey))
	case a.Batch != nil && depth < datasource.MaxBatchDepth:
		for _, sub := range a.Batch.Actions {
			out = append(out, removedBy(sub, depth+1)...)
		}
	}
	return out
}
