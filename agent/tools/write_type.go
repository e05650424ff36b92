package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/datasource"
)

// createNodeWithEdges checks a new node and its edges to existing nodes: the type,
// the sheet, each other node (same sheet) and each point on both ends, resolved by
// the store's rule against the new node's type's handles.
func (st *state) createNodeWithEdges(tool string, a args) (datasource.Action, error) {
	t := a.str("typeKey")
	if !st.knownType(t) {
		return datasource.Action{}, st.typeErr(tool, t)
	}
	sheet, err := st.sheetOrDefault(tool, a)
	if err != nil {
		return datasource.Action{}, err
	}
	x, y := st.position(a, sheet)
	p := &datasource.CreateNodeWithEdgesPayload{TypeKey: t, Sheet: sheet, PosX: &x, PosY: &y, Edges: []datasource.EdgeConnection{}}
	if a.has("data") {
		d, err := decodeAny(a.raw("data"))
		if err != nil {
			return datasource.Action{}, argErr(tool, "argument \"data\" is not valid JSON: %v", err)
		}
		p.Data = d
	}
	var raws []json.RawMessage
	_ = json.Unmarshal(a.raw("edges"), &raws) // checked by parseArgs
	fresh := datasource.Node{Key: "(new)", Type: t, Sheet: sheet, Handles: datasource.DefaultHandles(t, st.cfgs)}
	for i, r := range raws {
		m, _ := decodeObject(r)
		e := args{tool: tool, m: m}
		c := datasource.EdgeConnection{Direction: e.str("direction"), HandleID: e.str("handleId"),
			TargetNodeKey: e.str("targetNodeKey"), TargetHandleID: e.str("targetHandleId"), Label: e.str("label")}
		other, err := st.node(tool, c.TargetNodeKey, false)
		if err != nil {
			return datasource.Action{}, err
		}
		if other.Sheet != sheet {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("edges[%d]: node %q is on sheet %q, the new node on sheet %q: an edge connects nodes of the same sheet", i, other.Key, other.Sheet, sheet)}
		}
		mine, theirs := "out", "in"
		if c.Direction == "in" {
			mine, theirs = "in", "out"
		}
		if c.HandleID, err = st.findHandle(tool, fresh, c.HandleID, mine); err != nil {
			return datasource.Action{}, fmt.Errorf("edges[%d]: %w", i, err)
		}
		if c.TargetHandleID, err = st.findHandle(tool, other, c.TargetHandleID, theirs); err != nil {
			return datasource.Action{}, fmt.Errorf("edges[%d]: %w", i, err)
		}
		p.Edges = append(p.Edges, c)
	}
	return datasource.Action{Type: datasource.CreateNodeWithEdgesAction, CreateNodeWithEdges: p}, nil
}

