package undo

import (
	"context"
	"errors"
	"fmt"

	"github.com/nodius/nodius-ai/datasource"
)

// An approved create_graph makes a whole new graph (datasource.GraphCreator): its
// reversal is one step, remove_graph, carrying what was made. The source removes
// the graph only while it is still as made (a file's bytes, a store's version,
// ArangoDB's revisions): a graph someone changed since is left, and undo says why.

var _ datasource.GraphRecorder = (*Recorder)(nil)

// RecordGraph makes the recording the removal of the graph a create_graph made.
func (r *Recorder) RecordGraph(g datasource.CreatedGraph) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wrapped, r.err = true, nil
	r.steps = []Step{{Op: RemoveGraph, Key: g.Key, Graph: &g}}
}

// planGraph is the reversal of a create_graph planned before it is applied: the
// graph's key, without what it will hold (an undo from this plan alone, kept when
// the process died before the apply was recorded, leaves the graph and says so).
func planGraph(a datasource.Action) (Reversal, error) {
	c := a.CreateGraph
	if c == nil || c.Key == "" {
		return Reversal{}, errors.New("planning the undo of create_graph: no graph key assigned")
	}
	return Reversal{Steps: []Step{{Op: RemoveGraph, Key: c.Key,
		Graph: &datasource.CreatedGraph{Key: c.Key, Name: c.Name, Type: c.Type}}}}, nil
}

// graphStep returns the removal of a created graph when that is what rev is.
func graphStep(rev Reversal) (Step, bool) {
	if len(rev.Steps) == 1 && rev.Steps[0].Op == RemoveGraph && rev.Steps[0].Graph != nil {
		return rev.Steps[0], true
	}
	return Step{}, false
}

// createsGraph reports whether a (keys assigned) is the create_graph that made the
// graph s removes: of the name and type asked, and of the key assigned or — on a
// source that chooses the key itself (a Nodius server: POST /api/graph/create
// answers its own) — recorded as made for the key assigned. An action without an
// assigned key made nothing undo may remove.
func createsGraph(a datasource.Action, s Step) bool {
	c := a.CreateGraph
	if a.Type != datasource.CreateGraphAction || c == nil || c.Key == "" || s.Graph == nil {
		return false
	}
	if s.Graph.Name != c.Name || s.Graph.Type != c.Type {
		return false
	}
	return c.Key == s.Key || (s.Graph.Key == s.Key && s.Graph.AssignedKey == c.Key)
}

func describeGraphStep(s Step) string {
	if s.Graph == nil {
		return "remove graph " + s.Key + " (created by the change)"
	}
	what := "graph"
	if s.Graph.Type == "htmlClass" {
		what = "HTML class and graph"
	}
	out := fmt.Sprintf("remove %s %s %q (created by the change)", what, s.Key, s.Graph.Name)
	if s.Graph.Path != "" {
		out = fmt.Sprintf("remove graph file %s (graph %s %q, created by the change)", s.Graph.Path, s.Key, s.Graph.Name)
	}
	return out
}

// runGraph checks (dry) or removes the graph s names, as Run does a graph's steps:
// gone already is done, changed since is drift (left, and listed when forced).
func runGraph(ctx context.Context, src datasource.Source, s Step, force, dry bool) (Report, error) {
	gc, ok := src.(datasource.GraphCreator)
	if !ok {
		return Report{}, fmt.Errorf("%w: the source in use cannot remove graphs", ErrNotUndoable)
	}
	var r Report
	err := gc.DeleteCreatedGraph(ctx, *s.Graph, dry)
	var changed *datasource.GraphChangedError
	switch {
	case err == nil:
		r.Reversed = append(r.Reversed, s.Describe())
		r.Plan.Steps = append(r.Plan.Steps, s)
	case errors.Is(err, datasource.ErrNotFound):
		r.Already = append(r.Already, s.Describe())
	case errors.As(err, &changed):
		r.Drift = append(r.Drift, changed.Why)
		r.Left = append(r.Left, s.Describe()+" — left: "+changed.Why)
		if !force {
			return r, &DriftError{Drift: r.Drift}
		}
	default:
		return r, err
	}
	return r, nil
}
