package datasource

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// Precondition is the state of a graph that an approved action depends on, as the
// person approving was shown it, in a form another program can check without
// knowing the actions: the Nodius server's apply endpoint receives it as "expect"
// and, when it honours it, checks it in the same step as the change and applies
// nothing when it does not hold. It is what CheckShown checks, said as state:
//
//   - NodeEdges: for each node the action deletes, the edges it has now and takes
//     with it, exactly (compared by _key and ends: source, sourceHandle, target,
//     targetHandle). An edge more or an edge less is a difference.
//   - Fields: for each node the action updates, the value of each field path it
//     changes ("process", "data.url": nested objects by dots), compared as JSON;
//     null stands for a field that is absent.
//   - Edges: for each edge the action deletes, the points it joins.
//
// A node named in NodeEdges or Fields that is not in the graph is no difference
// (the apply itself then fails: the node is gone); an edge of Edges that is not
// there is one. Only the state before the whole action is described: the steps of
// a batch about what an earlier step of it changes are left out, as CheckShown
// leaves them.
type Precondition struct {
	NodeEdges map[string][]Edge         `json:"nodeEdges,omitempty"`
	Fields    map[string]map[string]any `json:"fields,omitempty"`
	Edges     map[string]Edge           `json:"edges,omitempty"`
}

// Empty reports whether the precondition asks nothing (creations and moves).
func (p Precondition) Empty() bool {
	return len(p.NodeEdges) == 0 && len(p.Fields) == 0 && len(p.Edges) == 0
}

// PreconditionOf says what the graph must be for shown (the action as the person
// approving saw it) to apply as shown.
func PreconditionOf(shown Action) Precondition {
	w := preWalk{p: Precondition{NodeEdges: map[string][]Edge{}, Fields: map[string]map[string]any{}, Edges: map[string]Edge{}},
		created: map[string]bool{}, edgesChanged: map[string]bool{}, updated: map[string]bool{}, edgesGone: map[string]bool{}}
	w.walk(shown, 0)
	return w.p
}

type preWalk struct {
	p            Precondition
	created      map[string]bool // nodes and edges an earlier step creates
	edgesChanged map[string]bool // nodes whose edges an earlier step changes
	updated      map[string]bool // nodes an earlier step updates
	edgesGone    map[string]bool // edges an earlier step removes
	// unknownEnds: an earlier step deletes an edge whose ends were not shown, so
	// which nodes' edges it changes is not known; later deletions of nodes say
	// nothing of their edges rather than something wrong.
	unknownEnds bool
}

func (w *preWalk) walk(a Action, depth int) {
	if depth > MaxBatchDepth {
		return // the apply refuses it
	}
	switch {
	case a.Type == BatchAction && a.Batch != nil:
		for _, s := range a.Batch.Actions {
			w.walk(s, depth+1)
		}
	// configure_node_type checks its type itself (ConfigureNodeTypePayload.Before).
	case a.Type == CreateNodeWithEdgesAction, a.Type == ReorganizeLayoutAction:
		if l, ok := Lower(a, func() string { return "" }); ok {
			w.walk(l, depth+1)
		}
	case a.Type == CreateNodeAction && a.CreateNode != nil:
		if a.CreateNode.NodeKey != "" {
			w.created[a.CreateNode.NodeKey] = true
		}
	case a.Type == CreateEdgeAction && a.CreateEdge != nil:
		p := a.CreateEdge
		if p.EdgeKey != "" {
			w.created[p.EdgeKey] = true
		}
		w.edgesChanged[p.SourceKey], w.edgesChanged[p.TargetKey] = true, true
	case a.Type == DeleteEdgeAction && a.DeleteEdge != nil:
		p := a.DeleteEdge
		if p.Edge == nil {
			w.unknownEnds = true
		} else {
			if !w.created[p.EdgeKey] && !w.edgesGone[p.EdgeKey] {
				w.p.Edges[p.EdgeKey] = *p.Edge
			}
			w.edgesChanged[p.Edge.Source], w.edgesChanged[p.Edge.Target] = true, true
		}
		w.edgesGone[p.EdgeKey] = true
	case a.Type == DeleteNodeAction && a.DeleteNode != nil:
		p := a.DeleteNode
		if !w.created[p.NodeKey] && !w.edgesChanged[p.NodeKey] && !w.unknownEnds {
			w.p.NodeEdges[p.NodeKey] = append([]Edge{}, p.RemovedEdges...)
		}
		for _, e := range p.RemovedEdges {
			w.edgesChanged[e.Source], w.edgesChanged[e.Target] = true, true
			w.edgesGone[e.Key] = true
		}
		w.edgesChanged[p.NodeKey] = true
	case a.Type == UpdateNodeAction && a.UpdateNode != nil:
		p := a.UpdateNode
		if !w.created[p.NodeKey] && !w.updated[p.NodeKey] && len(p.Before) > 0 {
			w.p.Fields[p.NodeKey] = maps.Clone(p.Before)
		}
		w.updated[p.NodeKey] = true
	}
}

// Check checks the precondition against g, the graph before the action. The error
// wraps ErrGraphChanged and names every difference, as CheckShown does.
func (p Precondition) Check(g GraphLookup) error {
	var diffs []string
	for _, key := range sortedKeys(p.NodeEdges) {
		if _, ok := g.LookupNode(key); ok {
			diffs = append(diffs, nodeEdgeDiffs(key, g.EdgesOf(key), p.NodeEdges[key])...)
		}
	}
	for _, key := range sortedKeys(p.Fields) {
		if n, ok := g.LookupNode(key); ok {
			diffs = append(diffs, fieldDiffs(n, p.Fields[key])...)
		}
	}
	for _, key := range sortedKeys(p.Edges) {
		now, ok := g.LookupEdge(key)
		diffs = append(diffs, edgeDiffs(key, now, ok, p.Edges[key])...)
	}
	if len(diffs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrGraphChanged, strings.Join(diffs, "; "))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
