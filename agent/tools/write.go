package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/htmlobject"
)

// Write tool names: the Nodius server's.
const (
	ProposeCreateNode          = "propose_create_node"
	ProposeUpdateNode          = "propose_update_node"
	ProposeMoveNode            = "propose_move_node"
	ProposeDeleteNode          = "propose_delete_node"
	ProposeCreateEdge          = "propose_create_edge"
	ProposeDeleteEdge          = "propose_delete_edge"
	ProposeBatch               = "propose_batch"
	ProposeCreateNodeWithEdges = "propose_create_node_with_edges"
	ProposeConfigureNodeType   = "propose_configure_node_type"
	ProposeReorganizeLayout    = "propose_reorganize_layout"
)

// Limits on what a proposal may carry. They bound what a person is asked to review and
// what a misbehaving model can make the client hold.
const (
	MaxBatchSteps  = 50
	MaxReasonLen   = 2000
	MaxProcessLen  = 100_000
	MaxKeyLen      = 64
	MaxCoordinate  = 1_000_000
	MaxNewEdges    = 20
	MaxLayoutNodes = 200
	MaxPatches     = 50
)

// keyPattern is what a node key given by the model must look like: Nodius local keys
// are short identifiers, and a key lands in composite storage keys ({graph}-{key}).
var keyPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

var reasonParam = param{name: "reason", kind: kString, required: true, maxLen: MaxReasonLen,
	desc: "Why this change is proposed, in one or two sentences in the user's language. The user reads it before approving or rejecting."}

// pointParams and groupParams are the shape of a node's handles: sides (L, R, T, D, 0)
// holding groups, groups holding points. The schema of the handles argument is built
// from them, and parsing checks what the model sends against them.
func pointParams() []param {
	return []param{
		{name: "id", kind: kString, required: true, desc: "Point id, unique per direction on the node (\"0\", \"1\", ...). Edges name handles by this id."},
		{name: "type", kind: kString, required: true, enum: []string{"in", "out"}, desc: "in: edges arrive here; out: edges leave from here."},
		{name: "accept", kind: kString, required: true, desc: "Accepted data type: \"any\", \"string\", \"number\", \"event[]\", \"entryType\"..."},
		{name: "display", kind: kString, desc: "Text shown on the handle. Optional."},
	}
}

func groupParams() []param {
	return []param{
		{name: "position", kind: kString, required: true, enum: []string{"separate", "fix"}, desc: "Layout of the points on the side."},
		{name: "point", kind: kArray, required: true, fields: pointParams()},
	}
}

func handlesParam(name, desc string) param {
	fields := make([]param, len(datasource.Sides))
	for i, side := range datasource.Sides {
		fields[i] = param{name: side, kind: kObject, fields: groupParams()}
	}
	return param{name: name, kind: kObject, fields: fields, freeKeys: true, desc: desc}
}

func sizeParam(desc string) param {
	return param{name: "size", kind: kObject, desc: desc, fields: []param{
		{name: "width", kind: kNumber, required: true, hasRange: true, min: 1, max: MaxCoordinate},
		{name: "height", kind: kNumber, required: true, hasRange: true, min: 1, max: MaxCoordinate},
		{name: "dynamic", kind: kBoolean},
	}}
}

// batchStepTypes are the step types propose_batch takes, as the server's.
var batchStepTypes = []datasource.ActionType{datasource.MoveNodeAction, datasource.UpdateNodeAction,
	datasource.DeleteNodeAction, datasource.DeleteEdgeAction, datasource.CreateNodeAction, datasource.CreateEdgeAction}