// configureNodeType checks a type's creation or change and resolves its code: a
// whole process, or processPatches applied to the type's current code as the
// server does (each search found, first occurrence replaced, in order). The result
// carries the full new process and the code diff the person approving reads.
func (st *state) configureNodeType(tool string, a args) (datasource.Action, error) {
	p := &datasource.ConfigureNodeTypePayload{Mode: a.str("mode"), TypeKey: a.str("typeKey"), DisplayName: a.str("displayName"),
		Description: a.str("description"), Category: a.str("category"), Icon: a.str("icon")}
	var cur *datasource.NodeConfig
	for i := range st.cfgs {
		if st.cfgs[i].Key == p.TypeKey {
			cur = &st.cfgs[i]
		}
	}
	switch p.Mode {
	case "update":
		if p.TypeKey == "" {
			return datasource.Action{}, argErr(tool, "mode \"update\" needs the typeKey of the type to change")
		}
		if datasource.IsBuiltinType(p.TypeKey) {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("%q is a built-in type: it has no configuration to change", p.TypeKey)}
		}
		if cur == nil {
			return datasource.Action{}, st.typeErr(tool, p.TypeKey)
		}
	case "create":
		// nodius-ai's sources keep nodes and edges; node types are written by the
		// Nodius server's own assistant only.
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
			Msg: "a new node type cannot be created from here (only the Nodius server's own assistant writes node types); use an existing type (list_available_node_types), or change an existing type's code with mode \"update\""}
	}
	// Only the code can change here; other fields must be absent or as they are.
	for _, f := range []string{"border", "handles", "size", "content"} {
		if a.has(f) {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("%q cannot be changed from here: only a type's code (process or processPatches) can; leave %q out", f, f)}
		}
	}
	for _, f := range []struct{ name, now string }{{"displayName", cur.DisplayName}, {"description", cur.Description}, {"category", cur.Category}, {"icon", cur.Icon}} {
		if a.has(f.name) && a.str(f.name) != f.now && !(f.name == "displayName" && f.now == "") {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("%s cannot be changed from here (only a type's code can); give it as it is: %q", f.name, f.now)}
		}
	}
	if !a.has("process") && !a.has("processPatches") {
		return datasource.Action{}, argErr(tool, "give the new code: processPatches (preferred) or process")
	}
	for _, n := range sortedKeys(st.nodes) {
		if st.nodes[n].Type == p.TypeKey {
			p.Nodes = append(p.Nodes, n)
		}
	}
	if len(p.Nodes) == 0 {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
			Msg: fmt.Sprintf("no node of type %q is in this graph: its code is kept with the nodes here, so it cannot be changed from this graph", p.TypeKey)}
	}
	if a.has("process") && a.has("processPatches") {
		return datasource.Action{}, argErr(tool, "give either process (the whole code) or processPatches, not both")
	}
	// The type's code as its nodes run it: the config's, or in a file of the
	// earlier format (code on the nodes) the nodes' own, which must agree.
	old := cur.Process
	if old == "" {
		old = st.nodes[p.Nodes[0]].Process
		for _, k := range p.Nodes[1:] {
			if st.nodes[k].Process != old {
				return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
					Msg: fmt.Sprintf("nodes %q and %q of type %q run different code: change them one at a time is not possible here, as a type has one code", p.Nodes[0], k, p.TypeKey)}
			}
		}
	}
	switch {
	case a.has("processPatches"):
		var patches []datasource.CodePatch
		if err := json.Unmarshal(a.raw("processPatches"), &patches); err != nil {
			return datasource.Action{}, argErr(tool, "processPatches: %v", err)
		}
		code, err := ApplyPatches(old, patches)
		if err != nil {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: err.Error() + "; read the current code with read_node_config and copy the search text exactly"}
		}
		p.Process, p.ProcessPatches = code, patches
		p.CodeDiffs = []datasource.CodeDiff{{Field: "process", Original: old, Modified: code, Patches: patches}}
	case a.has("process"):
		p.Process = a.str("process")
		p.CodeDiffs = []datasource.CodeDiff{{Field: "process", Original: old, Modified: p.Process}}
	}
	if p.Process == old {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: "the new code is the current code: the proposal changes nothing"}
	}
	return datasource.Action{Type: datasource.ConfigureNodeTypeAction, ConfigureNodeType: p}, nil
}

// ApplyPatches applies search/replace patches to code in order, as the Nodius
// server's codePatch does: an empty search appends (or sets empty code), a search
// must be found, and its first occurrence is replaced.
func ApplyPatches(code string, patches []datasource.CodePatch) (string, error) {
	for i, p := range patches {
		if p.Search == "" {
			code += p.Replace
			continue
		}
		idx := strings.Index(code, p.Search)
		if idx < 0 {
			ex := []rune(p.Search)
			if len(ex) > 80 {
				ex = append(ex[:80], '…')
			}
			return "", fmt.Errorf("patch %d: the search text is not in the current code: %q", i+1, string(ex))
		}
		code = code[:idx] + p.Replace + code[idx+len(p.Search):]
	}
	return code, nil
}

