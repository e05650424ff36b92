package remote

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/nodiusapi"
)

// The server's assistant, once a proposal is approved, sends the approving client
// ai:apply_action: the proposal converted into editing messages by the server's
// action converter. The client applies it. What the person approved is known (the
// proposal that was shown), so what arrives is checked against it first: a server
// that is broken or hostile must not make the terminal apply more than was shown.
//
// The expected messages are the converter's, rule for rule: move_node is two SETs
// of posX and posY on the node; update_node one SET per changed field ("data.a.b"
// is the path data, a, b; any other key is one path element); create_node one
// node of the proposal's type on its sheet (default "0"), at its position, with
// its data when it gives some (the server chooses the key); create_edge one edge
// between the proposal's ends and handles; create_node_with_edges the node and
// one edge per connection, from or to the new node; delete_node the node's key;
// delete_edge the edge's key; batch all of its actions; reorganize_layout SETs of
// posX and posY of its nodes (the server computes the positions). Display hints
// (animatePos, triggerHtmlRender) and the keys the server chooses are not
// checked; everything else is, and each expected element may be used once.

// expectation is what an approved proposal may change.
type expectation struct {
	sets     []wantSet
	nodes    []wantNode
	edges    []wantEdge
	delNodes map[string]bool
	delEdges map[string]bool
}

type wantSet struct {
	node  string
	path  []string
	value any  // nil with anyValue: a position the server computes
	any   bool // any value (reorganize_layout)
	used  bool
}

type wantNode struct {
	typ, sheet string
	posX, posY *float64
	data       any
	used       bool
}

// wantEdge is an edge to create: source and target are node keys, except that
// one end may be the node created with it (newEnd "source" or "target"), whose
// key the server chooses.
type wantEdge struct {
	source, sourceHandle, target, targetHandle string
	newEnd                                     string
	used                                       bool
}

func expect(a datasource.Action) (*expectation, error) {
	e := &expectation{delNodes: map[string]bool{}, delEdges: map[string]bool{}}
	if err := e.add(a); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *expectation) add(a datasource.Action) error {
	switch {
	case a.Type == datasource.MoveNodeAction && a.MoveNode != nil:
		p := a.MoveNode
		e.sets = append(e.sets, wantSet{node: p.NodeKey, path: []string{"posX"}, value: p.PosX},
			wantSet{node: p.NodeKey, path: []string{"posY"}, value: p.PosY})
	case a.Type == datasource.UpdateNodeAction && a.UpdateNode != nil:
		for k, v := range a.UpdateNode.Changes {
			path := []string{k}
			if strings.HasPrefix(k, "data.") {
				path = strings.Split(k, ".")
			}
			e.sets = append(e.sets, wantSet{node: a.UpdateNode.NodeKey, path: path, value: v})
		}
	case a.Type == datasource.CreateNodeAction && a.CreateNode != nil:
		p := a.CreateNode
		w := wantNode{typ: p.TypeKey, sheet: orZero(p.Sheet), data: p.Data}
		if p.PosX != 0 || p.PosY != 0 {
			x, y := p.PosX, p.PosY
			w.posX, w.posY = &x, &y
		}
		e.nodes = append(e.nodes, w)
	case a.Type == datasource.CreateNodeWithEdgesAction && a.CreateNodeWithEdges != nil:
		p := a.CreateNodeWithEdges
		e.nodes = append(e.nodes, wantNode{typ: p.TypeKey, sheet: orZero(p.Sheet), posX: p.PosX, posY: p.PosY, data: p.Data})
		for _, c := range p.Edges {
			if c.Direction == "out" {
				e.edges = append(e.edges, wantEdge{sourceHandle: c.HandleID, target: c.TargetNodeKey, targetHandle: c.TargetHandleID, newEnd: "source"})
			} else {
				e.edges = append(e.edges, wantEdge{source: c.TargetNodeKey, sourceHandle: c.TargetHandleID, targetHandle: c.HandleID, newEnd: "target"})
			}
		}
	case a.Type == datasource.CreateEdgeAction && a.CreateEdge != nil:
		p := a.CreateEdge
		e.edges = append(e.edges, wantEdge{source: p.SourceKey, sourceHandle: p.SourceHandle, target: p.TargetKey, targetHandle: p.TargetHandle})
	case a.Type == datasource.DeleteNodeAction && a.DeleteNode != nil:
		e.delNodes[a.DeleteNode.NodeKey] = true
		for _, ed := range a.DeleteNode.RemovedEdges {
			e.delEdges[ed.Key] = true // the client adds them itself; a server may name them
		}
	case a.Type == datasource.DeleteEdgeAction && a.DeleteEdge != nil:
		e.delEdges[a.DeleteEdge.EdgeKey] = true
	case a.Type == datasource.BatchAction && a.Batch != nil:
		for _, sub := range a.Batch.Actions {
			if err := e.add(sub); err != nil {
				return err
			}
		}
	case a.Type == datasource.ReorganizeLayoutAction && a.ReorganizeLayout != nil:
		for _, k := range a.ReorganizeLayout.NodeKeys {
			e.sets = append(e.sets, wantSet{node: k, path: []string{"posX"}, any: true}, wantSet{node: k, path: []string{"posY"}, any: true})
		}
	case a.Type == datasource.ConfigureNodeTypeAction, a.Type == datasource.CreateGraphAction:
		// Nothing to apply on the graph: the server sends no change for these.
	default:
		return fmt.Errorf("the proposal (%s) is not one this client can check a change against", a.Type)
	}
	return nil
}

func orZero(sheet string) string {
	if sheet == "" {
		return "0"
	}
	return sheet
}

