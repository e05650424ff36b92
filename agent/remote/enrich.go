package remote

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/nodius/nodius-ai/datasource"
)

// enrichTimeout bounds the graph reads that complete a proposal for display: a
// slow source must not hold up the run's end.
const enrichTimeout = 5 * time.Second

// complete fills in what the server's proposed action leaves out and a person
// deciding needs to see (as the local agent's proposals carry it): the edges a
// deleted node takes with it, the edge a delete_edge removes, the values an update
// replaces. It reads the graph through the runner's source; what cannot be read is
// left out (the proposal stays decidable).
func (r *Runner) complete(ctx context.Context, graphKey string, a datasource.Action) datasource.Action {
	if r.src == nil {
		return a
	}
	ctx, cancel := context.WithTimeout(ctx, enrichTimeout)
	defer cancel()
	e := &enricher{ctx: ctx, src: r.src, graph: graphKey}
	out := e.action(a)
	if e.err != nil {
		r.log.Debug("could not read the graph to show the proposal in full", "graph", graphKey, "error", e.err.Error())
	}
	return out
}

type enricher struct {
	ctx   context.Context
	src   datasource.Source
	graph string
	edges []datasource.Edge
	read  bool
	err   error
}

func (e *enricher) allEdges() []datasource.Edge {
	if !e.read && e.err == nil {
		e.read = true
		e.edges, e.err = e.src.Edges(e.ctx, e.graph, "")
	}
	return e.edges
}

func (e *enricher) action(a datasource.Action) datasource.Action {
	switch a.Type {
	case datasource.DeleteNodeAction:
		if p := a.DeleteNode; p != nil && len(p.RemovedEdges) == 0 {
			q := *p
			for _, ed := range e.allEdges() {
				if ed.Source == p.NodeKey || ed.Target == p.NodeKey {
					q.RemovedEdges = append(q.RemovedEdges, ed)
				}
			}
			a.DeleteNode = &q
		}
	case datasource.DeleteEdgeAction:
		if p := a.DeleteEdge; p != nil && p.Edge == nil {
			q := *p
			for _, ed := range e.allEdges() {
				if ed.Key == p.EdgeKey {
					ed := ed
					q.Edge = &ed
					break
				}
			}
			a.DeleteEdge = &q
		}
	case datasource.UpdateNodeAction:
		if p := a.UpdateNode; p != nil && len(p.Before) == 0 && len(p.Changes) > 0 {
			n, err := e.src.Node(e.ctx, e.graph, p.NodeKey)
			if err != nil {
				e.err = err
				break
			}
			var doc map[string]any
			if b, err := json.Marshal(n); err == nil && json.Unmarshal(b, &doc) == nil {
				q := *p
				q.Before = map[string]any{}
				for field := range p.Changes {
					if v, ok := lookupPath(doc, strings.Split(field, ".")); ok {
						q.Before[field] = v
					}
				}
				a.UpdateNode = &q
			}
		}
	case datasource.ConfigureNodeTypeAction:
		// The nodes of the type, shown with the change: read from the graph (the
		// server's proposal names none), so the picture never says the type is
		// unused when the graph has nodes of it.
		if p := a.ConfigureNodeType; p != nil && p.Mode == "update" && len(p.Nodes) == 0 && p.TypeKey != "" {
			nodes, err := e.src.Nodes(e.ctx, e.graph, "")
			if err != nil {
				e.err = err
				break
			}
			q := *p
			for _, n := range nodes {
				if n.Type == p.TypeKey {
					q.Nodes = append(q.Nodes, n.Key)
				}
			}
			a.ConfigureNodeType = &q
		}
	case datasource.BatchAction:
		if p := a.Batch; p != nil {
			q := datasource.BatchPayload{Actions: make([]datasource.Action, len(p.Actions))}
			for i, sub := range p.Actions {
				q.Actions[i] = e.action(sub)
			}
			a.Batch = &q
		}
	}
	return a
}

func lookupPath(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