// reorganizeLayout computes the new positions now, so the person approving sees
// every move and the change applies the same on every source.
func (st *state) reorganizeLayout(tool string, a args) (datasource.Action, error) {
	keys := a.strings("nodeKeys")
	seen := map[string]bool{}
	var nodes []datasource.Node
	for _, k := range keys {
		if seen[k] {
			continue
		}
		seen[k] = true
		n, err := st.node(tool, k, false)
		if err != nil {
			return datasource.Action{}, err
		}
		nodes = append(nodes, n)
	}
	strategy := a.str("strategy")
	moves := Layout(nodes, st.edges, strategy)
	var changed []datasource.MoveNodePayload
	for _, m := range moves {
		if n := st.nodes[m.NodeKey]; n.PosX != m.PosX || n.PosY != m.PosY {
			changed = append(changed, m)
		}
	}
	if len(changed) == 0 {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: "these nodes are already laid out this way: the proposal changes nothing"}
	}
	return datasource.Action{Type: datasource.ReorganizeLayoutAction,
		ReorganizeLayout: &datasource.ReorganizeLayoutPayload{NodeKeys: keys, Strategy: strategy, Moves: changed}}, nil
}

// Layout places nodes in layers along their edges, as the Nodius server's
// autoLayout does with its layered layout: left to right for "horizontal" (and by
// default), top to bottom for "vertical" and "tree"; 160 between layers, 100
// between nodes of a layer. A node's layer is the longest path to it from a node
// without incoming edges among those laid out; cycles are broken by input order.
// The layout starts at the top-left corner of the nodes' current box.
func Layout(nodes []datasource.Node, edges []datasource.Edge, strategy string) []datasource.MoveNodePayload {
	if len(nodes) == 0 {
		return nil
	}
	const nodeSpacing, layerSpacing = 100.0, 160.0
	vertical := strategy == "vertical" || strategy == "tree"
	idx := map[string]int{}
	minX, minY := nodes[0].PosX, nodes[0].PosY
	for i, n := range nodes {
		idx[n.Key] = i
		minX, minY = min(minX, n.PosX), min(minY, n.PosY)
	}
	out := make([][]int, len(nodes))
	indeg := make([]int, len(nodes))
	for _, e := range edges {
		s, ok1 := idx[e.Source]
		t, ok2 := idx[e.Target]
		if ok1 && ok2 && s != t {
			out[s] = append(out[s], t)
			indeg[t]++
		}
	}
	// Kahn's order; nodes left in cycles are taken in input order.
	layer := make([]int, len(nodes))
	done := make([]bool, len(nodes))
	var queue []int
	for i := range nodes {
		if indeg[i] == 0 {
			queue = append(queue, i)
		}
	}
	for processed := 0; processed < len(nodes); {
		if len(queue) == 0 {
			for i := range nodes {
				if !done[i] {
					queue = append(queue, i)
					break
				}
			}
		}
		i := queue[0]
		queue = queue[1:]
		if done[i] {
			continue
		}
		done[i] = true
		processed++
		for _, t := range out[i] {
			if !done[t] {
				layer[t] = max(layer[t], layer[i]+1)
				if indeg[t]--; indeg[t] == 0 {
					queue = append(queue, t)
				}
			}
		}
	}
	byLayer := map[int][]int{}
	maxLayer := 0
	for i, l := range layer {
		byLayer[l] = append(byLayer[l], i)
		maxLayer = max(maxLayer, l)
	}
	moves := make([]datasource.MoveNodePayload, len(nodes))
	along := 0.0 // position of the current layer along the flow
	for l := 0; l <= maxLayer; l++ {
		members := byLayer[l]
		// Keep the current order across the flow, so a tidy graph stays recognisable.
		sort.SliceStable(members, func(a, b int) bool {
			na, nb := nodes[members[a]], nodes[members[b]]
			if vertical {
				return na.PosX < nb.PosX
			}
			return na.PosY < nb.PosY
		})
		across, thick := 0.0, 0.0
		for _, i := range members {
			n := nodes[i]
			w, h := size(n)
			if vertical {
				moves[i] = datasource.MoveNodePayload{NodeKey: n.Key, PosX: minX + across, PosY: minY + along}
				across += w + nodeSpacing
				thick = max(thick, h)
			} else {
				moves[i] = datasource.MoveNodePayload{NodeKey: n.Key, PosX: minX + along, PosY: minY + across}
				across += h + nodeSpacing
				thick = max(thick, w)
			}
		}
		along += thick + layerSpacing
	}
	return moves
}

func size(n datasource.Node) (float64, float64) {
	w, h := n.Size.Width, n.Size.Height
	if w <= 0 {
		w = 200
	}
	if h <= 0 {
		h = 100
	}
	return w, h
}