// writeSpecs is the table of write tools, keyed by the action type each proposes:
// the server's names, parameters and required sets. Every write tool is strict: an
// argument the schema does not name is rejected, so a hallucinated field never slips
// into a change a person approves.
func writeSpecs() []writeSpec {
	nodeKey := func(desc string) param { return param{name: "nodeKey", kind: kString, required: true, desc: desc} }
	pos := func(name string, required bool, desc string) param {
		return param{name: name, kind: kNumber, required: required, hasRange: true, min: -MaxCoordinate, max: MaxCoordinate, desc: desc}
	}
	sheet := param{name: "sheet", kind: kString, desc: "Sheet id the node goes on (default \"0\")."}
	data := param{name: "data", kind: kObject, desc: "The node's data, specific to its type (free JSON object). Optional."}
	typeKey := param{name: "typeKey", kind: kString, required: true, desc: "Node type: a built-in (starter, return, html, entryType) or a custom type of the workspace."}
	// newNode are the arguments of a new node, the same for create_node and
	// create_node_with_edges.
	newNode := []param{typeKey, sheet,
		pos("posX", false, "Horizontal position (default: right of the sheet's nodes)."),
		pos("posY", false, "Vertical position."),
		data}
	return []writeSpec{
		{action: datasource.CreateNodeAction, spec: spec{name: ProposeCreateNode, strict: true,
			desc: "Propose to add a node to the graph. Nothing changes until the user approves. Use an existing type (list_available_node_types). Its code is its type's. To connect it too, prefer propose_create_node_with_edges.",
			params: slices.Concat(newNode, []param{
				{name: "nodeKey", kind: kString, maxLen: MaxKeyLen, desc: "Key for the new node (letters, digits, - _ .), unique in the graph. Optional: one is generated; give one to refer to the node in later steps of a batch."},
				reasonParam,
			})}},
		{action: datasource.CreateEdgeAction, spec: spec{name: ProposeCreateEdge, strict: true,
			desc: "Propose to connect two nodes of the same sheet: from an output point of the source to an input point of the target. Handles are point ids (see read_node_detail: \"R:0:out\" is point \"0\", an output). An entry form (entryType, 0:0:out) goes to input \"1\" of a starter or html node (0:1:in). Nothing changes until the user approves.",
			params: []param{
				{name: "sourceKey", kind: kString, required: true, desc: "Key of the node the edge leaves from."},
				{name: "sourceHandle", kind: kString, required: true, desc: "Id of an output (out) point of the source node, e.g. \"0\"."},
				{name: "targetKey", kind: kString, required: true, desc: "Key of the node the edge goes to."},
				{name: "targetHandle", kind: kString, required: true, desc: "Id of an input (in) point of the target node, e.g. \"0\"."},
				{name: "sheet", kind: kString, required: true, desc: "Sheet id of the two nodes."},
				{name: "label", kind: kString, maxLen: 200, desc: "Label shown on the edge, e.g. \"success\" or \"error\". Optional."},
				reasonParam,
			}}},
		{action: datasource.DeleteNodeAction, spec: spec{name: ProposeDeleteNode, strict: true,
			desc:   "Propose to delete a node; its edges are deleted with it (the user sees which). Nothing changes until the user approves.",
			params: []param{nodeKey("Key of the node to delete."), reasonParam}}},
		{action: datasource.UpdateNodeAction, spec: spec{name: ProposeUpdateNode, strict: true,
			desc: "Propose to change a node: its name, data, description or size. An HTML node is changed through updates.html (raw HTML). A node's code is its type's: change it with propose_configure_node_type. Nothing changes until the user approves. Read the node first (read_node_detail).",
			params: []param{
				nodeKey("Key of the node to change."),
				{name: "updates", kind: kObject, required: true, desc: "The new values; give only what changes.", fields: []param{
					{name: "name", kind: kString, maxLen: 500},
					{name: "data", kind: kObject, desc: "The node's whole new data (not for html nodes)."},
					{name: "html", kind: kString, maxLen: MaxProcessLen, desc: "Raw HTML (html nodes only)."},
					{name: "description", kind: kString, maxLen: MaxReasonLen},
					sizeParam("New size."),
				}},
				reasonParam,
			}}},
		{action: datasource.MoveNodeAction, spec: spec{name: ProposeMoveNode, strict: true,
			desc:   "Propose to move a node on the canvas. Nothing changes until the user approves.",
			params: []param{nodeKey("Key of the node to move."), pos("posX", true, "New horizontal position."), pos("posY", true, "New vertical position."), reasonParam}}},
		{action: datasource.DeleteEdgeAction, spec: spec{name: ProposeDeleteEdge, strict: true,
			desc:   "Propose to delete one edge, by its key (list_node_edges gives edge keys). Nothing changes until the user approves.",
			params: []param{{name: "edgeKey", kind: kString, required: true, desc: "Key of the edge to delete."}, reasonParam}}},
		{action: datasource.CreateNodeWithEdgesAction, spec: spec{name: ProposeCreateNodeWithEdges, strict: true,
			desc: "Propose to create a node and its edges to existing nodes in one change. Prefer it to propose_create_node followed by propose_create_edge.",
			params: slices.Concat(newNode, []param{
				{name: "edges", kind: kArray, required: true, hasRange: true, min: 0, max: MaxNewEdges, desc: "The edges to create with the node.", fields: []param{
					{name: "direction", kind: kString, required: true, enum: []string{"in", "out"}, desc: "out: the new node is the source; in: the new node is the target."},
					{name: "handleId", kind: kString, required: true, desc: "Point id on the new node, e.g. \"0\"."},
					{name: "targetNodeKey", kind: kString, required: true, desc: "Key of the existing node to connect to."},
					{name: "targetHandleId", kind: kString, required: true, desc: "Point id on the existing node."},
					{name: "label", kind: kString, maxLen: 200, desc: "Edge label. Optional."},
				}},
				reasonParam,
			})}},
		{action: datasource.ConfigureNodeTypeAction, spec: spec{name: ProposeConfigureNodeType, strict: true,
			desc: "Propose to create or change a node type (NodeTypeConfig): its code (process), handles, border, size. Every node of the type runs its code, so a change reaches all of them. For mode=update prefer processPatches (exact search/replace) to a whole new process. Nothing changes until the user approves.",
			params: []param{
				{name: "mode", kind: kString, required: true, enum: []string{"create", "update"}, desc: "create: a new type; update: change an existing one."},
				{name: "typeKey", kind: kString, maxLen: MaxKeyLen, desc: "_key of the type (required for update)."},
				{name: "displayName", kind: kString, required: true, maxLen: 200, desc: "The type's display name."},
				{name: "description", kind: kString, maxLen: MaxReasonLen},
				{name: "category", kind: kString, maxLen: 100},
				{name: "icon", kind: kString, maxLen: 100, desc: "A lucide icon name, e.g. \"zap\"."},
				{name: "process", kind: kString, maxLen: MaxProcessLen, desc: "The whole JavaScript code (mode=create, or a full rewrite)."},
				{name: "processPatches", kind: kArray, hasRange: true, min: 1, max: MaxPatches, desc: "Surgical edits of the current code, each an exact search string and its replacement (preferred for mode=update).", fields: []param{
					{name: "search", kind: kString, required: true, maxLen: MaxProcessLen},
					{name: "replace", kind: kString, required: true, emptyOK: true, maxLen: MaxProcessLen},
				}},
				{name: "border", kind: kObject, fields: []param{
					{name: "radius", kind: kNumber}, {name: "width", kind: kNumber}, {name: "type", kind: kString},
					{name: "normalColor", kind: kString}, {name: "hoverColor", kind: kString},
				}},
				handlesParam("handles", "Handles by side: T, D, R, L, 0. E.g. {\"L\":{\"position\":\"separate\",\"point\":[{\"id\":\"0\",\"type\":\"in\",\"accept\":\"any\"}]}}"),
				sizeParam("Default size of the type's nodes."),
				{name: "content", kind: kObject, desc: "HtmlObject for the node's look."},
				reasonParam,
			}}},
		{action: datasource.ReorganizeLayoutAction, spec: spec{name: ProposeReorganizeLayout, strict: true,
			desc: "Propose to lay nodes out again automatically, in layers along the flow. Nothing changes until the user approves; the user sees every move.",
			params: []param{
				{name: "nodeKeys", kind: kArray, items: kString, required: true, hasRange: true, min: 1, max: MaxLayoutNodes, desc: "Keys of the nodes to lay out."},
				{name: "strategy", kind: kString, enum: []string{"horizontal", "vertical", "tree"}, desc: "horizontal (default: left to right), vertical or tree (top to bottom)."},
				reasonParam,
			}}},
	}
}

