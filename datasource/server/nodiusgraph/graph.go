// Package nodiusgraph holds a Nodius graph the way the Nodius server holds it in
// memory (the graph document and, per sheet, its nodes and edges as JSON objects)
// and changes it the way the server's editing protocol does: instructions applied to
// one node or edge, batches of nodes and edges created or deleted, with the server's
// checks and its sentences when it refuses. The server data source replays the
// editing messages a registration answers onto the saved graph with it, and the
// stand-in server (servertest) edits its graph with it, so both agree by
// construction with each other and, through the recorded transcripts, with the real
// server.
package nodiusgraph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/nodius/nodius-ai/datasource"
)

// Graph is a graph document with its sheets. Nodes and edges are kept as the JSON
// objects the server sends, so fields this client does not know survive.
type Graph struct {
	// Doc is the graph document without _sheets (_key, name, sheetsList,
	// lastUpdatedTime, ...).
	Doc    map[string]any
	Sheets map[string]*Sheet
}

// Sheet is one sheet's nodes and edges, in the order they were added.
type Sheet struct {
	Nodes []map[string]any
	Edges []map[string]any
}

// Key is the graph's _key.
func (g *Graph) Key() string { s, _ := g.Doc["_key"].(string); return s }

// LastUpdated is the document's lastUpdatedTime (ms), the moment of the last save.
func (g *Graph) LastUpdated() int64 {
	switch v := g.Doc["lastUpdatedTime"].(type) {
	case float64:
		return int64(v)
	case json.Number:
		n, _ := v.Int64()
		return n
	}
	return 0
}

