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

// ResolveCode sets every node's Process to the code of its type's config, or to ""
// when its type has no config (a built-in type, or one the document lacks).
func (d *Document) ResolveCode() {
	code := make(map[string]string, len(d.NodeConfigs))
	for _, c := range d.NodeConfigs {
		code[c.Key] = c.Process
	}
	for i := range d.Nodes {
		d.Nodes[i].Process = code[d.Nodes[i].Type]
	}
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
// is code given to a node whose type has no config (there is nowhere to keep it).
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
			if n.Process != "" {
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
