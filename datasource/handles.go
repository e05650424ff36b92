package datasource

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The rules about a node's handles, defined once: the agent's tools check a proposal
// with them (agent/tools.ParseProposal) and the stores apply the approved action with
// them (memgraph), so a proposal that passes the one cannot fail the other on handles.

// Sides are the sides of a node that handles sit on, as Nodius names them — L
// left, R right, T top, D down (bottom), 0 middle — in the order they are listed.
// (Earlier versions of this client used B for the bottom; Nodius has no B.)
var Sides = []string{"L", "R", "T", "D", "0"}

// SideNames says what each of Sides is, for messages and tool descriptions.
const SideNames = "L (left), R (right), T (top), D (down, the bottom), 0 (middle)"

// OrderedSides lists the sides of h: L, R, T, D, 0 first, then any other, sorted.
func OrderedSides(h map[string]HandleGroup) []string {
	var out, other []string
	for _, s := range Sides {
		if _, ok := h[s]; ok {
			out = append(out, s)
		}
	}
	for s := range h {
		if !slices.Contains(Sides, s) {
			other = append(other, s)
		}
	}
	sort.Strings(other)
	return append(out, other...)
}

// DefaultHandles are the handles a node of type typeKey has when it is stored
// without any: a fresh copy of its config's handles when the config declares some;
// else, for the four built-in types, Nodius's own (the NodeType*Config constants of
// the graph model, docs/protocol.md), so that an edge nodius-ai draws lands on
// the point the Nodius editor shows. The middle points (side 0) are fixed:
//
//   - starter: 0:1:in (accepts entryType; the entry form feeds it), R:0:out (the flow starts there)
//   - return: L:0:in (the end of the flow)
//   - html: 0:0:out (event[], the page's events), 0:1:in (accepts entryType)
//   - entryType: 0:0:out (entryType; the entry form)
//
// So an entry form's edge goes from its point "0" to point "1" of a starter or html
// node. A custom type whose config declares no handles gets L:0:in, R:0:out.
func DefaultHandles(typeKey string, configs []NodeConfig) map[string]HandleGroup {
	for _, c := range configs {
		if c.Key == typeKey && len(c.Handles) > 0 {
			return CloneHandles(c.Handles)
		}
	}
	in := HandleGroup{Position: "separate", Point: []HandlePoint{{ID: "0", Type: "in", Accept: "any"}}}
	out := HandleGroup{Position: "separate", Point: []HandlePoint{{ID: "0", Type: "out", Accept: "any"}}}
	fix := func(p ...HandlePoint) HandleGroup { return HandleGroup{Position: "fix", Point: p} }
	switch typeKey {
	case "starter":
		return map[string]HandleGroup{"0": fix(HandlePoint{ID: "1", Type: "in", Accept: "entryType"}), "R": out}
	case "return":
		return map[string]HandleGroup{"L": in}
	case "html":
		return map[string]HandleGroup{"0": fix(HandlePoint{ID: "0", Type: "out", Accept: "event[]"}, HandlePoint{ID: "1", Type: "in", Accept: "entryType"})}
	case "entryType":
		return map[string]HandleGroup{"0": fix(HandlePoint{ID: "0", Type: "out", Accept: "entryType"})}
	}
	return map[string]HandleGroup{"L": in, "R": out}
}

// EffectiveHandles are the handles n has: its own, or its type's defaults
// (DefaultHandles) when it is stored without any. Edges are checked against them.
func EffectiveHandles(n Node, configs []NodeConfig) map[string]HandleGroup {
	if len(n.Handles) > 0 {
		return n.Handles
	}
	return DefaultHandles(n.Type, configs)
}

// CloneHandles copies h deeply enough that changing the copy's points leaves h as
// it was. nil stays nil.
func CloneHandles(h map[string]HandleGroup) map[string]HandleGroup {
	if h == nil {
		return nil
	}
	out := make(map[string]HandleGroup, len(h))
	for side, g := range h {
		g.Point = slices.Clone(g.Point)
		out[side] = g
	}
	return out
}

// CheckHandles validates handles and returns them normalised (a copy): every side
// named, every point with an id and a type "in" or "out", no two points of the same
// type sharing an id (an edge names a point by id alone); an empty position becomes
// "separate", an empty accept "any".
func CheckHandles(h map[string]HandleGroup) (map[string]HandleGroup, error) {
	out := make(map[string]HandleGroup, len(h))
	seen := map[string]string{}
	for _, side := range OrderedSides(h) {
		g := h[side]
		if side == "" {
			return nil, errors.New("a side has an empty name (use " + SideNames + ")")
		}
		if g.Position == "" {
			g.Position = "separate"
		}
		g.Point = slices.Clone(g.Point)
		for i := range g.Point {
			p := &g.Point[i]
			if p.ID == "" {
				return nil, fmt.Errorf("%s.point[%d]: id is empty", side, i)
			}
			if p.Type != "in" && p.Type != "out" {
				return nil, fmt.Errorf("%s.point[%d]: type must be \"in\" or \"out\" (got %q)", side, i, p.Type)
			}
			if p.Accept == "" {
				p.Accept = "any"
			}
			k := p.Type + "\x00" + p.ID
			if prev, dup := seen[k]; dup {
				return nil, fmt.Errorf("two %s points have the id %q (sides %s and %s): give each a distinct id", p.Type, p.ID, prev, side)
			}
			seen[k] = side
		}
		out[side] = g
	}
	return out, nil
}