// writeSpec ties a write tool to its action type.
type writeSpec struct {
	action datasource.ActionType
	spec   spec
}

// batchStepParams is the flat shape of one batch step, as the server's: a type and
// the arguments of the matching propose_ tool, without reason.
func batchStepParams(types []string) []param {
	return []param{
		{name: "type", kind: kString, required: true, enum: types, desc: "The kind of step."},
		{name: "nodeKey", kind: kString}, {name: "edgeKey", kind: kString}, {name: "typeKey", kind: kString},
		{name: "sheet", kind: kString}, {name: "posX", kind: kNumber}, {name: "posY", kind: kNumber},
		{name: "data", kind: kObject}, {name: "updates", kind: kObject},
		{name: "sourceKey", kind: kString}, {name: "sourceHandle", kind: kString},
		{name: "targetKey", kind: kString}, {name: "targetHandle", kind: kString}, {name: "label", kind: kString},
	}
}

func batchSpec(types []string) spec {
	return spec{name: ProposeBatch, strict: true,
		desc: "Propose several changes (move, update, delete, create) applied in order as one change the user approves or rejects at once. Each step is flat: {\"type\": \"move_node\", \"nodeKey\": ..., \"posX\": ..., \"posY\": ...}, with the arguments of the matching propose_ tool (without reason). A create_node step may give a nodeKey so later steps can use the new node.",
		params: []param{
			{name: "actions", kind: kArray, required: true, fields: batchStepParams(types), hasRange: true, min: 1, max: MaxBatchSteps,
				desc: fmt.Sprintf("The steps, in order (1 to %d).", MaxBatchSteps)},
			reasonParam,
		}}
}

