package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/rag/toon"
)

// Read tool names.
const (
	ReadGraphOverview      = "read_graph_overview"
	SearchNodes            = "search_nodes"
	ExploreNeighborhood    = "explore_neighborhood"
	ReadNodeDetail         = "read_node_detail"
	ReadNodeConfig         = "read_node_config"
	ListAvailableNodeTypes = "list_available_node_types"
	ListNodeEdges          = "list_node_edges"
	ReadSubgraph           = "read_subgraph"
)

var directionParam = param{name: "direction", kind: kString, enum: []string{"any", "inbound", "outbound"},
	desc: "Which edges to follow: outbound (from this node to the next steps), inbound (from the previous steps), any (both; the default)."}

// readSpecs is the table of read tools. Read tools ignore unknown arguments (a stray
// key cannot change anything) but check types and ranges.
func readSpecs() []spec {
	return []spec{
		{name: ReadGraphOverview,
			desc:   "Get the graph's name, description, sheets with their node and edge counts, and how many nodes of each type it has. Use it first for broad questions (\"what does this workflow do?\", \"how big is it?\") or when the retrieval context does not show the part of the graph you need.",
			params: []param{{name: "graphKey", kind: kString, required: true, desc: "Key of the graph (the current graph's key, given in the context)."}}},
		{name: SearchNodes,
			desc: "Find nodes by words in their key, type, type name, code (process) or data. Use it to locate nodes the question mentions that are not in the retrieval context, and to get exact node keys before reading or proposing anything. Returns the best matches with a one-line preview of their code.",
			params: []param{
				{name: "query", kind: kString, required: true, maxLen: 500, desc: "Words to look for, e.g. \"fetch api\" or \"error\"."},
				{name: "sheetId", kind: kString, desc: "Only nodes of this sheet (its id, e.g. \"0\"). Optional."},
				{name: "maxResults", kind: kInteger, hasRange: true, min: 1, max: 50, desc: "How many nodes at most (1–50, default 10)."},
			}},
		{name: ExploreNeighborhood,
			desc: "List the nodes and edges around a node, up to maxDepth hops away. Use it to understand a node's place in the flow: what feeds it, what runs after it, where errors go.",
			params: []param{
				{name: "nodeKey", kind: kString, required: true, desc: "Key of the node to start from."},
				{name: "maxDepth", kind: kInteger, hasRange: true, min: 1, max: 3, desc: "How many hops (1–3, default 2)."},
				directionParam,
			}},
		{name: ReadNodeDetail,
			desc:   "Read one node: type, sheet, position, size, handles (with point ids), its data, and its edges. A node's code is its type's: read it with read_node_config. Use it before proposing a change to the node.",
			params: []param{{name: "nodeKey", kind: kString, required: true, desc: "Key of the node."}}},
		{name: ReadNodeConfig,
			desc:   "Read the definition of a node type: its JavaScript code (process, run by every node of the type), display name, description, category, handles and default size. Works for built-in types (starter, return, html, entryType) and the workspace's custom types. Use it before explaining what a node's code does or proposing to change it.",
			params: []param{{name: "typeKey", kind: kString, required: true, desc: "The type, e.g. \"api-call\" or \"starter\"."}}},
		{name: ListAvailableNodeTypes,
			desc:   "List every node type that can be used in this graph: the 4 built-in types and the workspace's custom types. Use it before proposing a new node, to pick an existing type.",
			params: nil},
		{name: ListNodeEdges,
			desc: "List the edges of one node with their keys, handles and labels. Use it to see exactly how a node is connected, or to get an edge's key before proposing to delete it.",
			params: []param{
				{name: "nodeKey", kind: kString, required: true, desc: "Key of the node."},
				directionParam,
			}},
		{name: ReadSubgraph,
			desc: "Read several nodes at once, with the edges touching them and their types. Default fields per node: _key, type, sheet, posX, posY; extras: handles, data, size.",
			params: []param{
				{name: "nodeKeys", kind: kArray, items: kString, required: true, hasRange: true, min: 1, max: MaxListNodes, desc: "Keys of the nodes to read."},
				{name: "fields", kind: kArray, items: kString, desc: "Fields per node (default: _key, type, sheet, posX, posY; also handles, data, size)."},
				{name: "includeConfigs", kind: kBoolean, desc: "Include the nodes' types (default: true)."},
				{name: "includeEdges", kind: kBoolean, desc: "Include the edges touching these nodes (default: true)."},
			}},
	}
}