// pointWords names the two point types and the end of an edge each one serves.
var pointWords = map[string]struct{ kind, end, other string }{
	"out": {"output", "source", "in"},
	"in":  {"input", "target", "out"},
}

// pointList writes the points of one type as `"0" (side L), "1" (side 0, accepts
// entryType)`, or "none". The accepted type is named when it is not "any", so that a
// message about a starter's or HTML node's input says which point takes the entry form.
func pointList(h map[string]HandleGroup, typ string) (string, int) {
	var parts []string
	for _, side := range OrderedSides(h) {
		for _, p := range h[side].Point {
			if p.Type != typ {
				continue
			}
			if p.Accept != "" && p.Accept != "any" {
				parts = append(parts, fmt.Sprintf("%q (side %s, accepts %s)", p.ID, side, p.Accept))
			} else {
				parts = append(parts, fmt.Sprintf("%q (side %s)", p.ID, side))
			}
		}
	}
	if len(parts) == 0 {
		return "none", 0
	}
	return strings.Join(parts, ", "), len(parts)
}

// findPoint reports whether h has a point id (on side, when side is not empty) of
// type typ, and whether it has one of the other type.
func findPoint(h map[string]HandleGroup, side, id, typ string) (found, otherType bool) {
	for s, g := range h {
		if side != "" && s != side {
			continue
		}
		for _, p := range g.Point {
			if p.ID == id {
				if p.Type == typ {
					found = true
				} else {
					otherType = true
				}
			}
		}
	}
	return found, otherType
}

// ResolveHandle resolves the handle named at one end of an edge on node nodeKey, whose
// handles are handles (give EffectiveHandles), to a point id. wantType is "out" for
// the source end and "in" for the target end. The name is a point id ("0"), or a side
// and an id ("R:0", "R-0"); an empty name picks the node's only point of that type.
// The error says, for the model and for the user, which points the node has.
func ResolveHandle(nodeKey string, handles map[string]HandleGroup, name, wantType string) (string, error) {
	w, ok := pointWords[wantType]
	if !ok {
		return "", fmt.Errorf("handle type must be \"in\" or \"out\" (got %q)", wantType)
	}
	list, n := pointList(handles, wantType)
	none := fmt.Sprintf("node %q has no %s point, so it cannot be the %s of an edge", nodeKey, w.kind, w.end)
	if name == "" {
		switch n {
		case 0:
			return "", errors.New(none)
		case 1:
			for _, side := range OrderedSides(handles) {
				for _, p := range handles[side].Point {
					if p.Type == wantType {
						return p.ID, nil
					}
				}
			}
		}
		return "", fmt.Errorf("%s handle is empty and node %q has several %s points: %s; name one", w.end, nodeKey, w.kind, list)
	}
	found, otherType := findPoint(handles, "", name, wantType)
	if found {
		return name, nil
	}
	if len(name) > 2 && slices.Contains(Sides, name[:1]) && (name[1] == ':' || name[1] == '-') {
		f, o := findPoint(handles, name[:1], name[2:], wantType)
		if f {
			return name[2:], nil
		}
		otherType = otherType || o
	}
	if otherType {
		msg := fmt.Sprintf("%s handle %q of node %q is an %s point, but the %s of an edge must be an %s point",
			w.end, name, nodeKey, pointWords[w.other].kind, w.end, w.kind)
		if n == 0 {
			return "", errors.New(msg + "; " + none)
		}
		return "", fmt.Errorf("%s; its %ss are: %s", msg, w.kind, list)
	}
	if n == 0 {
		return "", errors.New(none)
	}
	return "", fmt.Errorf("node %q has no %s handle %q; its %ss are: %s", nodeKey, w.kind, name, w.kind, list)
}

// CheckEdgesKeepHandles checks that node n, about to have the handles handles (give
// EffectiveHandles of the changed node), still has every point its edges among edges
// use: the source handle of an edge leaving n must be one of its outputs, the target
// handle of an edge arriving at n one of its inputs.
func CheckEdgesKeepHandles(n Node, handles map[string]HandleGroup, edges []Edge) error {
	for _, e := range edges {
		if e.Source == n.Key {
			if found, _ := findPoint(handles, "", e.SourceHandle, "out"); !found {
				return fmt.Errorf("the changed node %q would drop output %q used by edge %q (to %s): keep that point or delete the edge first",
					n.Key, e.SourceHandle, e.Key, e.Target)
			}
		}
		if e.Target == n.Key {
			if found, _ := findPoint(handles, "", e.TargetHandle, "in"); !found {
				return fmt.Errorf("the changed node %q would drop input %q used by edge %q (from %s): keep that point or delete the edge first",
					n.Key, e.TargetHandle, e.Key, e.Source)
			}
		}
	}
	return nil
}
