package datasource

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// A node's code is its type's (Nodius's model): these helpers keep Node.Process,
// which retrieval, the read tools, inspect and the pictures read, equal to the code
// of the node's type, and say plainly which types have no code to show.

// WriteFormat is the format d is written in: its Format, or for FormatAuto
// Nodius's when every node's code is its type's (nothing would be lost), else the
// earlier one.
func (d Document) WriteFormat() Format {
	if d.Format != FormatAuto {
		return d.Format
	}
	code := make(map[string]string, len(d.NodeConfigs))
	for _, c := range d.NodeConfigs {
		code[c.Key] = c.Process
	}
	for _, n := range d.Nodes {
		if n.Process != code[n.Type] {
			return FormatEarlier
		}
	}
	return FormatNodius
}

// ResolveCode sets every node's Process to the code of its type's config; a node
// whose type has no config (a built-in type, or one the document lacks) gets its
// own process member (OwnProcess), usually none.
func (d *Document) ResolveCode() {
	code := make(map[string]string, len(d.NodeConfigs))
	for _, c := range d.NodeConfigs {
		code[c.Key] = c.Process
	}
	for i := range d.Nodes {
		n := &d.Nodes[i]
		if c, ok := code[n.Type]; ok {
			n.Process = c
		} else {
			n.Process = OwnProcess(*n)
		}
	}
}

// OwnProcess is the process member a node of a document in Nodius's format
// carries itself (kept in Extra; Nodius ignores it). Only a node whose type has
// no config shows it as its code: a node of a built-in type converted from the
// earlier format keeps its code there, as there is no type to hold it.
func OwnProcess(n Node) string { return n.ExtraString("process") }