// ReadToolDefs is the eight read tools, as sent to the model.
func ReadToolDefs() []convo.ToolDef {
	specs := readSpecs()
	out := make([]convo.ToolDef, len(specs))
	for i, s := range specs {
		out[i] = s.def().convo()
	}
	return out
}

// Executor runs read tools against one graph of a source. It holds no cache: each
// call reads the source, so results reflect approved changes at once.
type Executor struct {
	src      datasource.Source
	graphKey string
	specs    map[string]spec
}

// NewExecutor returns an executor of the read tools over graphKey in src.
func NewExecutor(src datasource.Source, graphKey string) *Executor {
	m := map[string]spec{}
	specs := readSpecs()
	if IsHome(graphKey) {
		specs = homeReadSpecs()
	}
	for _, s := range specs {
		m[s.name] = s
	}
	return &Executor{src: src, graphKey: graphKey, specs: m}
}

// Run executes read tool name with its raw JSON arguments and returns the result text
// (TOON). An *Error is a mistake the model can correct (unknown tool, bad arguments,
// unknown node or type); other errors come from the source. It never panics on what
// the model sends.
func (x *Executor) Run(ctx context.Context, name, argsJSON string) (string, error) {
	s, ok := x.specs[name]
	if !ok && IsHome(x.graphKey) && !isHomeWriteTool(name) {
		return "", &Error{Tool: name, Code: CodeUnknownTool, Msg: homeUnknown(name)}
	}
	if !ok {
		msg := fmt.Sprintf("unknown tool %q; the read tools are: %s", name, x.names())
		if IsWriteTool(name) {
			msg = fmt.Sprintf("%q is a write tool: it is not run, it is proposed to the user; the read tools are: %s", name, x.names())
		}
		return "", &Error{Tool: name, Code: CodeUnknownTool, Msg: msg}
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	a, err := parseArgs(name, argsJSON, s.params, s.strict)
	if err != nil {
		return "", err
	}
	if IsHome(x.graphKey) {
		v, err := x.runHome(ctx, name)
		if err != nil {
			return "", err
		}
		return toon.Encode(v, toon.Options{}), nil
	}
	x, err = x.pinned(ctx, name)
	if err != nil {
		return "", err
	}
	var v any
	switch name {
	case ReadGraphOverview:
		v, err = x.overview(ctx, a)
	case SearchNodes:
		v, err = x.search(ctx, a)
	case ExploreNeighborhood:
		v, err = x.explore(ctx, a)
	case ReadNodeDetail:
		v, err = x.detail(ctx, a)
	case ReadNodeConfig:
		v, err = x.config(ctx, a)
	case ListAvailableNodeTypes:
		v, err = x.types(ctx)
	case ListNodeEdges:
		v, err = x.edges(ctx, a)
	case ReadSubgraph:
		v, err = x.subgraph(ctx, a)
	}
	if err != nil {
		return "", err
	}
	return toon.Encode(v, toon.Options{}), nil
}

// viewer is a source whose every read fetches the whole graph (the server source);
// View fetches it once and answers from that snapshot.
type viewer interface {
	View(ctx context.Context, graphKey string) (datasource.Source, error)
}

// pinned is the executor one call runs on: over a viewer's View, so the call's
// several reads (node, edges, type names, sheet names) cost one fetch and agree.
func (x *Executor) pinned(ctx context.Context, tool string) (*Executor, error) {
	v, ok := x.src.(viewer)
	if !ok {
		return x, nil
	}
	src, err := v.View(ctx, x.graphKey)
	if err != nil {
		return nil, x.srcErr(tool, "reading", err)
	}
	return &Executor{src: src, graphKey: x.graphKey, specs: x.specs}, nil
}

func (x *Executor) names() string {
	var n []string
	for _, s := range readSpecs() {
		n = append(n, s.name)
	}
	return joinComma(n)
}

func joinComma(s []string) string { return strings.Join(s, ", ") }

func (x *Executor) srcErr(tool, what string, err error) error {
	return fmt.Errorf("%s: %s of graph %q: %w", tool, what, x.graphKey, err)
}

// typeNames maps custom type keys to display names (built-ins map to themselves).
func (x *Executor) typeNames(ctx context.Context, tool string) (map[string]string, []datasource.NodeConfig, error) {
	cfgs, err := x.src.Configs(ctx, x.graphKey)
	if err != nil {
		return nil, nil, x.srcErr(tool, "reading node types", err)
	}
	m := map[string]string{}
	for _, c := range cfgs {
		if c.DisplayName != "" {
			m[c.Key] = c.DisplayName
		}
	}
	return m, cfgs, nil
}

func typeLabel(t string, names map[string]string) string {
	if n, ok := names[t]; ok && n != t {
		return t + " (" + n + ")"
	}
	return t
}

// node fetches one node, turning "not found" into an *Error with close keys.
func (x *Executor) node(ctx context.Context, tool, key string) (datasource.Node, error) {
	n, err := x.src.Node(ctx, x.graphKey, key)
	if err == nil {
		return n, nil
	}
	if !errors.Is(err, datasource.ErrNotFound) {
		return datasource.Node{}, x.srcErr(tool, "reading node "+key, err)
	}
	nodes, lerr := x.src.Nodes(ctx, x.graphKey, "")
	if lerr != nil {
		return datasource.Node{}, x.srcErr(tool, "listing nodes", lerr)
	}
	keys := make([]string, len(nodes))
	for i, n := range nodes {
		keys[i] = n.Key
	}
	return datasource.Node{}, notFoundNode(tool, key, keys)
}

func (x *Executor) overview(ctx context.Context, a args) (any, error) {
	// graphKey is required, as on the server, but like the server's the tool reads
	// the current graph whatever key the model gives.
	g, err := x.src.Graph(ctx, x.graphKey)
	if err != nil {
		return nil, x.srcErr(ReadGraphOverview, "reading", err)
	}
	nodes, err := x.src.Nodes(ctx, x.graphKey, "")
	if err != nil {
		return nil, x.srcErr(ReadGraphOverview, "listing nodes", err)
	}
	edges, err := x.src.Edges(ctx, x.graphKey, "")
	if err != nil {
		return nil, x.srcErr(ReadGraphOverview, "listing edges", err)
	}
	names, _, err := x.typeNames(ctx, ReadGraphOverview)
	if err != nil {
		return nil, err
	}
	nodeCount, edgeCount, typeCount := map[string]int{}, map[string]int{}, map[string]int{}
	for _, n := range nodes {
		nodeCount[n.Sheet]++
		typeCount[n.Type]++
	}
	for _, e := range edges {
		edgeCount[e.Sheet]++
	}
	sheetIDs := map[string]bool{}
	for id := range g.Sheets {
		sheetIDs[id] = true
	}
	for id := range nodeCount {
		sheetIDs[id] = true
	}
	for id := range edgeCount {
		sheetIDs[id] = true
	}
	ids := sortedKeys(sheetIDs)
	sheets := make([]toon.Object, 0, len(ids))
	for _, id := range ids {
		sheets = append(sheets, toon.Object{{Key: "id", Value: id}, {Key: "name", Value: g.SheetName(id)},
			{Key: "nodes", Value: nodeCount[id]}, {Key: "edges", Value: edgeCount[id]}})
	}
	types := make([]toon.Object, 0, len(typeCount))
	for _, t := range sortedKeys(typeCount) {
		name := names[t]
		if name == "" {
			name = t
		}
		types = append(types, toon.Object{{Key: "type", Value: t}, {Key: "name", Value: name},
			{Key: "builtin", Value: datasource.IsBuiltinType(t)}, {Key: "nodes", Value: typeCount[t]}})
	}
	out := toon.Object{
		{Key: "key", Value: g.Key}, {Key: "name", Value: g.Name}, {Key: "description", Value: g.Description},
		{Key: "nodes", Value: len(nodes)}, {Key: "edges", Value: len(edges)},
		{Key: "sheets", Value: sheets}, {Key: "nodeTypes", Value: types},
	}
	if len(g.Metadata) > 0 {
		out = append(out, toon.Field{Key: "metadata", Value: dataValue(g.Metadata)})
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (x *Executor) search(ctx context.Context, a args) (any, error) {
	query := a.str("query")
	limit := int(a.num("maxResults", 10))
	sheet := a.str("sheetId")
	g, err := x.src.Graph(ctx, x.graphKey)
	if err != nil {
		return nil, x.srcErr(SearchNodes, "reading", err)
	}
	if sheet != "" {
		if _, ok := g.Sheets[sheet]; !ok {
			if id, ok := sheetByName(g, sheet); ok {
				sheet = id
			} else {
				return nil, argErr(SearchNodes, "sheet %q does not exist; the sheets are: %s", sheet, sheetList(g))
			}
		}
	}
	fetch := limit
	if sheet != "" {
		fetch = max(limit*5, 100) // filtered after ranking
	}
	hits, err := x.src.Search(ctx, x.graphKey, query, fetch, nil)
	if err != nil {
		return nil, x.srcErr(SearchNodes, "searching", err)
	}
	names, _, err := x.typeNames(ctx, SearchNodes)
	if err != nil {
		return nil, err
	}
	rows := []toon.Object{}
	for _, h := range hits {
		if sheet != "" && h.Node.Sheet != sheet {
			continue
		}
		if len(rows) == limit {
			break
		}
		rows = append(rows, toon.Object{
			{Key: "key", Value: h.Node.Key}, {Key: "type", Value: typeLabel(h.Node.Type, names)},
			{Key: "sheet", Value: g.SheetName(h.Node.Sheet)}, {Key: "score", Value: round3(h.Score)},
			{Key: "preview", Value: preview(h.Node.Process, PreviewMax)},
		})
	}
	out := toon.Object{{Key: "query", Value: query}, {Key: "results", Value: rows}}
	if len(rows) == 0 {
		out = append(out, toon.Field{Key: "hint", Value: "No node matched. Try other words (a type, a word of the code) or read_graph_overview."})
	}
	return out, nil
}

func round3(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return math.Round(f*1000) / 1000
}

func sheetByName(g datasource.Graph, name string) (string, bool) {
	found := ""
	n := 0
	for id, nm := range g.Sheets {
		if nm == name {
			found = id
			n++
		}
	}
	return found, n == 1
}

func sheetList(g datasource.Graph) string {
	var parts []string
	for _, id := range sortedKeys(g.Sheets) {
		parts = append(parts, fmt.Sprintf("%q (%s)", id, g.Sheets[id]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return joinComma(parts)
}

func edgeRow(e datasource.Edge) toon.Object {
	return toon.Object{{Key: "key", Value: e.Key}, {Key: "from", Value: endpoint(e.Source, e.SourceHandle)},
		{Key: "to", Value: endpoint(e.Target, e.TargetHandle)}, {Key: "label", Value: e.Label}}
}

func (x *Executor) explore(ctx context.Context, a args) (any, error) {
	key := a.str("nodeKey")
	depth := int(a.num("maxDepth", 2))
	dir, _ := datasource.ParseDirection(a.str("direction")) // enum checked
	if _, err := x.node(ctx, ExploreNeighborhood, key); err != nil {
		return nil, err
	}
	nb, err := x.src.Neighborhood(ctx, x.graphKey, key, depth, dir)
	if err != nil {
		return nil, x.srcErr(ExploreNeighborhood, "walking from "+key, err)
	}
	g, err := x.src.Graph(ctx, x.graphKey)
	if err != nil {
		return nil, x.srcErr(ExploreNeighborhood, "reading", err)
	}
	names, _, err := x.typeNames(ctx, ExploreNeighborhood)
	if err != nil {
		return nil, err
	}
	nodes := make([]toon.Object, 0, min(len(nb.Nodes), MaxListNodes))
	for _, n := range nb.Nodes {
		if len(nodes) == MaxListNodes {
			break
		}
		nodes = append(nodes, toon.Object{{Key: "key", Value: n.Key}, {Key: "type", Value: typeLabel(n.Type, names)},
			{Key: "sheet", Value: g.SheetName(n.Sheet)}, {Key: "preview", Value: preview(n.Process, PreviewMax)}})
	}
	edges := make([]toon.Object, 0, min(len(nb.Edges), MaxListEdges))
	for _, e := range nb.Edges {
		if len(edges) == MaxListEdges {
			break
		}
		edges = append(edges, edgeRow(e))
	}
	out := toon.Object{{Key: "start", Value: key}, {Key: "depth", Value: depth}, {Key: "direction", Value: string(dir)},
		{Key: "nodes", Value: nodes}, {Key: "edges", Value: edges}}
	if len(nb.Nodes) > len(nodes) || len(nb.Edges) > len(edges) {
		out = append(out, toon.Field{Key: "truncated", Value: fmt.Sprintf("showing %d of %d nodes and %d of %d edges; use a smaller maxDepth or a direction", len(nodes), len(nb.Nodes), len(edges), len(nb.Edges))})
	}
	return out, nil
}

func (x *Executor) detail(ctx context.Context, a args) (any, error) {
	n, err := x.node(ctx, ReadNodeDetail, a.str("nodeKey"))
	if err != nil {
		return nil, err
	}
	g, err := x.src.Graph(ctx, x.graphKey)
	if err != nil {
		return nil, x.srcErr(ReadNodeDetail, "reading", err)
	}
	names, cfgs, err := x.typeNames(ctx, ReadNodeDetail)
	if err != nil {
		return nil, err
	}
	edges, err := x.src.Edges(ctx, x.graphKey, "")
	if err != nil {
		return nil, x.srcErr(ReadNodeDetail, "listing edges", err)
	}
	in, out := []toon.Object{}, []toon.Object{}
	for _, e := range edges {
		if e.Target == n.Key {
			in = append(in, edgeRow(e))
		}
		if e.Source == n.Key {
			out = append(out, edgeRow(e))
		}
	}
	handles := datasource.EffectiveHandles(n, cfgs)
	return toon.Object{
		{Key: "key", Value: n.Key}, {Key: "type", Value: typeLabel(n.Type, names)},
		{Key: "sheet", Value: n.Sheet}, {Key: "sheetName", Value: g.SheetName(n.Sheet)},
		{Key: "posX", Value: n.PosX}, {Key: "posY", Value: n.PosY},
		{Key: "size", Value: fmt.Sprintf("%gx%g", n.Size.Width, n.Size.Height)},
		{Key: "handles", Value: HandlesSummary(handles)},
		{Key: "data", Value: dataValue(n.Data)},
		{Key: "inbound", Value: in}, {Key: "outbound", Value: out},
	}, nil
}

func (x *Executor) config(ctx context.Context, a args) (any, error) {
	t := a.str("typeKey")
	if b, ok := builtin(t); ok {
		return toon.Object{{Key: "type", Value: b.Type}, {Key: "builtin", Value: true},
			{Key: "description", Value: b.Description}, {Key: "handles", Value: HandlesSummary(b.Handles)},
			{Key: "process", Value: "(built-in, no custom process code)"}}, nil
	}
	_, cfgs, err := x.typeNames(ctx, ReadNodeConfig)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, c := range cfgs {
		if c.Key == t {
			out := toon.Object{{Key: "type", Value: c.Key}, {Key: "builtin", Value: false},
				{Key: "displayName", Value: c.DisplayName}, {Key: "description", Value: truncate(c.Description, DetailDataMax)},
				{Key: "category", Value: c.Category}, {Key: "icon", Value: c.Icon},
				{Key: "handles", Value: HandlesSummary(datasource.DefaultHandles(c.Key, cfgs))},
				{Key: "process", Value: truncate(c.Process, DetailProcessMax)}}
			if s, ok := c.NodeSize(); ok { // as the server's defaultSize: what a new node of the type gets
				out = append(out, toon.Field{Key: "defaultSize", Value: toon.Object{{Key: "width", Value: s.Width}, {Key: "height", Value: s.Height}}})
			}
			return out, nil
		}
		keys = append(keys, c.Key)
	}
	return nil, unknownType(ReadNodeConfig, t, keys)
}

func unknownType(tool, t string, custom []string) error {
	custom = append([]string(nil), custom...)
	sort.Strings(custom)
	all := append(append([]string{}, datasource.BuiltinTypes...), custom...)
	msg := fmt.Sprintf("node type %q does not exist", t)
	if near := closeKeys(t, all, 3); len(near) > 0 {
		msg += "; did you mean " + quoteOr(near) + "?"
	}
	msg += " Known types: " + joinComma(all) + "."
	return &Error{Tool: tool, Code: CodeNotFound, Msg: msg}
}

func (x *Executor) types(ctx context.Context) (any, error) {
	_, cfgs, err := x.typeNames(ctx, ListAvailableNodeTypes)
	if err != nil {
		return nil, err
	}
	bs := Builtins()
	builtins := make([]toon.Object, 0, len(bs))
	for _, b := range bs {
		builtins = append(builtins, toon.Object{{Key: "type", Value: b.Type}, {Key: "handles", Value: HandlesSummary(b.Handles)},
			{Key: "description", Value: b.Description}})
	}
	cfgs = append([]datasource.NodeConfig(nil), cfgs...)
	sort.Slice(cfgs, func(i, j int) bool { return cfgs[i].Key < cfgs[j].Key })
	custom := make([]toon.Object, 0, len(cfgs))
	for _, c := range cfgs {
		custom = append(custom, toon.Object{{Key: "type", Value: c.Key}, {Key: "displayName", Value: c.DisplayName},
			{Key: "category", Value: c.Category}, {Key: "handles", Value: HandlesSummary(datasource.DefaultHandles(c.Key, cfgs))},
			{Key: "description", Value: preview(c.Description, ConfigDescMax)}})
	}
	return toon.Object{{Key: "builtin", Value: builtins}, {Key: "custom", Value: custom}}, nil
}

func (x *Executor) edges(ctx context.Context, a args) (any, error) {
	key := a.str("nodeKey")
	dir, _ := datasource.ParseDirection(a.str("direction"))
	if _, err := x.node(ctx, ListNodeEdges, key); err != nil {
		return nil, err
	}
	edges, err := x.src.Edges(ctx, x.graphKey, "")
	if err != nil {
		return nil, x.srcErr(ListNodeEdges, "listing edges", err)
	}
	rows := []toon.Object{}
	total := 0
	for _, e := range edges {
		var d string
		switch {
		case e.Source == key && dir != datasource.Inbound:
			d = "out"
		case e.Target == key && dir != datasource.Outbound:
			d = "in"
		default:
			continue
		}
		if total++; len(rows) == MaxListEdges {
			continue
		}
		rows = append(rows, toon.Object{{Key: "key", Value: e.Key}, {Key: "direction", Value: d},
			{Key: "from", Value: endpoint(e.Source, e.SourceHandle)}, {Key: "to", Value: endpoint(e.Target, e.TargetHandle)},
			{Key: "label", Value: e.Label}, {Key: "sheet", Value: e.Sheet}})
	}
	out := toon.Object{{Key: "node", Value: key}, {Key: "direction", Value: string(dir)}, {Key: "edges", Value: rows}}
	if total > len(rows) {
		out = append(out, toon.Field{Key: "truncated", Value: fmt.Sprintf("showing %d of %d edges; ask for one direction", len(rows), total)})
	}
	return out, nil
}

// dataValue is node data for read_node_detail: the value itself when its JSON form is
// within DetailDataMax (TOON shows nested data readably), else truncated JSON text.
func dataValue(v any) any {
	s := dataText(v, DetailDataMax+1)
	if s == "" {
		return ""
	}
	if len([]rune(s)) <= DetailDataMax {
		return v
	}
	return dataText(v, DetailDataMax)
}

// subgraphFields are the fields read_subgraph shows per node, default first.
var subgraphFields = []string{"_key", "type", "sheet", "posX", "posY", "handles", "data", "size"}

func (x *Executor) subgraph(ctx context.Context, a args) (any, error) {
	keys := a.strings("nodeKeys")
	fields := map[string]bool{"_key": true, "type": true, "sheet": true, "posX": true, "posY": true}
	if a.has("fields") {
		fields = map[string]bool{}
		for _, f := range a.strings("fields") {
			if !contains(subgraphFields, f) {
				return nil, argErr(ReadSubgraph, "unknown field %q; the fields are: %s", f, joinComma(subgraphFields))
			}
			fields[f] = true
		}
	}
	g, err := x.src.Graph(ctx, x.graphKey)
	if err != nil {
		return nil, x.srcErr(ReadSubgraph, "reading", err)
	}
	names, cfgs, err := x.typeNames(ctx, ReadSubgraph)
	if err != nil {
		return nil, err
	}
	nodes := []toon.Object{}
	types := map[string]bool{}
	var missing []string
	for _, k := range keys {
		n, err := x.src.Node(ctx, x.graphKey, k)
		if errors.Is(err, datasource.ErrNotFound) {
			missing = append(missing, k)
			continue
		}
		if err != nil {
			return nil, x.srcErr(ReadSubgraph, "reading node "+k, err)
		}
		types[n.Type] = true
		row := toon.Object{}
		for _, f := range subgraphFields {
			if !fields[f] {
				continue
			}
			var v any
			switch f {
			case "_key":
				v = n.Key
			case "type":
				v = typeLabel(n.Type, names)
			case "sheet":
				v = g.SheetName(n.Sheet)
			case "posX":
				v = n.PosX
			case "posY":
				v = n.PosY
			case "handles":
				v = HandlesSummary(datasource.EffectiveHandles(n, cfgs))
			case "data":
				v = preview(dataText(n.Data, 501), 500)
			case "size":
				v = fmt.Sprintf("%gx%g", n.Size.Width, n.Size.Height)
			}
			row = append(row, toon.Field{Key: f, Value: v})
		}
		nodes = append(nodes, row)
	}
	out := toon.Object{{Key: "nodes", Value: nodes}}
	if len(missing) > 0 {
		out = append(out, toon.Field{Key: "notFound", Value: joinComma(missing)})
	}
	if a.boolean("includeConfigs", true) {
		rows := []toon.Object{}
		for _, c := range cfgs {
			if types[c.Key] {
				rows = append(rows, toon.Object{{Key: "type", Value: c.Key}, {Key: "displayName", Value: c.DisplayName},
					{Key: "description", Value: preview(c.Description, ConfigDescMax)},
					{Key: "handles", Value: HandlesSummary(datasource.DefaultHandles(c.Key, cfgs))}})
			}
		}
		out = append(out, toon.Field{Key: "configs", Value: rows})
	}
	if a.boolean("includeEdges", true) {
		edges, err := x.src.Edges(ctx, x.graphKey, "")
		if err != nil {
			return nil, x.srcErr(ReadSubgraph, "listing edges", err)
		}
		want := map[string]bool{}
		for _, k := range keys {
			want[k] = true
		}
		rows := []toon.Object{}
		for _, e := range edges {
			if (want[e.Source] || want[e.Target]) && len(rows) < MaxListEdges {
				rows = append(rows, edgeRow(e))
			}
		}
		out = append(out, toon.Field{Key: "edges", Value: rows})
	}
	return out, nil
}
