package changetext

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// writeServer prints the action types only the Nodius server's assistant proposes
// (create_node_with_edges, configure_node_type, reorganize_layout, create_graph);
// false when a is not one of them. Code the server diffed is shown as a line diff,
// new code as added lines.
func writeServer(p printer, a datasource.Action) bool {
	line, code, numbered := p.line, p.code, p.numbered
	switch a.Type {
	case datasource.CreateNodeWithEdgesAction:
		c := a.CreateNodeWithEdges
		if c == nil {
			return false
		}
		line("+ %s", datasource.Describe(a))
		if c.Data != nil {
			line("  data: %s", compactJSON(c.Data))
		}
		for _, e := range c.Edges {
			lbl := ""
			if e.Label != "" {
				lbl = " [" + e.Label + "]"
			}
			if e.Direction == "out" {
				line("  + edge (new node):%s → %s:%s%s", e.HandleID, e.TargetNodeKey, e.TargetHandleID, lbl)
			} else {
				line("  + edge %s:%s → (new node):%s%s", e.TargetNodeKey, e.TargetHandleID, e.HandleID, lbl)
			}
		}
		return true
	case datasource.ConfigureNodeTypeAction:
		c := a.ConfigureNodeType
		if c == nil {
			return false
		}
		sign := "~"
		if c.Mode == "create" {
			sign = "+"
		}
		line("%s %s", sign, datasource.Describe(a))
		for _, l := range TypeFieldLines(*c) {
			line("  %s", l)
		}
		diffed := map[string]bool{}
		for _, d := range c.CodeDiffs {
			diffed[d.Field] = true
			line("  %s:", d.Field)
			numbered(LineDiff(d.Original, d.Modified))
		}
		if c.Process != "" && !diffed["process"] {
			line("  process:")
			numbered(Added(c.Process))
		}
		if len(c.ProcessPatches) > 0 && !diffed["process"] {
			line("  process patches:")
			for _, p := range c.ProcessPatches {
				code("-", p.Search)
				code("+", p.Replace)
			}
		}
		if len(c.Nodes) > 0 {
			line("  every node of this type changes with it: %s", strings.Join(c.Nodes, ", "))
		} else if c.Mode == "update" {
			line("  (no node of this type in the graph)")
		}
		return true
	case datasource.ReorganizeLayoutAction:
		r := a.ReorganizeLayout
		if r == nil {
			return false
		}
		line("~ %s", datasource.Describe(a))
		if len(r.Moves) == 0 {
			line("  nodes: %s", strings.Join(r.NodeKeys, ", "))
			line("  (the server computes the new positions when approved)")
			return true
		}
		for _, m := range r.Moves {
			line("  ~ move %s → (%g, %g)", m.NodeKey, m.PosX, m.PosY)
		}
		if n := len(r.NodeKeys) - len(r.Moves); n > 0 {
			line("  (%d node(s) already in place)", n)
		}
		return true
	case datasource.CreateGraphAction:
		if a.CreateGraph == nil {
			return false
		}
		line("+ %s", datasource.Describe(a))
		if d := a.CreateGraph.Description; d != "" {
			line("  description: %s", d)
		}
		return true
	}
	return false
}

// TypeFieldLines says, one line each, how a configure_node_type changes the type's
// fields other than its code: `displayName: "Old" → "New"`, an object changed key
// by key (`border.radius: 2 → 4`), a value replaced as compact JSON, whole.
func TypeFieldLines(c datasource.ConfigureNodeTypePayload) []string {
	var out []string
	show := func(v any) string {
		if v == nil {
			return "(none)"
		}
		return compactJSON(v) // whole: a person decides on all of it
	}
	for _, f := range datasource.TypeChanges(c) {
		if f.Field == "handles" {
			// Their points, unless that hides the change (a side's position, say):
			// then the whole JSON.
			if b, a := handlePoints(f.Before), handlePoints(f.After); c.Mode == "create" || c.Before == nil || !datasource.SameJSON(b, a) {
				f.Before, f.After = b, a
			}
		}
		if c.Mode == "create" || c.Before == nil { // nothing known of before (a server's proposal)
			out = append(out, fmt.Sprintf("%s: %s", f.Field, show(f.After)))
			continue
		}
		_, bObj := plain(f.Before).(map[string]any)
		_, aObj := plain(f.After).(map[string]any)
		if bObj && aObj { // key by key: only what changed
			out = append(out, FieldLines(f.Field, f.Before, true, f.After)...)
			continue
		}
		out = append(out, fmt.Sprintf("%s: %s → %s", f.Field, show(f.Before), show(f.After)))
	}
	return out
}

// handlePoints writes handles as their points, "L:0:in, R:0:out", a point that
// accepts one data type only with it ("R:0:out:number"); nil stays nil.
func handlePoints(v any) any {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	var h map[string]datasource.HandleGroup
	if json.Unmarshal(b, &h) != nil {
		return v
	}
	var pts []string
	for _, side := range datasource.OrderedSides(h) {
		for _, p := range h[side].Point {
			pt := side + ":" + p.ID + ":" + p.Type
			if p.Accept != "" && p.Accept != "any" {
				pt += ":" + p.Accept
			}
			pts = append(pts, pt)
		}
	}
	return strings.Join(pts, ", ")
}
