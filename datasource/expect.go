package datasource

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ApplyOption changes how an action is applied (see Apply and ActionApplier).
type ApplyOption func(*ApplyOptions)

// ApplyOptions is what the ApplyOption values given to one apply add up to. Sources
// implementing ActionApplier read them with ApplyOptionsOf.
type ApplyOptions struct {
	// Expect, when set, is the action as it was shown to the person who approved it:
	// the edges a deleted node takes (DeleteNodePayload.RemovedEdges), the old values
	// of the fields an update changes (UpdateNodePayload.Before) and the edge a
	// delete_edge removes (DeleteEdgePayload.Edge). The graph must still be that at
	// the moment of the change.
	Expect *Action
	// Record, when set, is told what the apply changes, as the apply sees the graph
	// (see Record).
	Record Recorder
}

// Recorder learns what an apply changes from the graph the apply itself changes,
// not from an earlier read: the reversal of a change must reverse what it replaced,
// even when another writer changed the graph between a plan and the write.
type Recorder interface {
	// Wrap returns the Changes through which the applier makes the action's single
	// changes on w, the graph as the apply sees it: the working copy of the
	// in-memory store, the graph file re-read under its lock, the source read right
	// before each write, or (a source that takes the whole action at once) a copy
	// of a snapshot read right before it is sent. An applier that runs the action
	// more than once (a retry) wraps again; only the last run counts.
	Wrap(w WorkingCopy) Changes
}

// Record makes the apply report its single changes to r (see Recorder): undo keeps
// what they replaced. An approval asks for it alongside Expect.
func Record(r Recorder) ApplyOption {
	return func(o *ApplyOptions) { o.Record = r }
}

// Changes returns what an applier makes its changes through on w: w itself, or w
// wrapped by the recorder.
func (o ApplyOptions) Changes(w WorkingCopy) Changes {
	if o.Record != nil {
		return o.Record.Wrap(w)
	}
	return w
}

// Expect makes the apply check, in the same step as the change, that the graph is
// still what shown (the action as the person saw it) says it is: under the graph
// file's lock after reading the file again, inside the in-memory store's working
// copy, inside ArangoDB's exclusive stream transaction, and right before the first
// write for sources that change one thing at a time. When it is not, nothing is applied and the error is a *ConflictError whose
// text says what changed. Only an approval asks for it: the proposal pictures and
// undo apply actions to graphs that are not the one the person was shown.
func Expect(shown Action) ApplyOption {
	return func(o *ApplyOptions) { o.Expect = &shown }
}

// ApplyOptionsOf adds up opts.
func ApplyOptionsOf(opts []ApplyOption) ApplyOptions {
	var o ApplyOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	return o
}

// ErrGraphChanged is wrapped by the error of an apply whose graph is no longer the
// one the person approving was shown.
var ErrGraphChanged = errors.New("the graph changed since the proposal was shown")

// GraphLookup is what checking an expectation reads: the graph as it is just before
// the change. A WorkingCopy is one.
type GraphLookup interface {
	LookupNode(key string) (Node, bool)
	LookupEdge(key string) (Edge, bool)
	EdgesOf(nodeKey string) []Edge
}

// CheckShown checks that the graph g, as it is before the action is applied, is
// still what shown says of it: the precondition the action depends on
// (PreconditionOf), the same one a Nodius server is sent to check. Each step is
// checked against the graph before the whole action; a step about a part of the
// graph an earlier step of the same batch changes is left to that step (what it
// showed was computed after it). The error wraps ErrGraphChanged and names every
// difference.
func CheckShown(g GraphLookup, shown Action) error {
	return PreconditionOf(withEdgeEnds(g, shown, 0)).Check(g)
}

// withEdgeEnds returns shown with each delete_edge that does not carry the edge it
// showed (a proposal from before it was recorded) given the edge as g has it: its
// ends say whose edges it changes, so the later steps of a batch are still checked.
// shown itself is not changed.
func withEdgeEnds(g GraphLookup, a Action, depth int) Action {
	switch {
	case depth > MaxBatchDepth:
	case a.Type == DeleteEdgeAction && a.DeleteEdge != nil && a.DeleteEdge.Edge == nil:
		if now, ok := g.LookupEdge(a.DeleteEdge.EdgeKey); ok {
			p := *a.DeleteEdge
			p.Edge = &now
			a.DeleteEdge = &p
		}
	case a.Type == BatchAction && a.Batch != nil:
		b := BatchPayload{Actions: make([]Action, len(a.Batch.Actions))}
		for i, step := range a.Batch.Actions {
			b.Actions[i] = withEdgeEnds(g, step, depth+1)
		}
		a.Batch = &b
	}
	return a
}

