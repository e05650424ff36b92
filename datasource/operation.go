package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// ConflictError is an action the graph, as it is now, does not allow (a node gone, a
// key taken, an edge already there): nothing was applied, and the model can act on
// the reason. Other apply errors (I/O, a lock, the network, a read-only source) are
// for the person to fix.
type ConflictError struct{ Err error }

func (e *ConflictError) Error() string { return e.Err.Error() }
func (e *ConflictError) Unwrap() error { return e.Err }

// IsConflict reports whether err says the action no longer fits the graph.
func IsConflict(err error) bool {
	var ce *ConflictError
	return errors.As(err, &ce)
}

// AssignKeys returns a copy of a in which every node and edge it creates has a key:
// the keys it lacked are made from the operation id opID. Applying the result makes
// an operation whose effect can be recognised afterwards (see Landed), so an apply
// interrupted by a crash is neither lost nor applied twice.
func AssignKeys(a Action, opID string) Action {
	n := 0
	next := func() string { n++; return "ai_" + opID + "_" + strconv.Itoa(n) }
	var walk func(a Action) Action
	walk = func(a Action) Action {
		switch {
		case a.Type == CreateNodeAction && a.CreateNode != nil:
			p := *a.CreateNode
			if p.NodeKey == "" {
				p.NodeKey = next()
			}
			a.CreateNode = &p
		case a.Type == CreateEdgeAction && a.CreateEdge != nil:
			p := *a.CreateEdge
			if p.EdgeKey == "" {
				p.EdgeKey = next()
			}
			a.CreateEdge = &p
		case a.Type == BatchAction && a.Batch != nil:
			steps := make([]Action, len(a.Batch.Actions))
			for i, s := range a.Batch.Actions {
				steps[i] = walk(s)
			}
			a.Batch = &BatchPayload{Actions: steps}
		case a.Type == ConfigureNodeTypeAction && a.ConfigureNodeType != nil:
			// Applied whole: a source that keeps node types writes the type.
			if a.ConfigureNodeType.TypeKey == "" {
				p := *a.ConfigureNodeType
				p.TypeKey = next()
				a.ConfigureNodeType = &p
			}
		case a.Type == CreateGraphAction && a.CreateGraph != nil:
			p := *a.CreateGraph
			if p.Key == "" {
				p.Key = "ai_" + opID
			}
			a.CreateGraph = &p
		default:
			// The server's own types are applied as the changes they come down to.
			if l, ok := Lower(a, next); ok {
				return walk(l)
			}
		}
		return a
	}
	return walk(a)
}

// CreatedKeys lists the keys an action with assigned keys (AssignKeys) creates.
func CreatedKeys(a Action) Created {
	c := Created{Nodes: []string{}, Edges: []string{}}
	var walk func(a Action)
	walk = func(a Action) {
		switch {
		case a.Type == CreateNodeAction && a.CreateNode != nil:
			c.Nodes = append(c.Nodes, a.CreateNode.NodeKey)
		case a.Type == CreateEdgeAction && a.CreateEdge != nil:
			c.Edges = append(c.Edges, a.CreateEdge.EdgeKey)
		case a.Type == BatchAction && a.Batch != nil:
			for _, s := range a.Batch.Actions {
				walk(s)
			}
		}
	}
	walk(a)
	return c
}

// Landed reports whether the effect of a (keys assigned) is in the graph now: what
// it creates exists, what it deletes is gone, what it changes has the new values. A
// batch is applied all at once or not at all, so when it creates something, that
// decides; otherwise every step must hold.
func Landed(ctx context.Context, src Source, graphKey string, a Action) (bool, error) {
	if a.Type == CreateGraphAction {
		return landedGraph(ctx, src, a)
	}
	snap, err := LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return false, err
	}
	nodes := map[string]Node{}
	for _, n := range snap.Nodes {
		nodes[n.Key] = n
	}
	edges := map[string]bool{}
	for _, e := range snap.Edges {
		edges[e.Key] = true
	}
	if c := CreatedKeys(a); len(c.Nodes)+len(c.Edges) > 0 {
		if len(c.Nodes) > 0 {
			_, ok := nodes[c.Nodes[0]]
			return ok, nil
		}
		return edges[c.Edges[0]], nil
	}
	var holds func(a Action) bool
	holds = func(a Action) bool {
		switch {
		case a.Type == UpdateNodeAction && a.UpdateNode != nil:
			n, ok := nodes[a.UpdateNode.NodeKey]
			if !ok {
				return false
			}
			doc := NodeFields(n)
			for path, want := range a.UpdateNode.Changes {
				if !SameJSON(lookupPath(doc, strings.Split(path, ".")), want) {
					return false
				}
			}
			return true
		case a.Type == MoveNodeAction && a.MoveNode != nil:
			n, ok := nodes[a.MoveNode.NodeKey]
			return ok && n.PosX == a.MoveNode.PosX && n.PosY == a.MoveNode.PosY
		case a.Type == DeleteNodeAction && a.DeleteNode != nil:
			_, ok := nodes[a.DeleteNode.NodeKey]
			return !ok
		case a.Type == DeleteEdgeAction && a.DeleteEdge != nil:
			return !edges[a.DeleteEdge.EdgeKey]
		case a.Type == BatchAction && a.Batch != nil:
			for _, s := range a.Batch.Actions {
				if !holds(s) {
					return false
				}
			}
			return true
		case a.Type == ConfigureNodeTypeAction && a.ConfigureNodeType != nil:
			return typeLanded(snap, a.ConfigureNodeType)
		}
		return false
	}
	return holds(a), nil
}