// WriteToolDefs is the write tools whose action type allowed accepts (nil allows all);
// propose_batch is offered when any step type is allowed, and lists only those.
func WriteToolDefs(allowed func(datasource.ActionType) bool) []convo.ToolDef {
	var out []convo.ToolDef
	var types []string
	for _, ws := range writeSpecs() {
		if allowed != nil && !allowed(ws.action) {
			continue
		}
		out = append(out, ws.spec.def().convo())
		if slices.Contains(batchStepTypes, ws.action) {
			types = append(types, string(ws.action))
		}
	}
	if len(types) > 0 && (allowed == nil || allowed(datasource.BatchAction)) {
		out = append(out, batchSpec(types).def().convo())
	}
	return out
}

func allStepTypes() []string {
	out := make([]string, len(batchStepTypes))
	for i, t := range batchStepTypes {
		out[i] = string(t)
	}
	return out
}

func writeSpecByName(name string) (writeSpec, bool) {
	for _, ws := range writeSpecs() {
		if ws.spec.name == name {
			return ws, true
		}
	}
	return writeSpec{}, false
}

func writeSpecByAction(t datasource.ActionType) (writeSpec, bool) {
	for _, ws := range writeSpecs() {
		if ws.action == t {
			return ws, true
		}
	}
	return writeSpec{}, false
}

func writeNames() string {
	var n []string
	for _, ws := range writeSpecs() {
		n = append(n, ws.spec.name)
	}
	return joinComma(append(n, ProposeBatch))
}

