package memgraph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/nodius/nodius-ai/datasource"
)

// defaultKey makes keys like the Nodius server's AI-created ones: ai_{unix ms}_{random}.
func defaultKey(string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 6)
	for i := range b {
		b[i] = alphabet[rand.IntN(len(alphabet))]
	}
	return "ai_" + strconv.FormatInt(time.Now().UnixMilli(), 10) + "_" + string(b)
}

// txn is a working copy of one graph: every change of one call (or of one whole
// action, batch included) is made on it, then it becomes the next view at once.
//
// Copies are made lazily: a move or an update copies the node list only; the edge
// list, the key maps and the adjacency lists are copied or rebuilt only when nodes or
// edges are added or removed.
//
// Its exported methods make it a datasource.Changes, so ApplyAction runs a whole
// action, batch included, on one working copy.
type txn struct {
	s       *Store
	graph   datasource.Graph
	nodes   []datasource.Node
	edges   []datasource.Edge
	configs []datasource.NodeConfig
	cfgIdx  map[string]int32
	nodeIdx map[string]int32
	edgeIdx map[string]int32

	ownNodes, ownEdges, ownNodeIdx, ownEdgeIdx bool
	structural                                 bool // nodes or edges added or removed
}

func (tx *txn) writeNodes() {
	if !tx.ownNodes {
		tx.nodes, tx.ownNodes = slices.Clone(tx.nodes), true
	}
}

func (tx *txn) writeEdges() {
	if !tx.ownEdges {
		tx.edges, tx.ownEdges = slices.Clone(tx.edges), true
	}
	tx.structural = true
}

func (tx *txn) writeNodeIdx() {
	if !tx.ownNodeIdx {
		tx.nodeIdx, tx.ownNodeIdx = maps.Clone(tx.nodeIdx), true
	}
	tx.structural = true
}

func (tx *txn) writeEdgeIdx() {
	if !tx.ownEdgeIdx {
		tx.edgeIdx, tx.ownEdgeIdx = maps.Clone(tx.edgeIdx), true
	}
	tx.structural = true
}

