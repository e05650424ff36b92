package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

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
// carries the full new process, the code diff the person approving reads, the
// type's fields as they are now (Before, for an update) and the nodes of the type,
// every one of which runs the new code.
func (st *state) configureNodeType(tool string, a args) (datasource.Action, error) {
	p := &datasource.ConfigureNodeTypePayload{Mode: a.str("mode"), TypeKey: a.str("typeKey"), DisplayName: a.str("displayName"),
		Description: a.str("description"), Category: a.str("category"), Icon: a.str("icon")}
	var cur *datasource.NodeConfig
	for i := range st.cfgs {
		if st.cfgs[i].Key == p.TypeKey {
			cur = &st.cfgs[i]
		}
	}
	if a.has("process") && a.has("processPatches") {
		return datasource.Action{}, argErr(tool, "give either process (the whole code) or processPatches, not both")
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
		if a.has("processPatches") {
			return datasource.Action{}, argErr(tool, "a new type has no code to patch: give its whole code in process")
		}
		if p.TypeKey == "" {
			p.TypeKey = st.newTypeKey(p.DisplayName)
		} else if !keyPattern.MatchString(p.TypeKey) {
			return datasource.Action{}, argErr(tool, "typeKey %q is not a valid key: use letters, digits, '-', '_' and '.', starting with a letter or digit", p.TypeKey)
		} else if cur != nil || datasource.IsBuiltinType(p.TypeKey) {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: fmt.Sprintf("a node type %q already exists: use mode \"update\" to change it, or another typeKey", p.TypeKey)}
		}
		if st.earlier && a.str("process") != "" {
			return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
				Msg: "this graph file is in the earlier format, where code lives on nodes: a new type with code cannot be kept in it; the user can convert the file (nodius-ai graph convert) — or create the type without process"}
		}
	}
	if err := st.typeLook(tool, a, p); err != nil {
		return datasource.Action{}, err
	}
	if p.Mode == "create" {
		p.Process = a.str("process")
		if p.Process != "" {
			p.CodeDiffs = []datasource.CodeDiff{{Field: "process", Original: "", Modified: p.Process}}
		}
		st.cfgs = append(slices.Clone(st.cfgs), datasource.NodeConfig{Key: p.TypeKey, DisplayName: p.DisplayName})
		return datasource.Action{Type: datasource.ConfigureNodeTypeAction, ConfigureNodeType: p}, nil
	}
	p.Nodes = datasource.NodesOfType(slices.Collect(maps.Values(st.nodes)), p.TypeKey)
	p.Before = datasource.TypeFields(*cur)
	// The type's code as its nodes run it: the config's, or in a file of the
	// earlier format (code on the nodes) the nodes' own, which must agree.
	old := cur.Process
	if old == "" && len(p.Nodes) > 0 {
		old = st.nodes[p.Nodes[0]].Process
		for _, k := range p.Nodes[1:] {
			if st.nodes[k].Process != old {
				return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
					Msg: fmt.Sprintf("nodes %q and %q of type %q run different code: a type has one code, so it cannot be changed for all of them at once here", p.Nodes[0], k, p.TypeKey)}
			}
		}
	}
	if (a.has("process") || a.has("processPatches")) && st.earlier && cur.Process == "" && len(p.Nodes) == 0 {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction,
			Msg: fmt.Sprintf("no node of type %q is in this graph, and in a file of the earlier format a type's code is kept on its nodes: it cannot be given code here; the user can convert the file (nodius-ai graph convert)", p.TypeKey)}
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
		p.Process, p.ProcessPatches, p.CodeDiffs = "", nil, nil
	}
	next, err := datasource.ConfigFromPayload(cur, *p, cur.Workspace, time.Time{})
	if err != nil {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: err.Error()}
	}
	if p.Process == "" && sameTypeFields(p.Before, datasource.TypeFields(next)) {
		return datasource.Action{}, &Error{Tool: tool, Code: CodeInvalidAction, Msg: fmt.Sprintf("node type %q already is this way: the proposal changes nothing", p.TypeKey)}
	}
	return datasource.Action{Type: datasource.ConfigureNodeTypeAction, ConfigureNodeType: p}, nil
}

// typeLook reads the look of a type from the arguments: border, handles (sides
// T, D, R, L, 0, checked by the store's rule), size and content.
func (st *state) typeLook(tool string, a args, p *datasource.ConfigureNodeTypePayload) error {
	if a.has("border") {
		m, err := decodeAny(a.raw("border"))
		if err != nil {
			return argErr(tool, "border is not valid JSON: %v", err)
		}
		p.Border, _ = m.(map[string]any)
	}
	if a.has("size") {
		m, err := decodeAny(a.raw("size"))
		if err != nil {
			return argErr(tool, "size is not valid JSON: %v", err)
		}
		p.Size, _ = m.(map[string]any)
	}
	if a.has("content") {
		c, err := decodeAny(a.raw("content"))
		if err != nil {
			return argErr(tool, "content is not valid JSON: %v", err)
		}
		p.Content = c
	}
	if a.has("handles") {
		var h map[string]map[string]any
		if err := json.Unmarshal(a.raw("handles"), &h); err != nil {
			return argErr(tool, "handles: %v", err)
		}
		var groups map[string]datasource.HandleGroup
		if err := json.Unmarshal(a.raw("handles"), &groups); err != nil {
			return argErr(tool, "handles: %v", err)
		}
		if _, err := datasource.CheckHandles(groups); err != nil {
			return &Error{Tool: tool, Code: CodeInvalidAction, Msg: "handles: " + err.Error()}
		}
		p.Handles = h
	}
	return nil
}

// newTypeKey makes a key for a new type from its display name, free among the
// graph's types ("json-validator", then "json-validator-2", ...).
func (st *state) newTypeKey(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	base := strings.TrimRight(b.String(), "-")
	if base == "" {
		base = "type"
	}
	if len(base) > MaxKeyLen-4 {
		base = strings.TrimRight(base[:MaxKeyLen-4], "-")
	}
	key := base
	for i := 2; st.knownType(key); i++ {
		key = fmt.Sprintf("%s-%d", base, i)
	}
	return key
}

// sameTypeFields reports whether every field of after is as in before.
func sameTypeFields(before, after map[string]any) bool {
	for k, v := range after {
		if !datasource.SameJSON(before[k], v) {
			return false
		}
	}
	return true
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