// ParseProposal validates a write tool call strictly — arguments against the schema
// (unknown ones rejected), then against the graph (nodes, types, sheets, handles,
// edges) — and returns the action it proposes with the model's reason. The action
// carries what the person approving needs to see: the edges a deleted node takes with
// it, the old values of updated fields, the edge a delete_edge removes. A create_node
// without handles gets its type's default handles. An *Error is a mistake the model
// can correct; other errors come from the source.
func ParseProposal(ctx context.Context, src datasource.Source, graphKey, name, argsJSON string) (datasource.Action, string, error) {
	if IsHome(graphKey) || isHomeWriteTool(name) {
		if !isHomeWriteTool(name) {
			return datasource.Action{}, "", &Error{Tool: name, Code: CodeUnknownTool, Msg: homeUnknown(name)}
		}
		if !IsHome(graphKey) {
			return datasource.Action{}, "", &Error{Tool: name, Code: CodeUnknownTool,
				Msg: name + " is offered in home mode only (no graph open); it cannot be proposed inside graph " + graphKey}
		}
		return parseHomeProposal(name, argsJSON)
	}
	var ws writeSpec
	isBatch := name == ProposeBatch
	if !isBatch {
		var ok bool
		if ws, ok = writeSpecByName(name); !ok {
			return datasource.Action{}, "", &Error{Tool: name, Code: CodeUnknownTool,
				Msg: fmt.Sprintf("unknown write tool %q; the write tools are: %s", name, writeNames())}
		}
	}
	sp := ws.spec
	if isBatch {
		sp = batchSpec(allStepTypes())
	}
	a, err := parseArgs(name, argsJSON, sp.params, true)
	if err != nil {
		return datasource.Action{}, "", err
	}
	reason := strings.TrimSpace(a.str("reason"))
	snap, err := datasource.LoadSnapshot(ctx, src, graphKey)
	if err != nil {
		return datasource.Action{}, "", fmt.Errorf("%s: reading graph %q: %w", name, graphKey, err)
	}
	st := newState(snap)
	if f, ok := src.(interface{ Format() datasource.Format }); ok {
		st.earlier = f.Format() == datasource.FormatEarlier
	}
	var act datasource.Action
	if isBatch {
		act, err = st.batch(name, a.raw("actions"))
	} else {
		act, err = st.step(name, ws.action, a.m, false)
	}
	if err != nil {
		return datasource.Action{}, "", err
	}
	return act, reason, nil
}

// state is the graph as it would be after the steps validated so far: later steps
// of a batch are checked against it, so they may use a node created earlier and
// cannot use one deleted earlier.
type state struct {
	g       datasource.Graph
	nodes   map[string]datasource.Node
	edges   []datasource.Edge
	cfgs    []datasource.NodeConfig
	sheets  map[string]bool
	created map[string]bool
	// earlier: the graph is a file of the earlier format (code on nodes).
	earlier bool
}

func newState(s datasource.Snapshot) *state {
	st := &state{g: s.Graph, nodes: map[string]datasource.Node{}, edges: append([]datasource.Edge(nil), s.Edges...),
		cfgs: s.Configs, sheets: map[string]bool{}, created: map[string]bool{}}
	for id := range s.Graph.Sheets {
		st.sheets[id] = true
	}
	for _, n := range s.Nodes {
		st.nodes[n.Key] = n
		if len(s.Graph.Sheets) == 0 {
			st.sheets[n.Sheet] = true
		}
	}
	if len(st.sheets) == 0 {
		st.sheets["0"] = true
	}
	return st
}

func (st *state) batch(tool string, raw json.RawMessage) (datasource.Action, error) {
	var steps []json.RawMessage
	if err := json.Unmarshal(raw, &steps); err != nil {
		return datasource.Action{}, argErr(tool, "argument \"actions\" must be an array of steps: %v", err)
	}
	out := make([]datasource.Action, 0, len(steps))
	for i, s := range steps {
		m, err := decodeObject(s)
		if err != nil {
			return datasource.Action{}, argErr(tool, "step %d must be an object, got %s", i+1, describeJSON(s))
		}
		t := datasource.ActionType(stepType(m))
		delete(m, "type")
		act, err := st.step(tool, t, m, true)
		if err != nil {
			var te *Error
			if errors.As(err, &te) {
				te.Msg = fmt.Sprintf("step %d (%s): %s", i+1, t, te.Msg)
			}
			return datasource.Action{}, err
		}
		out = append(out, act)
	}
	return datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: out}}, nil
}

func stepType(m map[string]json.RawMessage) string {
	var t string
	_ = json.Unmarshal(m["type"], &t)
	return t
}

