package changetext

import (
	"sort"
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
		line("~ %s", datasource.Describe(a))
		for _, f := range [][2]string{{"description", c.Description}, {"category", c.Category}, {"icon", c.Icon}} {
			if f[1] != "" {
				line("  %s: %s", f[0], f[1])
			}
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
		if len(c.Handles) > 0 {
			sides := make([]string, 0, len(c.Handles))
			for s := range c.Handles {
				sides = append(sides, s)
			}
			sort.Strings(sides)
			for _, s := range sides {
				line("  handles %s: %s", s, compactJSON(c.Handles[s]))
			}
		}
		if len(c.Nodes) > 0 {
			line("  every node of this type runs the new code: %s", strings.Join(c.Nodes, ", "))
		} else {
			line("  (the server writes the node type itself when approved)")
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