// mutate runs fn on a working copy of the graph and publishes the result as the
// next version, after the commit hook accepted it. Nothing changes when fn or the
// hook fails.
func (s *Store) mutate(ctx context.Context, graphKey string, fn func(tx *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.wmu.Lock()
	v, err := s.get(graphKey)
	if err != nil {
		s.wmu.Unlock()
		return err
	}
	tx := &txn{s: s, graph: v.graph, configs: v.configs, cfgIdx: v.cfgIdx,
		nodes: v.nodes, edges: v.edges, nodeIdx: v.nodeIdx, edgeIdx: v.edgeIdx}
	if err := fn(tx); err != nil {
		s.wmu.Unlock()
		// The change does not fit the graph as it is: the caller (and the model)
		// can act on that, unlike a failure to save it.
		return &datasource.ConflictError{Err: err}
	}
	next := &view{graph: tx.graph, nodes: tx.nodes, edges: tx.edges, configs: tx.configs,
		nodeIdx: tx.nodeIdx, edgeIdx: tx.edgeIdx, cfgIdx: tx.cfgIdx, version: v.version + 1}
	if tx.structural {
		next.buildAdjacency()
	} else {
		next.out, next.in = v.out, v.in // same nodes in the same order, same edges
	}
	if s.commit != nil {
		if err := s.commit(ctx, graphKey, next.snapshot()); err != nil {
			s.wmu.Unlock()
			return err
		}
	}
	s.mu.Lock()
	s.graphs[graphKey] = next
	s.mu.Unlock()
	s.wmu.Unlock()
	if s.onChange != nil {
		s.onChange(graphKey, next.version)
	}
	return nil
}

// CreateNode adds a node. An empty key gets a generated one (ai_{ms}_{random}); the
// type must be built in or configured; the sheet (id or name, "0" when empty) must
// exist; a node given no handles gets its type's default handles.
func (s *Store) CreateNode(ctx context.Context, graphKey string, n datasource.Node) (datasource.Node, error) {
	var created datasource.Node
	err := s.mutate(ctx, graphKey, func(tx *txn) error {
		var err error
		created, err = tx.CreateNode(n)
		return err
	})
	return created, err
}

// UpdateNode changes fields of a node. Paths: process, type, data (whole value),
// data.a.b (nested set; numeric segments index arrays), handles, sheet, posX, posY,
// size, size.width, size.height. Any other path is rejected, and so is the whole
// change when one path fails.
func (s *Store) UpdateNode(ctx context.Context, graphKey, nodeKey string, changes map[string]any) (datasource.Node, error) {
	var updated datasource.Node
	err := s.mutate(ctx, graphKey, func(tx *txn) error {
		var err error
		updated, err = tx.UpdateNode(nodeKey, changes)
		return err
	})
	return updated, err
}

// MoveNode sets a node's position on the canvas.
func (s *Store) MoveNode(ctx context.Context, graphKey, nodeKey string, posX, posY float64) error {
	return s.mutate(ctx, graphKey, func(tx *txn) error { return tx.MoveNode(nodeKey, posX, posY) })
}

// DeleteNode removes a node and the edges attached to it, and returns those edges.
func (s *Store) DeleteNode(ctx context.Context, graphKey, nodeKey string) ([]datasource.Edge, error) {
	var removed []datasource.Edge
	err := s.mutate(ctx, graphKey, func(tx *txn) error {
		var err error
		removed, err = tx.DeleteNode(nodeKey)
		return err
	})
	return removed, err
}

// CreateEdge joins an output point of the source node to an input point of the
// target node. Both nodes must exist on the same sheet; an empty handle is filled in
// when the node has exactly one point of the needed kind; an empty key is generated.
func (s *Store) CreateEdge(ctx context.Context, graphKey string, e datasource.Edge) (datasource.Edge, error) {
	var created datasource.Edge
	err := s.mutate(ctx, graphKey, func(tx *txn) error {
		var err error
		created, err = tx.CreateEdge(e)
		return err
	})
	return created, err
}

// DeleteEdge removes one edge.
func (s *Store) DeleteEdge(ctx context.Context, graphKey, edgeKey string) error {
	return s.mutate(ctx, graphKey, func(tx *txn) error { return tx.DeleteEdge(edgeKey) })
}

// ApplyAction applies a whole proposed action, batch included, as one change: either
// every step is applied and published together, or none is. An expectation
// (datasource.Expect) is checked on the same working copy, before its first step,
// and a recorder (datasource.Record) sees the steps made on it.
func (s *Store) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	res := datasource.ApplyResult{Applied: true, Created: datasource.Created{Nodes: []string{}, Edges: []string{}}, Note: s.applyNote}
	o := datasource.ApplyOptionsOf(opts)
	err := s.mutate(ctx, graphKey, func(tx *txn) error {
		if o.Expect != nil {
			if err := datasource.CheckShown(tx, *o.Expect); err != nil {
				return err
			}
		}
		return datasource.ApplyChanges(o.Changes(tx), a, &res)
	})
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	return res, nil
}

func (tx *txn) node(key string) (int32, error) {
	i, ok := tx.nodeIdx[key]
	if !ok {
		return 0, &datasource.NotFoundError{Kind: "node", Key: key}
	}
	return i, nil
}

func (tx *txn) generateKey(kind string) (string, error) {
	for range 100 {
		k := tx.s.newKey(kind)
		if k == "" {
			continue
		}
		_, nodeTaken := tx.nodeIdx[k]
		_, edgeTaken := tx.edgeIdx[k]
		if !nodeTaken && !edgeTaken {
			return k, nil
		}
	}
	return "", fmt.Errorf("could not generate a free %s key", kind)
}

// checkKey rejects keys ArangoDB and the Nodius editor would refuse.
func checkKey(kind, key string) error {
	if len(key) > 254 {
		return fmt.Errorf("%s key is too long (%d bytes, at most 254)", kind, len(key))
	}
	for _, r := range key {
		if r == '/' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("%s key %q may not contain spaces, control characters or '/'", kind, key)
		}
	}
	return nil
}