// step validates one action's fields (m, without reason) and applies it to the state.
func (st *state) step(tool string, t datasource.ActionType, m map[string]json.RawMessage, inBatch bool) (datasource.Action, error) {
	ws, ok := writeSpecByAction(t)
	if !ok {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: fmt.Sprintf("unknown action type %q", t)}
	}
	params := ws.spec.params
	if inBatch {
		params = params[:len(params)-1] // every write spec ends with reason
		if _, ok := m["reason"]; ok {
			return datasource.Action{}, argErr(tool, "a batch step takes no \"reason\": give one reason for the whole batch")
		}
	}
	if err := checkFields(tool, "", m, params, true); err != nil {
		return datasource.Action{}, err
	}
	a := args{tool: tool, m: m}
	switch t {
	case datasource.CreateNodeAction:
		return st.createNode(tool, a, inBatch)
	case datasource.UpdateNodeAction:
		return st.updateNode(tool, a, inBatch)
	case datasource.MoveNodeAction:
		n, err := st.node(tool, a.str("nodeKey"), inBatch)
		if err != nil {
			return datasource.Action{}, err
		}
		p := &datasource.MoveNodePayload{NodeKey: n.Key, PosX: a.num("posX", 0), PosY: a.num("posY", 0)}
		n.PosX, n.PosY = p.PosX, p.PosY
		st.nodes[n.Key] = n
		return datasource.Action{Type: t, MoveNode: p}, nil
	case datasource.DeleteNodeAction:
		n, err := st.node(tool, a.str("nodeKey"), inBatch)
		if err != nil {
			return datasource.Action{}, err
		}
		var removed, kept []datasource.Edge
		for _, e := range st.edges {
			if e.Source == n.Key || e.Target == n.Key {
				removed = append(removed, e)
			} else {
				kept = append(kept, e)
			}
		}
		st.edges = kept
		delete(st.nodes, n.Key)
		return datasource.Action{Type: t, DeleteNode: &datasource.DeleteNodePayload{NodeKey: n.Key, RemovedEdges: removed}}, nil
	case datasource.CreateEdgeAction:
		return st.createEdge(tool, a, inBatch)
	case datasource.CreateNodeWithEdgesAction:
		return st.createNodeWithEdges(tool, a)
	case datasource.ConfigureNodeTypeAction:
		return st.configureNodeType(tool, a)
	case datasource.ReorganizeLayoutAction:
		return st.reorganizeLayout(tool, a)
	case datasource.DeleteEdgeAction:
		key := a.str("edgeKey")
		for i, e := range st.edges {
			if e.Key == key {
				st.edges = append(st.edges[:i:i], st.edges[i+1:]...)
				e := e
				return datasource.Action{Type: t, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: key, Edge: &e}}, nil
			}
		}
		keys := make([]string, len(st.edges))
		for i, e := range st.edges {
			keys[i] = e.Key
		}
		msg := fmt.Sprintf("edge %q does not exist in this graph", key)
		if near := closeKeys(key, keys, 3); len(near) > 0 {
			msg += "; did you mean " + quoteOr(near) + "?"
		}
		msg += " Use list_node_edges on one of its nodes to get edge keys."
		return datasource.Action{}, &Error{Tool: tool, Code: CodeNotFound, Msg: msg}
	}
	return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: fmt.Sprintf("action type %q cannot be a step", t)}
}

func (st *state) node(tool, key string, inBatch bool) (datasource.Node, error) {
	if n, ok := st.nodes[key]; ok {
		return n, nil
	}
	keys := sortedKeys(st.nodes)
	err := notFoundNode(tool, key, keys)
	if inBatch {
		err.(*Error).Msg += " (a node created earlier in the batch can be used only if its create_node step gave it this nodeKey; a node deleted earlier cannot be used)"
	}
	return datasource.Node{}, err
}

func (st *state) knownType(t string) bool {
	if datasource.IsBuiltinType(t) {
		return true
	}
	for _, c := range st.cfgs {
		if c.Key == t {
			return true
		}
	}
	return false
}

func (st *state) typeErr(tool, t string) error {
	keys := make([]string, 0, len(st.cfgs))
	for _, c := range st.cfgs {
		keys = append(keys, c.Key)
	}
	sort.Strings(keys)
	return unknownType(tool, t, keys)
}

// sheet resolves a sheet id (or a unique sheet name) to its id.
func (st *state) sheet(tool, s string) (string, error) {
	if st.sheets[s] {
		return s, nil
	}
	if id, ok := sheetByName(st.g, s); ok {
		return id, nil
	}
	ids := sortedKeys(st.sheets)
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("%q (%s)", id, st.g.SheetName(id))
	}
	return "", &Error{Tool: tool, Code: CodeNotFound,
		Msg: fmt.Sprintf("sheet %q does not exist; give a sheet id: %s", s, joinComma(parts))}
}