// ExtraString is the string value of the unknown member k of n ("" when it is
// absent or not a JSON string).
func (n Node) ExtraString(k string) string {
	raw, ok := n.Extra[k]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// MissingTypes lists, sorted, the types used by nodes of d that are neither
// built-in nor defined by a config of d: the code of their nodes is unknown.
// It is empty for a document in the earlier format, whose nodes carry their code.
func (d Document) MissingTypes() []string {
	if d.Format == FormatEarlier {
		return nil
	}
	return MissingTypes(d.Nodes, d.NodeConfigs)
}

// MissingTypes lists, sorted, the non-built-in types of nodes that no config
// defines.
func MissingTypes(nodes []Node, configs []NodeConfig) []string {
	known := make(map[string]bool, len(configs))
	for _, c := range configs {
		known[c.Key] = true
	}
	seen := map[string]bool{}
	var out []string
	for _, n := range nodes {
		if n.Type == "" || known[n.Type] || seen[n.Type] || IsBuiltinType(n.Type) {
			continue
		}
		seen[n.Type] = true
		out = append(out, n.Type)
	}
	sort.Strings(out)
	return out
}

// MissingTypesNotice is one sentence saying which types' code is unknown, or ""
// when none is.
func MissingTypesNotice(types []string) string {
	if len(types) == 0 {
		return ""
	}
	q := make([]string, len(types))
	for i, t := range types {
		q[i] = fmt.Sprintf("%q", t)
	}
	if len(types) == 1 {
		return fmt.Sprintf("node type %s has no config here, so the code of its nodes is unknown", q[0])
	}
	return fmt.Sprintf("node types %s have no config here, so the code of their nodes is unknown", strings.Join(q, ", "))
}

// TypeCodeChanges returns, for a document in Nodius's format, the code each type
// gets from nodes whose Process differs from their type's code (a change made
// through a node: in this model it is a change of the type, so of every node of
// it). A conflict — two nodes of one type given different code — is an error, as
// is code given to a node whose type has no config (there is nowhere to keep it)
// unless the node has its own process member (see OwnProcess).
func (d Document) TypeCodeChanges() (map[string]string, error) {
	idx := make(map[string]int, len(d.NodeConfigs))
	for i, c := range d.NodeConfigs {
		idx[c.Key] = i
	}
	changes := map[string]string{}
	from := map[string]string{}
	for _, n := range d.Nodes {
		i, ok := idx[n.Type]
		if !ok {
			_, own := n.Extra["process"]
			if n.Process != "" && n.Process != OwnProcess(n) && !own {
				return nil, fmt.Errorf("node %q has code but its type %q has no config to hold it: in the Nodius model a node's code is its type's", n.Key, n.Type)
			}
			continue
		}
		if n.Process == d.NodeConfigs[i].Process {
			continue
		}
		if prev, ok := changes[n.Type]; ok && prev != n.Process {
			return nil, fmt.Errorf("nodes %q and %q of type %q were given different code: in the Nodius model every node of a type runs the type's code", from[n.Type], n.Key, n.Type)
		}
		changes[n.Type], from[n.Type] = n.Process, n.Key
	}
	return changes, nil
}

// setExtra sets one member of an Extra map, making the map when needed.
func setExtra(m *map[string]json.RawMessage, k string, v json.RawMessage) {
	if *m == nil {
		*m = map[string]json.RawMessage{}
	}
	(*m)[k] = v
}

// ToNodius converts a document to Nodius's format: the code of each type's nodes
// moves to the type's config (one made for a type without one), a built-in
// type's node keeps its code as its own process member (Nodius has no type to
// hold it); the bottom side B becomes D. Nodes of one type with different code cannot be converted: Nodius
// runs one code per type; the error names them. The result's nodes read as d's.
func (d Document) ToNodius() (Document, error) {
	if d.Format == FormatNodius {
		return d, nil
	}
	out := d
	out.Format = FormatNodius
	out.NodeConfigs = append([]NodeConfig(nil), d.NodeConfigs...)
	out.Nodes = append([]Node(nil), d.Nodes...)
	idx := make(map[string]int, len(out.NodeConfigs))
	for i, c := range out.NodeConfigs {
		idx[c.Key] = i
	}
	code := map[string]string{}
	from := map[string]string{}
	for i := range out.NodeConfigs {
		out.NodeConfigs[i].Handles = bottomIsD(out.NodeConfigs[i].Handles)
	}
	for i := range out.Nodes {
		n := &out.Nodes[i]
		n.Handles = bottomIsD(n.Handles)
		if IsBuiltinType(n.Type) {
			if _, hasConfig := idx[n.Type]; !hasConfig {
				n.Extra = cloneExtra(n.Extra)
				delete(n.Extra, "process")
				if n.Process != "" {
					raw, _ := json.Marshal(n.Process)
					setExtra(&n.Extra, "process", raw)
				}
				continue
			}
		}
		if prev, ok := code[n.Type]; ok && prev != n.Process {
			return Document{}, fmt.Errorf("nodes %q and %q are both of type %q but have different code; Nodius runs one code per type: give one of them a type of its own first", from[n.Type], n.Key, n.Type)
		}
		if _, ok := code[n.Type]; !ok {
			code[n.Type], from[n.Type] = n.Process, n.Key
		}
	}
	for t, c := range code {
		i, ok := idx[t]
		if !ok {
			if c == "" {
				continue // a type with neither config nor code: said missing
			}
			var handles map[string]HandleGroup
			for _, n := range out.Nodes {
				if n.Type == t {
					handles = n.Handles
					break
				}
			}
			out.NodeConfigs = append(out.NodeConfigs, NodeConfig{Key: t, DisplayName: t, Handles: handles})
			i = len(out.NodeConfigs) - 1
			idx[t] = i
		}
		out.NodeConfigs[i].Process = c
	}
	out.ResolveCode()
	return out, nil
}

// bottomIsD renames the earlier format's bottom side B to Nodius's D (edges name
// points by id, not side, so they are unchanged); h is not modified.
func bottomIsD(h map[string]HandleGroup) map[string]HandleGroup {
	b, ok := h["B"]
	if _, hasD := h["D"]; !ok || hasD {
		return h
	}
	out := make(map[string]HandleGroup, len(h))
	for k, v := range h {
		out[k] = v
	}
	delete(out, "B")
	out["D"] = b
	return out
}

func cloneExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// CodeFromTypes gives each node the code of its type (NodeConfig.Process) where the
// type has code, in place: a source that holds the real model (node types with
// node.process, nodes without code) gives its readers each node's code this way.
// A node of a type without code keeps what it carries itself.
func CodeFromTypes(nodes []Node, configs []NodeConfig) {
	code := make(map[string]string, len(configs))
	for _, c := range configs {
		if c.Process != "" {
			code[c.Key] = c.Process
		}
	}
	if len(code) == 0 {
		return
	}
	for i := range nodes {
		if c, ok := code[nodes[i].Type]; ok {
			nodes[i].Process = c
		}
	}
}