// sheet resolves a sheet id or name for a new node or edge ("0" when empty).
func (tx *txn) sheet(sheet string) (string, error) {
	if sheet == "" {
		sheet = "0"
	}
	if len(tx.graph.Sheets) == 0 && sheet == "0" {
		return sheet, nil
	}
	id, err := resolveSheet(tx.graph, sheet, nil)
	if err != nil {
		return "", fmt.Errorf("sheet %q does not exist in graph %q (sheets: %s): %w", sheet, tx.graph.Key, sheetList(tx.graph), err)
	}
	return id, nil
}

func (tx *txn) checkType(t string) error {
	if t == "" {
		return errors.New("node type is empty")
	}
	if datasource.IsBuiltinType(t) {
		return nil
	}
	if _, ok := tx.cfgIdx[t]; ok {
		return nil
	}
	known := slices.Clone(datasource.BuiltinTypes)
	for _, c := range tx.configs {
		known = append(known, c.Key)
	}
	return fmt.Errorf("unknown node type %q (known types: %s): %w", t, strings.Join(known, ", "),
		&datasource.NotFoundError{Kind: "node type", Key: t})
}

func (tx *txn) CreateNode(n datasource.Node) (datasource.Node, error) {
	if n.Key == "" {
		k, err := tx.generateKey("node")
		if err != nil {
			return datasource.Node{}, err
		}
		n.Key = k
	} else {
		if err := checkKey("node", n.Key); err != nil {
			return datasource.Node{}, err
		}
		if _, dup := tx.nodeIdx[n.Key]; dup {
			return datasource.Node{}, fmt.Errorf("a node with key %q already exists", n.Key)
		}
		if _, dup := tx.edgeIdx[n.Key]; dup {
			return datasource.Node{}, fmt.Errorf("key %q is already used by an edge", n.Key)
		}
	}
	if err := tx.checkType(n.Type); err != nil {
		return datasource.Node{}, err
	}
	sheet, err := tx.sheet(n.Sheet)
	if err != nil {
		return datasource.Node{}, err
	}
	n.Sheet = sheet
	if len(n.Handles) == 0 {
		n.Handles = datasource.DefaultHandles(n.Type, tx.configs)
	} else if n.Handles, err = datasource.CheckHandles(n.Handles); err != nil {
		return datasource.Node{}, fmt.Errorf("handles: %w", err)
	}
	if err := checkPosition(n.PosX, n.PosY); err != nil {
		return datasource.Node{}, err
	}
	if n.Data == nil {
		n.Data = map[string]any{}
	}
	// A node's code is its type's: a new node without code runs its type's. Left
	// empty, a file in Nodius's format would read it as the type's code changed to
	// nothing (file.CodeToTypes) and wipe the code of every node of the type.
	if n.Process == "" {
		for _, c := range tx.configs {
			if c.Key == n.Type {
				n.Process = c.Process
			}
		}
	}
	if n.Size.Width <= 0 || n.Size.Height <= 0 || !finite(n.Size.Width) || !finite(n.Size.Height) {
		n.Size = datasource.DefaultSize(n.Type, tx.configs) // the type's node.size
	}
	tx.writeNodes()
	tx.writeNodeIdx()
	tx.nodeIdx[n.Key] = int32(len(tx.nodes))
	tx.nodes = append(tx.nodes, n)
	return n, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func checkPosition(x, y float64) error {
	if !finite(x) || !finite(y) {
		return fmt.Errorf("position must be finite numbers (got %v, %v)", x, y)
	}
	return nil
}

func (tx *txn) MoveNode(key string, x, y float64) error {
	i, err := tx.node(key)
	if err != nil {
		return err
	}
	if err := checkPosition(x, y); err != nil {
		return err
	}
	tx.writeNodes()
	tx.nodes[i].PosX, tx.nodes[i].PosY = x, y
	return nil
}

// DeleteNode removes the node and its edges; the index maps are rebuilt.
func (tx *txn) DeleteNode(key string) ([]datasource.Edge, error) {
	i, err := tx.node(key)
	if err != nil {
		return nil, err
	}
	removed := []datasource.Edge{}
	kept := make([]datasource.Edge, 0, len(tx.edges))
	for _, e := range tx.edges {
		if e.Source == key || e.Target == key {
			removed = append(removed, e)
		} else {
			kept = append(kept, e)
		}
	}
	tx.writeNodes()
	tx.nodes = slices.Delete(tx.nodes, int(i), int(i)+1)
	tx.edges, tx.ownEdges = kept, true
	tx.reindex()
	return removed, nil
}

// reindex rebuilds both key maps (after a node is removed, indices shift).
func (tx *txn) reindex() {
	tx.ownNodeIdx, tx.ownEdgeIdx, tx.structural = true, true, true
	tx.nodeIdx = make(map[string]int32, len(tx.nodes))
	for i, n := range tx.nodes {
		tx.nodeIdx[n.Key] = int32(i)
	}
	tx.edgeIdx = make(map[string]int32, len(tx.edges))
	for i, e := range tx.edges {
		tx.edgeIdx[e.Key] = int32(i)
	}
}

func (tx *txn) DeleteEdge(key string) error {
	i, ok := tx.edgeIdx[key]
	if !ok {
		return &datasource.NotFoundError{Kind: "edge", Key: key}
	}
	tx.writeEdges()
	tx.writeEdgeIdx()
	tx.edges = slices.Delete(tx.edges, int(i), int(i)+1)
	delete(tx.edgeIdx, key)
	for j := int(i); j < len(tx.edges); j++ {
		tx.edgeIdx[tx.edges[j].Key] = int32(j)
	}
	return nil
}

func (tx *txn) CreateEdge(e datasource.Edge) (datasource.Edge, error) {
	si, err := tx.node(e.Source)
	if err != nil {
		return datasource.Edge{}, fmt.Errorf("source: %w", err)
	}
	ti, err := tx.node(e.Target)
	if err != nil {
		return datasource.Edge{}, fmt.Errorf("target: %w", err)
	}
	src, dst := tx.nodes[si], tx.nodes[ti]
	if src.Sheet != dst.Sheet {
		return datasource.Edge{}, fmt.Errorf("nodes %q (sheet %s) and %q (sheet %s) are on different sheets; an edge joins nodes of one sheet",
			src.Key, src.Sheet, dst.Key, dst.Sheet)
	}
	if e.Sheet == "" {
		e.Sheet = src.Sheet
	} else {
		id, err := tx.sheet(e.Sheet)
		if err != nil {
			return datasource.Edge{}, err
		}
		if id != src.Sheet {
			return datasource.Edge{}, fmt.Errorf("edge sheet %s differs from the sheet of its nodes (%s)", id, src.Sheet)
		}
		e.Sheet = id
	}
	if e.SourceHandle, err = datasource.ResolveHandle(src.Key, datasource.EffectiveHandles(src, tx.configs), e.SourceHandle, "out"); err != nil {
		return datasource.Edge{}, err
	}
	if e.TargetHandle, err = datasource.ResolveHandle(dst.Key, datasource.EffectiveHandles(dst, tx.configs), e.TargetHandle, "in"); err != nil {
		return datasource.Edge{}, err
	}
	for _, old := range tx.edges {
		if old.Source == e.Source && old.SourceHandle == e.SourceHandle && old.Target == e.Target && old.TargetHandle == e.TargetHandle {
			return datasource.Edge{}, fmt.Errorf("an edge already joins %s:%s to %s:%s (%s)", e.Source, e.SourceHandle, e.Target, e.TargetHandle, old.Key)
		}
	}
	if e.Key == "" {
		if e.Key, err = tx.generateKey("edge"); err != nil {
			return datasource.Edge{}, err
		}
	} else if err := tx.checkNewEdgeKey(e.Key); err != nil {
		return datasource.Edge{}, err
	}
	tx.appendEdge(e)
	return e, nil
}

// checkNewEdgeKey refuses a caller-chosen edge key that is malformed or already
// used by an edge or a node (CreateEdge and RestoreEdge).
func (tx *txn) checkNewEdgeKey(key string) error {
	if err := checkKey("edge", key); err != nil {
		return err
	}
	if _, dup := tx.edgeIdx[key]; dup {
		return fmt.Errorf("an edge with key %q already exists", key)
	}
	if _, dup := tx.nodeIdx[key]; dup {
		return fmt.Errorf("key %q is already used by a node", key)
	}
	return nil
}

// appendEdge adds e (its key checked) to the transaction's copy of the edges.
func (tx *txn) appendEdge(e datasource.Edge) {
	tx.writeEdges()
	tx.writeEdgeIdx()
	tx.edgeIdx[e.Key] = int32(len(tx.edges))
	tx.edges = append(tx.edges, e)
}

// RestoreEdge puts back an edge undo recorded, as it was (datasource.EdgeRestorer):
// an edge between two sheets, which CreateEdge refuses for a new one, included.
func (tx *txn) RestoreEdge(e datasource.Edge) (datasource.Edge, error) {
	si, err := tx.node(e.Source)
	if err != nil {
		return datasource.Edge{}, fmt.Errorf("source: %w", err)
	}
	if _, err := tx.node(e.Target); err != nil {
		return datasource.Edge{}, fmt.Errorf("target: %w", err)
	}
	if err := tx.checkNewEdgeKey(e.Key); err != nil {
		return datasource.Edge{}, err
	}
	if e.Sheet == "" {
		e.Sheet = tx.nodes[si].Sheet
	}
	tx.appendEdge(e)
	return e, nil
}

// updatePaths lists the accepted UpdateNode paths, for the error message.
const updatePaths = "process, type, data, data.<path>, handles, sheet, posX, posY, size, size.width, size.height, name, description"

func (tx *txn) UpdateNode(key string, changes map[string]any) (datasource.Node, error) {
	i, err := tx.node(key)
	if err != nil {
		return datasource.Node{}, err
	}
	if len(changes) == 0 {
		return datasource.Node{}, errors.New("no changes given")
	}
	n := tx.nodes[i]
	paths := slices.Collect(maps.Keys(changes))
	sort.Strings(paths) // "data" before "data.x": a whole value first, then nested sets into it
	dataCopied := false
	for _, path := range paths {
		val := changes[path]
		fail := func(format string, args ...any) (datasource.Node, error) {
			return datasource.Node{}, fmt.Errorf("change %q: %s", path, fmt.Sprintf(format, args...))
		}
		switch {
		case path == "process":
			s, ok := val.(string)
			if !ok {
				return fail("expected a string, got %s", describe(val))
			}
			n.Process = s
		case path == "type":
			s, ok := val.(string)
			if !ok {
				return fail("expected a string, got %s", describe(val))
			}
			if err := tx.checkType(s); err != nil {
				return datasource.Node{}, fmt.Errorf("change %q: %w", path, err)
			}
			n.Type = s
		case path == "data":
			n.Data = deepCopy(val)
			dataCopied = true
		case strings.HasPrefix(path, "data."):
			if !dataCopied {
				n.Data = deepCopy(n.Data)
				dataCopied = true
			}
			nd, err := setPath(n.Data, strings.Split(strings.TrimPrefix(path, "data."), "."), deepCopy(val))
			if err != nil {
				return fail("%v", err)
			}
			n.Data = nd
		case path == "handles":
			h, err := toHandles(val)
			if err != nil {
				return fail("%v", err)
			}
			if h, err = datasource.CheckHandles(h); err != nil {
				return fail("%v", err)
			}
			n.Handles = h
		case path == "sheet":
			s, ok := val.(string)
			if !ok {
				return fail("expected a string, got %s", describe(val))
			}
			id, err := tx.sheet(s)
			if err != nil {
				return datasource.Node{}, fmt.Errorf("change %q: %w", path, err)
			}
			n.Sheet = id
		case path == "posX", path == "posY", path == "size.width", path == "size.height":
			f, ok := toFloat(val)
			if !ok || !finite(f) {
				return fail("expected a number, got %s", describe(val))
			}
			switch path {
			case "posX":
				n.PosX = f
			case "posY":
				n.PosY = f
			case "size.width":
				n.Size.Width = f
			case "size.height":
				n.Size.Height = f
			}
		case path == "size":
			m, ok := val.(map[string]any)
			if !ok {
				return fail("expected an object {width, height}, got %s", describe(val))
			}
			w, okw := toFloat(m["width"])
			h, okh := toFloat(m["height"])
			if !okw || !okh || !finite(w) || !finite(h) {
				return fail("expected numbers width and height")
			}
			n.Size = datasource.Size{Width: w, Height: h}
		case path == "name", path == "description":
			// Nodius nodes carry these as members of their own (the server's
			// update_node sets them); kept with the node's other members. nil removes
			// one (an undo of a change that added it).
			extra := maps.Clone(n.Extra)
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			switch v := val.(type) {
			case nil:
				delete(extra, path)
			case string:
				extra[path], _ = json.Marshal(v)
			default:
				return fail("expected a string, got %s", describe(val))
			}
			n.Extra = extra
		case path == "_key", path == "key":
			return fail("the key of a node cannot be changed; create a new node and delete this one")
		default:
			return fail("unknown field path; use one of %s", updatePaths)
		}
	}
	if n.Size.Width <= 0 || n.Size.Height <= 0 {
		return datasource.Node{}, fmt.Errorf("size must be positive (got %vx%v)", n.Size.Width, n.Size.Height)
	}
	// The node's edges must still fit: same sheet, points still there (a node
	// without handles has its type's, so a new type may drop points too).
	old := tx.nodes[i]
	if old.Sheet != n.Sheet {
		for _, e := range tx.edges {
			if e.Source == key || e.Target == key {
				return datasource.Node{}, fmt.Errorf("node %q cannot move to sheet %s: edge %s keeps it on sheet %s (delete the edge first)", key, n.Sheet, e.Key, e.Sheet)
			}
		}
	}
	if _, handlesChanged := changes["handles"]; handlesChanged || old.Type != n.Type {
		if err := datasource.CheckEdgesKeepHandles(n, datasource.EffectiveHandles(n, tx.configs), tx.edges); err != nil {
			return datasource.Node{}, err
		}
	}
	tx.writeNodes()
	tx.nodes[i] = n
	return n, nil
}

// setPath sets root.seg[0].seg[1]... = val, creating objects on the way, and returns
// the new root. root has been deep-copied by the caller.
func setPath(root any, segs []string, val any) (any, error) {
	if len(segs) == 0 || segs[0] == "" {
		return nil, errors.New("empty path segment")
	}
	seg := segs[0]
	switch cur := root.(type) {
	case nil:
		m := map[string]any{}
		if len(segs) == 1 {
			m[seg] = val
			return m, nil
		}
		child, err := setPath(nil, segs[1:], val)
		if err != nil {
			return nil, err
		}
		m[seg] = child
		return m, nil
	case map[string]any:
		if len(segs) == 1 {
			cur[seg] = val
			return cur, nil
		}
		child, err := setPath(cur[seg], segs[1:], val)
		if err != nil {
			return nil, err
		}
		cur[seg] = child
		return cur, nil
	case []any:
		idx, err := strconv.Atoi(seg)
		if err != nil || idx < 0 || idx >= len(cur) {
			return nil, fmt.Errorf("%q is not an index of an array of %d items", seg, len(cur))
		}
		if len(segs) == 1 {
			cur[idx] = val
			return cur, nil
		}
		child, err := setPath(cur[idx], segs[1:], val)
		if err != nil {
			return nil, err
		}
		cur[idx] = child
		return cur, nil
	default:
		return nil, fmt.Errorf("cannot set %q inside %s", seg, describe(root))
	}
}

// deepCopy copies free JSON values (maps and slices) so a change never writes into
// a value a published view or a caller still holds.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = deepCopy(e)
		}
		return s
	}
	return v
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func toHandles(v any) (map[string]datasource.HandleGroup, error) {
	if h, ok := v.(map[string]datasource.HandleGroup); ok {
		return datasource.CloneHandles(h), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("handles: %w", err)
	}
	var h map[string]datasource.HandleGroup
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("handles must be an object of sides {\"L\": {\"position\", \"point\": [{\"id\",\"type\",\"accept\"}]}}: %w", err)
	}
	return h, nil
}

// describe names the JSON kind of a value for error messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, json.Number:
		return "a number"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	default:
		return fmt.Sprintf("a %T", x)
	}
}
