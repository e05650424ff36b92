package server

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server/nodiusgraph"
)

// converter turns a datasource.Action into the editing messages the Nodius
// server's own converter (docs/protocol.md, "the action converter") makes of
// the same proposal: instructions that set posX/posY (move) or a field path
// (update), nodes and edges created whole, keys deleted with the node's edges.
// Unlike the server's, which names sheet "0" for every instruction, it names the
// sheet the node is on, read from the live graph g; and it keeps the action's
// order, step by step, trying each step on g so that a later step sees the earlier
// ones and a step the graph does not allow is found before anything is sent.
type converter struct {
	g        *nodiusgraph.Graph
	defaults map[string]typeDefaults // by node type: what a new node starts with
	steps    []step
	created  datasource.Created
}

func (c *converter) add(st step) error {
	if err := st.onto(c.g); err != nil {
		return err
	}
	c.steps = append(c.steps, st)
	return nil
}

func (c *converter) action(a datasource.Action, depth int) error {
	missing := func() error { return fmt.Errorf("action %s has no payload", a.Type) }
	gk := c.g.Key()
	switch a.Type {
	case datasource.MoveNodeAction:
		if a.MoveNode == nil {
			return missing()
		}
		sheet, err := c.nodeSheet(a.MoveNode.NodeKey)
		if err != nil {
			return err
		}
		return c.add(step{kind: stepInstructions, instructions: []json.RawMessage{
			instruction(nodiusgraph.Set(a.MoveNode.PosX, "posX"), sheet, a.MoveNode.NodeKey, "animatePos"),
			instruction(nodiusgraph.Set(a.MoveNode.PosY, "posY"), sheet, a.MoveNode.NodeKey, "animatePos"),
		}})
	case datasource.UpdateNodeAction:
		if a.UpdateNode == nil {
			return missing()
		}
		key := a.UpdateNode.NodeKey
		if _, ok := a.UpdateNode.Changes["process"]; ok {
			// On the server a node's code is its type's (NodeTypeConfig node.process),
			// which a graph's editing socket does not write: a configure_node_type
			// changes it (nodetype.go).
			return fmt.Errorf("node %s: a node's code is its type's on the Nodius server: change the code of its type (propose_configure_node_type), which every node of the type runs", key)
		}
		sheet, err := c.nodeSheet(key)
		if err != nil {
			return err
		}
		node, _ := c.g.Sheets[sheet].Node(key)
		paths := make([]string, 0, len(a.UpdateNode.Changes))
		for p := range a.UpdateNode.Changes {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var list []json.RawMessage
		for _, p := range paths {
			in := setAlong(node, strings.Split(p, "."), plain(a.UpdateNode.Changes[p]))
			list = append(list, instruction(in, sheet, key, "triggerHtmlRender"))
		}
		if len(list) == 0 {
			return nil
		}
		return c.add(step{kind: stepInstructions, instructions: list})
	case datasource.CreateNodeAction:
		if a.CreateNode == nil {
			return missing()
		}
		p := *a.CreateNode
		key := p.NodeKey
		if key == "" {
			key = newKey()
		}
		sheet := p.Sheet
		if sheet == "" {
			sheet = "0"
		}
		// As createNodeFromConfig: the type's handles, size, data and version,
		// unless the proposal gives its own.
		def := c.defaults[p.TypeKey]
		data := orDefault(def.data, map[string]any{})
		if p.Data != nil {
			data = plain(p.Data)
		}
		handles := plain(p.Handles)
		if m, _ := handles.(map[string]any); len(m) == 0 {
			handles = orDefault(def.handles, map[string]any{})
		}
		size := orDefault(def.size, map[string]any{"width": 200, "height": 100})
		version := orDefault(def.version, 1)
		node := map[string]any{"_key": key, "graphKey": gk, "sheet": sheet, "type": p.TypeKey, "typeVersion": version,
			"posX": p.PosX, "posY": p.PosY, "size": size, "handles": handles, "data": data}
		if p.Process != "" {
			node["process"] = p.Process
		}
		if err := c.add(step{kind: stepCreate, sheet: sheet, nodes: []map[string]any{node}}); err != nil {
			return err
		}
		c.created.Nodes = append(c.created.Nodes, key)
		return nil
	case datasource.CreateEdgeAction:
		if a.CreateEdge == nil {
			return missing()
		}
		p := *a.CreateEdge
		key := p.EdgeKey
		if key == "" {
			key = newKey()
		}
		sheet := p.Sheet
		if sheet == "" {
			if s, ok := c.g.NodeSheet(p.SourceKey); ok {
				sheet = s
			} else {
				sheet = "0"
			}
		}
		edge := map[string]any{"_key": key, "graphKey": gk, "sheet": sheet, "source": p.SourceKey, "sourceHandle": p.SourceHandle,
			"target": p.TargetKey, "targetHandle": p.TargetHandle}
		if p.Label != "" {
			edge["label"] = p.Label
		}
		if err := c.add(step{kind: stepCreate, sheet: sheet, edges: []map[string]any{edge}}); err != nil {
			return err
		}
		c.created.Edges = append(c.created.Edges, key)
		return nil
	case datasource.DeleteNodeAction:
		if a.DeleteNode == nil {
			return missing()
		}
		key := a.DeleteNode.NodeKey
		sheet, err := c.nodeSheet(key)
		if err != nil {
			return err
		}
		return c.add(step{kind: stepDelete, sheet: sheet, nodeKeys: []string{key},
			edgeKeys: withNodeEdges(c.g, sheet, []string{key}, nil)})
	case datasource.DeleteEdgeAction:
		if a.DeleteEdge == nil {
			return missing()
		}
		key := a.DeleteEdge.EdgeKey
		sheet, ok := c.g.EdgeSheet(key)
		if !ok {
			return &nodiusgraph.Refusal{Message: fmt.Sprintf("edge %s not found in the live graph", key)}
		}
		return c.add(step{kind: stepDelete, sheet: sheet, edgeKeys: []string{key}})
	case datasource.BatchAction:
		if a.Batch == nil {
			return missing()
		}
		if depth >= datasource.MaxBatchDepth {
			return fmt.Errorf("batches nested more than %d deep", datasource.MaxBatchDepth)
		}
		for i, sub := range a.Batch.Actions {
			if err := c.action(sub, depth+1); err != nil {
				return fmt.Errorf("batch step %d (%s): %w", i+1, sub.Type, err)
			}
		}
		return nil
	}
	// The server's own types arrive lowered (datasource.AssignKeys); one that did not
	// goes through the same single changes here.
	if l, ok := datasource.Lower(a, newKey); ok {
		return c.action(l, depth+1)
	}
	return fmt.Errorf("the Nodius server source cannot apply a %q action", a.Type)
}

func (c *converter) nodeSheet(key string) (string, error) {
	if s, ok := c.g.NodeSheet(key); ok {
		return s, nil
	}
	return "", &nodiusgraph.Refusal{Message: fmt.Sprintf("node %s not found in the live graph", key)}
}

// setAlong is the instruction setting path to v on node. The server's SET needs
// every key but the last to exist; where the node lacks one, the first missing key
// is set to the nested objects that lead to v, so "data.a.b" on a node without
// data.a works as it does on every other source.
func setAlong(node map[string]any, path []string, v any) nodiusgraph.Instruction {
	var cur any = node
	for i := 0; i < len(path)-1; i++ {
		m, ok := cur.(map[string]any)
		next, has := m[path[i]]
		if !ok || !has || next == nil {
			if ok {
				val := v
				for j := len(path) - 1; j > i; j-- {
					val = map[string]any{path[j]: val}
				}
				return nodiusgraph.Set(val, path[:i+1]...)
			}
			break
		}
		cur = next
	}
	return nodiusgraph.Set(v, path...)
}

// instruction is one element of applyInstructionToGraph.
func instruction(in nodiusgraph.Instruction, sheet, nodeKey, hint string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"i": in, "sheetId": sheet, "nodeId": nodeKey, hint: true})
	return b
}

// orDefault is a copy of a node type's default, or fallback when the type has none.
func orDefault(def, fallback any) any {
	if def == nil {
		return fallback
	}
	return nodiusgraph.Clone(def)
}

// plain turns a value of the data source model into plain JSON values.
func plain(v any) any {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}