// checkApply returns nil when everything a asks to change is part of the
// approved proposal p on graphKey, else an error saying the first thing that is
// not (nothing of a is then to be applied).
func checkApply(p datasource.Action, graphKey string, a nodiusapi.ApplyAction) error {
	e, err := expect(p)
	if err != nil {
		return err
	}
	for i, raw := range a.Instructions {
		var in struct {
			I struct {
				O int             `json:"o"`
				P []string        `json:"p"`
				V json.RawMessage `json:"v"`
			} `json:"i"`
			NodeID string `json:"nodeId"`
			EdgeID string `json:"edgeId"`
		}
		if json.Unmarshal(raw, &in) != nil {
			return fmt.Errorf("instruction %d is not an instruction", i+1)
		}
		if in.EdgeID != "" || in.NodeID == "" || in.I.O != 1 {
			return fmt.Errorf("instruction %d (%s) is not a change the proposal makes", i+1, short(raw))
		}
		var v any
		if len(in.I.V) > 0 && json.Unmarshal(in.I.V, &v) != nil {
			return fmt.Errorf("instruction %d has an unreadable value", i+1)
		}
		if !e.useSet(in.NodeID, in.I.P, v) {
			return fmt.Errorf("instruction %d sets %s of node %s%s, which the proposal does not change", i+1,
				strings.Join(in.I.P, "."), in.NodeID, valueText(in.I.V))
		}
	}
	created := map[string]bool{}
	for i, raw := range a.NodesToCreate {
		var n struct {
			Key      string   `json:"_key"`
			GraphKey string   `json:"graphKey"`
			Type     string   `json:"type"`
			Sheet    string   `json:"sheet"`
			PosX     *float64 `json:"posX"`
			PosY     *float64 `json:"posY"`
			Data     any      `json:"data"`
		}
		if json.Unmarshal(raw, &n) != nil || n.Key == "" {
			return fmt.Errorf("node %d to create is not a node", i+1)
		}
		if n.GraphKey != "" && n.GraphKey != graphKey {
			return fmt.Errorf("node %s to create is of graph %q, not %q", n.Key, n.GraphKey, graphKey)
		}
		if !e.useNode(n.Type, orZero(n.Sheet), n.PosX, n.PosY, n.Data) {
			return fmt.Errorf("the proposal creates no node like %s (type %s on sheet %s)", short(raw), n.Type, orZero(n.Sheet))
		}
		created[n.Key] = true
	}
	for i, raw := range a.EdgesToCreate {
		var ed struct {
			Key          string `json:"_key"`
			GraphKey     string `json:"graphKey"`
			Source       string `json:"source"`
			SourceHandle string `json:"sourceHandle"`
			Target       string `json:"target"`
			TargetHandle string `json:"targetHandle"`
		}
		if json.Unmarshal(raw, &ed) != nil || ed.Key == "" {
			return fmt.Errorf("edge %d to create is not an edge", i+1)
		}
		if ed.GraphKey != "" && ed.GraphKey != graphKey {
			return fmt.Errorf("edge %s to create is of graph %q, not %q", ed.Key, ed.GraphKey, graphKey)
		}
		if !e.useEdge(ed.Source, ed.SourceHandle, ed.Target, ed.TargetHandle, created) {
			return fmt.Errorf("the proposal creates no edge %s:%s → %s:%s", ed.Source, ed.SourceHandle, ed.Target, ed.TargetHandle)
		}
	}
	for _, k := range a.NodeKeysToDelete {
		if !e.delNodes[k] {
			return fmt.Errorf("it deletes node %s, which the proposal does not delete", k)
		}
		delete(e.delNodes, k)
	}
	for _, k := range a.EdgeKeysToDelete {
		if !e.delEdges[k] {
			return fmt.Errorf("it deletes edge %s, which the proposal does not delete", k)
		}
		delete(e.delEdges, k)
	}
	return nil
}

func (e *expectation) useSet(node string, path []string, v any) bool {
	for i := range e.sets {
		w := &e.sets[i]
		if w.used || w.node != node || strings.Join(w.path, "\x00") != strings.Join(path, "\x00") {
			continue
		}
		if !w.any && !datasource.SameJSON(w.value, v) {
			continue
		}
		if w.any {
			if _, ok := v.(float64); !ok {
				continue // a position is a number
			}
		}
		w.used = true
		return true
	}
	return false
}

func (e *expectation) useNode(typ, sheet string, x, y *float64, data any) bool {
	for i := range e.nodes {
		w := &e.nodes[i]
		if w.used || w.typ != typ || w.sheet != sheet {
			continue
		}
		if w.posX != nil && (x == nil || *x != *w.posX) || w.posY != nil && (y == nil || *y != *w.posY) {
			continue
		}
		if w.data != nil && !datasource.SameJSON(w.data, data) {
			continue
		}
		w.used = true
		return true
	}
	return false
}

func (e *expectation) useEdge(source, sourceHandle, target, targetHandle string, created map[string]bool) bool {
	for i := range e.edges {
		w := &e.edges[i]
		if w.used || w.sourceHandle != sourceHandle || w.targetHandle != targetHandle {
			continue
		}
		switch w.newEnd {
		case "source":
			if !created[source] || target != w.target {
				continue
			}
		case "target":
			if !created[target] || source != w.source {
				continue
			}
		default:
			if source != w.source || target != w.target {
				continue
			}
		}
		w.used = true
		return true
	}
	return false
}

// short is raw cut to 80 bytes, for a sentence.
func short(raw json.RawMessage) string {
	s := string(raw)
	if len(s) > 80 {
		s = strings.ToValidUTF8(s[:80], "") + "…"
	}
	return s
}

func valueText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	return " to " + short(raw)
}