func (st *state) createNode(tool string, a args, inBatch bool) (datasource.Action, error) {
	p := &datasource.CreateNodePayload{TypeKey: a.str("typeKey")}
	if a.has("nodeKey") {
		k := a.str("nodeKey")
		if !keyPattern.MatchString(k) {
			return datasource.Action{}, argErr(tool, "nodeKey %q is not a valid key: use letters, digits, '-', '_' and '.', starting with a letter or digit", k)
		}
		if _, exists := st.nodes[k]; exists {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("a node with key %q already exists; choose another nodeKey or omit it", k)}
		}
		p.NodeKey = k
	}
	if !st.knownType(p.TypeKey) {
		return datasource.Action{}, st.typeErr(tool, p.TypeKey)
	}
	sheet, err := st.sheetOrDefault(tool, a)
	if err != nil {
		return datasource.Action{}, err
	}
	p.Sheet = sheet
	p.PosX, p.PosY = st.position(a, sheet)
	p.Handles = datasource.DefaultHandles(p.TypeKey, st.cfgs)
	size := datasource.DefaultSize(p.TypeKey, st.cfgs)
	p.Size = &size
	if a.has("data") {
		d, err := decodeAny(a.raw("data"))
		if err != nil {
			return datasource.Action{}, argErr(tool, "argument \"data\" is not valid JSON: %v", err)
		}
		p.Data = d
	}
	if p.NodeKey != "" {
		n := datasource.NodeFromPayload(*p)
		st.nodes[n.Key] = n
		st.created[n.Key] = true
	}
	return datasource.Action{Type: datasource.CreateNodeAction, CreateNode: p}, nil
}

// sheetOrDefault is the "sheet" argument resolved, "0" (the server's default) when
// absent.
func (st *state) sheetOrDefault(tool string, a args) (string, error) {
	if !a.has("sheet") || a.str("sheet") == "" {
		return st.sheet(tool, "0")
	}
	return st.sheet(tool, a.str("sheet"))
}

// position is posX/posY as given; a missing one is placed right of the sheet's
// nodes (the server takes it from the type's config, which has none locally).
func (st *state) position(a args, sheet string) (float64, float64) {
	x, y := 0.0, 0.0
	first := true
	for _, n := range st.nodes {
		if n.Sheet != sheet {
			continue
		}
		if right := n.PosX + n.Size.Width + 100; first || right > x {
			x, y = right, n.PosY
		}
		first = false
	}
	return a.num("posX", x), a.num("posY", y)
}

// findHandle resolves the handle named at one end of an edge on node n (dir "out"
// for the source, "in" for the target) to its point id, by the store's rule.
func (st *state) findHandle(tool string, n datasource.Node, handle, dir string) (string, error) {
	id, err := datasource.ResolveHandle(n.Key, datasource.EffectiveHandles(n, st.cfgs), handle, dir)
	if err != nil {
		return "", &Error{Tool: tool, Code: CodeInvalidAction, Msg: err.Error()}
	}
	return id, nil
}

func (st *state) createEdge(tool string, a args, inBatch bool) (datasource.Action, error) {
	src, err := st.node(tool, a.str("sourceKey"), inBatch)
	if err != nil {
		return datasource.Action{}, err
	}
	dst, err := st.node(tool, a.str("targetKey"), inBatch)
	if err != nil {
		return datasource.Action{}, err
	}
	if src.Key == dst.Key {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: fmt.Sprintf("an edge cannot connect node %q to itself", src.Key)}
	}
	if src.Sheet != dst.Sheet {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
			Msg: fmt.Sprintf("node %q is on sheet %q and node %q on sheet %q: an edge connects nodes of the same sheet", src.Key, src.Sheet, dst.Key, dst.Sheet)}
	}
	sheet := src.Sheet
	if a.has("sheet") {
		s, err := st.sheet(tool, a.str("sheet"))
		if err != nil {
			return datasource.Action{}, err
		}
		if s != sheet {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("sheet %q does not match: both nodes are on sheet %q", a.str("sheet"), sheet)}
		}
	}
	sh, err := st.findHandle(tool, src, a.str("sourceHandle"), "out")
	if err != nil {
		return datasource.Action{}, err
	}
	th, err := st.findHandle(tool, dst, a.str("targetHandle"), "in")
	if err != nil {
		return datasource.Action{}, err
	}
	for _, e := range st.edges {
		if e.Source == src.Key && e.SourceHandle == sh && e.Target == dst.Key && e.TargetHandle == th {
			what := "this edge already exists"
			if e.Key != "" {
				what += fmt.Sprintf(" (key %q)", e.Key)
			}
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("%s: %s → %s", what, endpoint(src.Key, sh), endpoint(dst.Key, th))}
		}
	}
	p := &datasource.CreateEdgePayload{SourceKey: src.Key, SourceHandle: sh, TargetKey: dst.Key, TargetHandle: th, Sheet: sheet, Label: a.str("label")}
	st.edges = append(st.edges, datasource.Edge{Sheet: sheet, Source: src.Key, SourceHandle: sh, Target: dst.Key, TargetHandle: th, Label: p.Label})
	return datasource.Action{Type: datasource.CreateEdgeAction, CreateEdge: p}, nil
}