// edgeDiffs says how the edge key, as it is now (ok: it is there), differs from
// the edge shown.
func edgeDiffs(key string, now Edge, ok bool, shown Edge) []string {
	switch {
	case !ok:
		return []string{fmt.Sprintf("edge %s is gone", key)}
	case edgeEnds(now) != edgeEnds(shown):
		return []string{fmt.Sprintf("edge %s now joins %s instead of %s", key, edgeEnds(now), edgeEnds(shown))}
	}
	return nil
}

// nodeEdgeDiffs says how the edges of node key now differ from the edges shown,
// compared edge by edge: the same keys joining the same points.
func nodeEdgeDiffs(key string, now, removed []Edge) []string {
	var diffs []string
	shown := map[string]bool{}
	for _, e := range removed {
		shown[edgeID(e)] = true
	}
	var added, gone []string
	have := map[string]bool{}
	for _, e := range now {
		have[edgeID(e)] = true
		if !shown[edgeID(e)] {
			added = append(added, describeEdge(e))
		}
	}
	for _, e := range removed {
		if !have[edgeID(e)] {
			gone = append(gone, describeEdge(e))
		}
	}
	sort.Strings(added)
	sort.Strings(gone)
	if len(added) > 0 {
		diffs = append(diffs, fmt.Sprintf("node %s has %d edge(s) that were not shown and would be deleted with it (%s)",
			key, len(added), strings.Join(added, ", ")))
	}
	if len(gone) > 0 {
		diffs = append(diffs, fmt.Sprintf("node %s no longer has %d edge(s) that were shown (%s)", key, len(gone), strings.Join(gone, ", ")))
	}
	return diffs
}

// fieldDiffs names the field paths of node n whose values are not the ones shown
// (before: path → value; nil for a field that was absent).
func fieldDiffs(n Node, before map[string]any) []string {
	var diffs []string
	doc := NodeFields(n)
	paths := make([]string, 0, len(before))
	for path := range before {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		if !SameJSON(lookupPath(doc, strings.Split(path, ".")), before[path]) {
			diffs = append(diffs, fmt.Sprintf("field %s of node %s is no longer the value that was shown (someone changed it meanwhile)", path, n.Key))
		}
	}
	return diffs
}

// edgeEnds names the two points an edge joins.
func edgeEnds(e Edge) string {
	return fmt.Sprintf("%s:%s → %s:%s", e.Source, e.SourceHandle, e.Target, e.TargetHandle)
}

// edgeID identifies an edge for comparing what was shown with the graph: its key
// and its ends (an edge a batch creates was shown without a key).
func edgeID(e Edge) string { return e.Key + " " + edgeEnds(e) }

func describeEdge(e Edge) string {
	if e.Key == "" {
		return edgeEnds(e)
	}
	return e.Key + ": " + edgeEnds(e)
}

// SnapshotLookup reads a GraphLookup from a whole graph.
func SnapshotLookup(s Snapshot) GraphLookup {
	l := snapLookup{nodes: map[string]Node{}, edges: map[string]Edge{}, of: map[string][]Edge{}}
	for _, n := range s.Nodes {
		l.nodes[n.Key] = n
	}
	for _, e := range s.Edges {
		l.edges[e.Key] = e
		l.of[e.Source] = append(l.of[e.Source], e)
		if e.Target != e.Source {
			l.of[e.Target] = append(l.of[e.Target], e)
		}
	}
	return l
}

type snapLookup struct {
	nodes map[string]Node
	edges map[string]Edge
	of    map[string][]Edge
}

func (l snapLookup) LookupNode(key string) (Node, bool) { n, ok := l.nodes[key]; return n, ok }
func (l snapLookup) LookupEdge(key string) (Edge, bool) { e, ok := l.edges[key]; return e, ok }
func (l snapLookup) EdgesOf(key string) []Edge          { return l.of[key] }

// CheckShownNow checks shown (see CheckShown) against the graph as src serves it
// now: for sources that cannot check in the same step as the change, right before
// it. A graph that changed is a *ConflictError; a read that failed is returned as is.
func CheckShownNow(ctx context.Context, src Source, graphKey string, shown Action) error {
	snap, err := LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return err
	}
	if err := CheckShown(SnapshotLookup(snap), shown); err != nil {
		return &ConflictError{Err: err}
	}
	return nil
}