// SheetIDs lists the sheets, in order.
func (g *Graph) SheetIDs() []string {
	ids := make([]string, 0, len(g.Sheets))
	for id := range g.Sheets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Parse reads the answer of POST /api/graph/get {retrieveGraph:{token, buildGraph:true}}:
// the graph document with _sheets {id: {nodes, edges}}. An empty or null body (the
// server's answer for an unknown key) gives ok false.
func Parse(body []byte) (g *Graph, ok bool, err error) {
	var doc map[string]any
	if len(bytesTrim(body)) == 0 || string(bytesTrim(body)) == "null" {
		return nil, false, nil
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, false, err
	}
	if doc == nil {
		return nil, false, nil
	}
	g = &Graph{Doc: doc, Sheets: map[string]*Sheet{}}
	raw, _ := doc["_sheets"].(map[string]any)
	delete(doc, "_sheets")
	for id, s := range raw {
		sm, _ := s.(map[string]any)
		sh := &Sheet{}
		for _, n := range objects(sm["nodes"]) {
			if k, _ := n["_key"].(string); k != "" && sh.node(k) < 0 {
				sh.Nodes = append(sh.Nodes, n)
			}
		}
		for _, e := range objects(sm["edges"]) {
			if k, _ := e["_key"].(string); k != "" && sh.edge(k) < 0 {
				sh.Edges = append(sh.Edges, e)
			}
		}
		g.Sheets[id] = sh
	}
	// A sheet named in sheetsList but absent from _sheets is an empty sheet.
	if list, ok := doc["sheetsList"].(map[string]any); ok {
		for id := range list {
			if g.Sheets[id] == nil {
				g.Sheets[id] = &Sheet{}
			}
		}
	}
	return g, true, nil
}

func bytesTrim(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// objects reads a list of objects, or the values of an object (an edge map).
func objects(v any) []map[string]any {
	var out []map[string]any
	switch v := v.(type) {
	case []any:
		for _, x := range v {
			switch x := x.(type) {
			case map[string]any:
				out = append(out, x)
			case []any: // an edge map's value: a list of edges
				out = append(out, objects(x)...)
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, objects([]any{v[k]})...)
		}
	}
	return out
}

// MarshalJSON writes the graph as /api/graph/get sends it.
func (g *Graph) MarshalJSON() ([]byte, error) {
	doc := make(map[string]any, len(g.Doc)+1)
	for k, v := range g.Doc {
		doc[k] = v
	}
	sheets := map[string]any{}
	for id, s := range g.Sheets {
		nodes, edges := s.Nodes, s.Edges
		if nodes == nil {
			nodes = []map[string]any{}
		}
		if edges == nil {
			edges = []map[string]any{}
		}
		sheets[id] = map[string]any{"nodes": nodes, "edges": edges}
	}
	doc["_sheets"] = sheets
	return json.Marshal(doc)
}

// Clone deep-copies the graph.
func (g *Graph) Clone() *Graph {
	out := &Graph{Doc: Clone(g.Doc).(map[string]any), Sheets: map[string]*Sheet{}}
	for id, s := range g.Sheets {
		c := &Sheet{}
		for _, n := range s.Nodes {
			c.Nodes = append(c.Nodes, Clone(n).(map[string]any))
		}
		for _, e := range s.Edges {
			c.Edges = append(c.Edges, Clone(e).(map[string]any))
		}
		out.Sheets[id] = c
	}
	return out
}

// DropDanglingEdges removes, sheet by sheet, the edges whose source or target is
// not a node of that sheet, and returns their keys. The Nodius server does the same
// when it loads a graph for editing (and saves it without them), so the live graph
// never has them: an edit naming one — deleting a node with its edges — would be
// refused whole ("Edge with _key … not found").
func (g *Graph) DropDanglingEdges() []string {
	var dropped []string
	for _, id := range g.SheetIDs() {
		sh := g.Sheets[id]
		nodes := make(map[any]bool, len(sh.Nodes))
		for _, n := range sh.Nodes {
			nodes[n["_key"]] = true
		}
		sh.Edges = slices.DeleteFunc(sh.Edges, func(e map[string]any) bool {
			if nodes[e["source"]] && nodes[e["target"]] {
				return false
			}
			k, _ := e["_key"].(string)
			dropped = append(dropped, k)
			return true
		})
	}
	return dropped
}

func (s *Sheet) node(key string) int {
	return slices.IndexFunc(s.Nodes, func(n map[string]any) bool { return n["_key"] == key })
}

func (s *Sheet) edge(key string) int {
	return slices.IndexFunc(s.Edges, func(e map[string]any) bool { return e["_key"] == key })
}

// Node returns a node of the sheet.
func (s *Sheet) Node(key string) (map[string]any, bool) {
	if i := s.node(key); i >= 0 {
		return s.Nodes[i], true
	}
	return nil, false
}

// Edge returns an edge of the sheet.
func (s *Sheet) Edge(key string) (map[string]any, bool) {
	if i := s.edge(key); i >= 0 {
		return s.Edges[i], true
	}
	return nil, false
}

// EdgesOf lists the keys of the sheet's edges whose source or target is the node,
// those leaving it first, as the web client collects them before a delete.
func (s *Sheet) EdgesOf(nodeKey string) []string {
	var out []string
	for _, e := range s.Edges {
		if e["source"] == nodeKey {
			out = append(out, e["_key"].(string))
		}
	}
	for _, e := range s.Edges {
		if e["target"] == nodeKey && e["source"] != nodeKey {
			out = append(out, e["_key"].(string))
		}
	}
	return out
}

// NodeSheet says on which sheet a node is.
func (g *Graph) NodeSheet(key string) (string, bool) {
	for _, id := range g.SheetIDs() {
		if g.Sheets[id].node(key) >= 0 {
			return id, true
		}
	}
	return "", false
}

// EdgeSheet says on which sheet an edge is.
func (g *Graph) EdgeSheet(key string) (string, bool) {
	for _, id := range g.SheetIDs() {
		if g.Sheets[id].edge(key) >= 0 {
			return id, true
		}
	}
	return "", false
}

// Refusal is the server's refusal of an editing message: Message is its sentence.
type Refusal struct{ Message string }

func (r *Refusal) Error() string { return r.Message }

func refuse(format string, args ...any) error { return &Refusal{Message: fmt.Sprintf(format, args...)} }

// GraphInstruction is one element of applyInstructionToGraph's instructions: an
// instruction for one node or edge of one sheet. Other fields (animatePos,
// triggerHtmlRender, ...) are display hints kept as they came.
type GraphInstruction struct {
	I       Instruction `json:"i"`
	SheetID string      `json:"sheetId"`
	NodeID  string      `json:"nodeId,omitempty"`
	EdgeID  string      `json:"edgeId,omitempty"`
}

// ApplyInstructions applies applyInstructionToGraph's instructions as the server
// does: every target is checked first, then the instructions are applied in order
// to copies, and the graph changes only when all succeed.
func (g *Graph) ApplyInstructions(list []GraphInstruction) error {
	type target struct {
		sheet string
		edge  bool
		key   string
	}
	cur := map[target]any{}
	var order []target
	for _, in := range list {
		sh := g.Sheets[in.SheetID]
		if sh == nil {
			return refuse("Sheet with id %s not found", in.SheetID)
		}
		if in.NodeID == "" && in.EdgeID == "" {
			return refuse("NodeId and EdgeId can't be null at the same time")
		}
		var t target
		if in.NodeID != "" {
			t = target{in.SheetID, false, in.NodeID}
			if _, seen := cur[t]; !seen {
				n, ok := sh.Node(in.NodeID)
				if !ok {
					return refuse("Node with id %s not found", in.NodeID)
				}
				cur[t] = Clone(n)
				order = append(order, t)
			}
		} else {
			t = target{in.SheetID, true, in.EdgeID}
			if _, seen := cur[t]; !seen {
				e, ok := sh.Edge(in.EdgeID)
				if !ok {
					return refuse("edge with id %s not found", in.EdgeID)
				}
				cur[t] = Clone(e)
				order = append(order, t)
			}
		}
		if err := in.I.Validate(); err != nil {
			return refuse("Invalid instruction:%s", err.Error())
		}
	}
	for _, in := range list {
		t := target{in.SheetID, in.NodeID == "", in.NodeID}
		if t.edge {
			t.key = in.EdgeID
		}
		nv, err := Apply(cur[t], in.I)
		if err != nil {
			if t.edge {
				return refuse("Error while parsing instruction on edge:%s", err.Error())
			}
			return refuse("Error while parsing instruction on Node; %s", err.Error())
		}
		cur[t] = nv
	}
	for _, t := range order {
		obj, ok := cur[t].(map[string]any)
		if !ok {
			return refuse("instruction left %s %s without an object", kind(t.edge), t.key)
		}
		sh := g.Sheets[t.sheet]
		if t.edge {
			sh.Edges[sh.edge(t.key)] = obj
		} else {
			sh.Nodes[sh.node(t.key)] = obj
		}
	}
	return nil
}

func kind(edge bool) string {
	if edge {
		return "edge"
	}
	return "node"
}

// BatchCreate adds nodes and edges to a sheet as batchCreateElements does, with its
// checks (graph key, sheet, unique keys, edge ends on the sheet).
func (g *Graph) BatchCreate(sheetID string, nodes, edges []map[string]any) error {
	sh := g.Sheets[sheetID]
	if sh == nil {
		return refuse("Sheet with id %s not found", sheetID)
	}
	gk := g.Key()
	adding := map[string]bool{}
	for _, n := range nodes {
		key, _ := n["_key"].(string)
		switch {
		case n["graphKey"] != gk:
			return refuse("Node %s has invalid graphKey: expected %s, got %v", key, gk, jsStr(n["graphKey"]))
		case n["sheet"] != sheetID:
			return refuse("Node %s has invalid sheet: expected %s, got %v", key, sheetID, jsStr(n["sheet"]))
		case sh.node(key) >= 0:
			return refuse("Node with _key %s already exists", key)
		case adding[key]:
			return refuse("Duplicate node _key %s in batch", key)
		}
		adding[key] = true
	}
	addingEdge := map[string]bool{}
	for _, e := range edges {
		key, _ := e["_key"].(string)
		src, _ := e["source"].(string)
		dst, _ := e["target"].(string)
		switch {
		case e["graphKey"] != gk:
			return refuse("Edge %s has invalid graphKey: expected %s, got %v", key, gk, jsStr(e["graphKey"]))
		case e["sheet"] != sheetID:
			return refuse("Edge %s has invalid sheet: expected %s, got %v", key, sheetID, jsStr(e["sheet"]))
		case sh.edge(key) >= 0:
			return refuse("Edge with _key %s already exists", key)
		case addingEdge[key]:
			return refuse("Duplicate edge _key %s in batch", key)
		case sh.node(src) < 0 && !adding[src]:
			return refuse("Edge %s has invalid source: node %s not found", key, src)
		case sh.node(dst) < 0 && !adding[dst]:
			return refuse("Edge %s has invalid target: node %s not found", key, dst)
		}
		addingEdge[key] = true
	}
	for _, n := range nodes {
		sh.Nodes = append(sh.Nodes, Clone(n).(map[string]any))
	}
	for _, e := range edges {
		sh.Edges = append(sh.Edges, Clone(e).(map[string]any))
	}
	return nil
}

func jsStr(v any) any {
	if v == nil {
		return "undefined"
	}
	return v
}

// BatchDelete removes nodes and edges of a sheet as batchDeleteElements does: every
// key must exist on that sheet, and something must be named. The nodes' edges are
// not removed unless named (the client names them).
func (g *Graph) BatchDelete(sheetID string, nodeKeys, edgeKeys []string) error {
	sh := g.Sheets[sheetID]
	if sh == nil {
		return refuse("Sheet with id %s not found", sheetID)
	}
	for _, k := range nodeKeys {
		if sh.node(k) < 0 {
			return refuse("Node with _key %s not found", k)
		}
	}
	for _, k := range edgeKeys {
		if sh.edge(k) < 0 {
			return refuse("Edge with _key %s not found", k)
		}
	}
	if len(nodeKeys) == 0 && len(edgeKeys) == 0 {
		return refuse("No elements to delete (all edges are undeletable or no elements provided)")
	}
	for _, k := range edgeKeys {
		if i := sh.edge(k); i >= 0 {
			sh.Edges = slices.Delete(sh.Edges, i, i+1)
		}
	}
	for _, k := range nodeKeys {
		if i := sh.node(k); i >= 0 {
			sh.Nodes = slices.Delete(sh.Nodes, i, i+1)
		}
	}
	return nil
}

// Message is an editing message as it travels (and as missingMessages holds it).
type Message struct {
	Type         string             `json:"type"`
	Instructions []GraphInstruction `json:"instructions,omitempty"`
	SheetID      string             `json:"sheetId,omitempty"`
	Nodes        []map[string]any   `json:"nodes,omitempty"`
	Edges        []map[string]any   `json:"edges,omitempty"`
	NodeKeys     []string           `json:"nodeKeys,omitempty"`
	EdgeKeys     []string           `json:"edgeKeys,omitempty"`
}

// ErrNotEditing is returned by Replay for a message that does not change the graph
// the way a replay can (sheet creation and the like): the caller says the replay
// is incomplete.
var ErrNotEditing = errors.New("not a graph editing message")

// Replay applies one message of a sheet's history (missingMessages of a
// registration on sheet historySheet) to the graph. The server files an
// applyInstructionToGraph message under every sheet it touches, so only the
// instructions for historySheet are applied here; a batch is filed once, under the
// sender's sheet, and applies to its own sheetId.
func (g *Graph) Replay(raw json.RawMessage, historySheet string) error {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	switch m.Type {
	case "applyInstructionToGraph":
		var mine []GraphInstruction
		for _, in := range m.Instructions {
			if in.SheetID == historySheet {
				mine = append(mine, in)
			}
		}
		if len(mine) == 0 {
			return nil
		}
		return g.ApplyInstructions(mine)
	case "batchCreateElements":
		return g.BatchCreate(m.SheetID, m.Nodes, m.Edges)
	case "batchDeleteElements":
		return g.BatchDelete(m.SheetID, m.NodeKeys, m.EdgeKeys)
	}
	return fmt.Errorf("%w: %q", ErrNotEditing, m.Type)
}

// Meta converts the graph document (name, workspace, sheet names…) to the data
// source model. Editing messages change nodes and edges, never the document, so
// the saved state's Meta is the live one.
func (g *Graph) Meta() (datasource.Graph, error) {
	var gm datasource.Graph
	doc, err := json.Marshal(g.Doc)
	if err != nil {
		return datasource.Graph{}, err
	}
	if err := json.Unmarshal(doc, &gm); err != nil {
		return datasource.Graph{}, err
	}
	if list, ok := g.Doc["sheetsList"].(map[string]any); ok && len(gm.Sheets) == 0 {
		gm.Sheets = map[string]string{}
		for id, name := range list {
			s, _ := name.(string)
			gm.Sheets[id] = s
		}
	}
	return gm, nil
}

// Snapshot converts the graph to the data source model: sheetsList becomes the
// sheet names, every node and edge carries its sheet, and an edge whose ends are
// not both in the graph is left out.
func (g *Graph) Snapshot() (datasource.Snapshot, error) {
	gm, err := g.Meta()
	if err != nil {
		return datasource.Snapshot{}, err
	}
	snap := datasource.Snapshot{Graph: gm, Nodes: []datasource.Node{}, Edges: []datasource.Edge{}, Configs: []datasource.NodeConfig{}}
	seen := map[string]bool{}
	for _, id := range g.SheetIDs() {
		for _, n := range g.Sheets[id].Nodes {
			var dn datasource.Node
			b, err := json.Marshal(n)
			if err != nil {
				return datasource.Snapshot{}, err
			}
			if err := json.Unmarshal(b, &dn); err != nil {
				return datasource.Snapshot{}, fmt.Errorf("node %v: %w", n["_key"], err)
			}
			if dn.Key == "" || seen[dn.Key] {
				continue
			}
			if dn.Sheet == "" {
				dn.Sheet = id
			}
			seen[dn.Key] = true
			snap.Nodes = append(snap.Nodes, dn)
		}
	}
	edgeSeen := map[string]bool{}
	for _, id := range g.SheetIDs() {
		for _, e := range g.Sheets[id].Edges {
			var de datasource.Edge
			b, err := json.Marshal(e)
			if err != nil {
				return datasource.Snapshot{}, err
			}
			if err := json.Unmarshal(b, &de); err != nil {
				return datasource.Snapshot{}, fmt.Errorf("edge %v: %w", e["_key"], err)
			}
			if de.Key == "" || edgeSeen[de.Key] || !seen[de.Source] || !seen[de.Target] {
				continue
			}
			if de.Sheet == "" {
				de.Sheet = id
			}
			edgeSeen[de.Key] = true
			snap.Edges = append(snap.Edges, de)
		}
	}
	return snap, nil
}

// Holds reports whether the graph shows the instructions' effect already: each
// one a SET whose value is at its path on its node or edge. known is false when
// that cannot be told from the graph (an instruction other than a SET). A client
// whose edit was not acknowledged reads the live graph again and asks this, to
// know whether the server applied it.
func (g *Graph) Holds(list []GraphInstruction) (holds, known bool) {
	for _, in := range list {
		if in.I.O != OpSet {
			return false, false
		}
		sh := g.Sheets[in.SheetID]
		if sh == nil {
			return false, true
		}
		var obj map[string]any
		var ok bool
		if in.NodeID != "" {
			obj, ok = sh.Node(in.NodeID)
		} else {
			obj, ok = sh.Edge(in.EdgeID)
		}
		if !ok {
			return false, true
		}
		v, ok := lookup(obj, in.I.P)
		if !ok || !sameJSON(v, in.I.V) {
			return false, true
		}
	}
	return true, true
}

// Has reports whether the sheet holds every node and edge key given (has), or
// none of them (none).
func (g *Graph) Has(sheetID string, nodeKeys, edgeKeys []string) (has, none bool) {
	sh := g.Sheets[sheetID]
	if sh == nil {
		return len(nodeKeys)+len(edgeKeys) == 0, true
	}
	has, none = true, true
	for _, k := range nodeKeys {
		_, ok := sh.Node(k)
		has, none = has && ok, none && !ok
	}
	for _, k := range edgeKeys {
		_, ok := sh.Edge(k)
		has, none = has && ok, none && !ok
	}
	return has, none
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}