func (st *state) updateNode(tool string, a args, inBatch bool) (datasource.Action, error) {
	n, err := st.node(tool, a.str("nodeKey"), inBatch)
	if err != nil {
		return datasource.Action{}, err
	}
	um, err := decodeObject(a.raw("updates"))
	if err != nil {
		return datasource.Action{}, argErr(tool, "argument \"updates\" %v", err)
	}
	if len(um) == 0 {
		return datasource.Action{}, argErr(tool, "argument \"updates\" is empty: give at least one of name, data, html, description, size")
	}
	changes := map[string]any{}
	before := map[string]any{}
	for _, f := range sortedKeys(um) {
		raw := um[f]
		switch f {
		case "data":
			v, err := decodeAny(raw)
			if err != nil {
				return datasource.Action{}, argErr(tool, "updates.data is not valid JSON: %v", err)
			}
			changes["data"], before["data"] = v, n.Data
		case "size":
			v, err := decodeAny(raw)
			if err != nil {
				return datasource.Action{}, argErr(tool, "updates.size is not valid JSON: %v", err)
			}
			changes["size"], before["size"] = plain(v), plain(n.Size)
		case "name", "description":
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return datasource.Action{}, argErr(tool, "updates.%s must be a string, got %s", f, describeJSON(raw))
			}
			var old any // absent: nil, as the store reads the node
			if raw, ok := n.Extra[f]; ok {
				_ = json.Unmarshal(raw, &old)
			}
			changes[f], before[f] = s, old
		case "html":
			if n.Type != "html" {
				return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
					Msg: fmt.Sprintf("updates.html is for html nodes only; node %q is of type %q", n.Key, n.Type)}
			}
			var src string
			if err := json.Unmarshal(raw, &src); err != nil || strings.TrimSpace(src) == "" {
				return datasource.Action{}, argErr(tool, "updates.html must be the node's HTML, got %s", describeJSON(raw))
			}
			// As the server: the HTML becomes the HtmlObject the node's data holds.
			obj, err := htmlobject.Convert(src)
			if err != nil {
				return datasource.Action{}, argErr(tool, "updates.html: %v", err)
			}
			changes["data"], before["data"] = plain(obj), n.Data
		default:
			return datasource.Action{}, argErr(tool, "updates.%s cannot be changed; give name, data, html, description or size", f)
		}
	}
	unchanged := 0
	for f := range changes {
		if sameJSON(changes[f], before[f]) {
			unchanged++
		}
	}
	if unchanged == len(changes) {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: fmt.Sprintf("node %q already has these values: the proposal changes nothing", n.Key)}
	}
	return datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: n.Key, Changes: changes, Before: before}}, nil
}

// lookup follows path through nested objects of data; nil when absent.
func lookup(data any, path []string) any {
	cur := data
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// plain turns a typed value into plain JSON values (maps, slices, float64), the form a
// stored action reads back as, so an action means the same before and after storage.
func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	out, err := decodeAny(b)
	if err != nil {
		return nil
	}
	return out
}

// decodeAny reads free JSON with numbers as json.Number, as the graph model does
// (datasource keeps numbers exactly as written).
func decodeAny(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("extra data after the value")
	}
	return v, nil
}