// NodeFields is a node as its JSON object: its top-level fields by JSON name,
// each a plain JSON value (maps, slices, float64s…). Field paths such as
// "data.url" are looked up in it, and two versions of a node are compared
// field by field through it.
func NodeFields(n Node) map[string]any {
	b, err := json.Marshal(n)
	if err != nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func lookupPath(v any, path []string) any {
	for _, seg := range path {
		switch cur := v.(type) {
		case map[string]any:
			v = cur[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(cur) {
				return nil
			}
			v = cur[i]
		default:
			return nil
		}
	}
	return v
}

// SameJSON reports whether a and b have the same JSON form. The comparison goes
// through JSON because the values come from different places: a Node's field
// decoded by this package, a value a model or a person wrote, a field read back
// from a source. The same JSON may be held as an int in one and a float64 in the
// other, or as a struct in one and a map in the other; what a source stores, and
// what a person sees, is the JSON. Values that cannot be marshaled are compared
// with reflect.DeepEqual.
func SameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return reflect.DeepEqual(a, b)
	}
	var va, vb any
	_ = json.Unmarshal(ja, &va)
	_ = json.Unmarshal(jb, &vb)
	return reflect.DeepEqual(va, vb)
}

// Describe is a one-line summary of an action, for people.
func Describe(a Action) string {
	switch a.Type {
	case CreateNodeAction:
		if c := a.CreateNode; c != nil {
			key := c.NodeKey
			if key == "" {
				key = "(new key)"
			}
			return fmt.Sprintf("create node %s (%s) on sheet %s at (%g, %g)", key, c.TypeKey, c.Sheet, c.PosX, c.PosY)
		}
	case UpdateNodeAction:
		if u := a.UpdateNode; u != nil {
			fields := make([]string, 0, len(u.Changes))
			for k := range u.Changes {
				fields = append(fields, k)
			}
			sort.Strings(fields)
			return fmt.Sprintf("update node %s: %s", u.NodeKey, strings.Join(fields, ", "))
		}
	case MoveNodeAction:
		if m := a.MoveNode; m != nil {
			return fmt.Sprintf("move node %s to (%g, %g)", m.NodeKey, m.PosX, m.PosY)
		}
	case DeleteNodeAction:
		if d := a.DeleteNode; d != nil {
			keys := make([]string, len(d.RemovedEdges))
			for i, e := range d.RemovedEdges {
				keys[i] = e.Key
			}
			s := fmt.Sprintf("delete node %s and its %d edge(s)", d.NodeKey, len(d.RemovedEdges))
			if len(keys) > 0 {
				s += " (" + strings.Join(keys, ", ") + ")"
			}
			return s
		}
	case CreateEdgeAction:
		if c := a.CreateEdge; c != nil {
			s := fmt.Sprintf("create edge %s:%s → %s:%s", c.SourceKey, c.SourceHandle, c.TargetKey, c.TargetHandle)
			if c.Label != "" {
				s += " [" + c.Label + "]"
			}
			return s
		}
	case DeleteEdgeAction:
		if d := a.DeleteEdge; d != nil {
			return "delete edge " + d.EdgeKey
		}
	case BatchAction:
		if b := a.Batch; b != nil {
			parts := make([]string, 0, len(b.Actions))
			for _, sub := range b.Actions {
				parts = append(parts, Describe(sub))
			}
			return fmt.Sprintf("%d changes: %s", len(parts), strings.Join(parts, "; "))
		}
	}
	if s, ok := describeServer(a); ok {
		return s
	}
	return string(a.Type)
}
