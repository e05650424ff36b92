package memgraph

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

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

func (tx *txn) CreateNode(n datasource.Node) (datasource.Node, error) {
	if n.Key == "" {
		k, err := tx.generateKey("node")
		if err != nil {
			return datasource.Node{}, err
		}
		n.Key = k
	} else {
		if _, dup := tx.nodeIdx[n.Key]; dup {
			return datasource.Node{}, fmt.Errorf("a node with key %q already exists", n.Key)
		}
		if _, dup := tx.edgeIdx[n.Key]; dup {
			return datasource.Node{}, fmt.Errorf("key %q is already used by an edge", n.Key)
		}
	}
	n, err := datasource.NewNode(tx, n)
	if err != nil {
		return datasource.Node{}, err
	}
	// A node's code is its type's: a new node without code runs its type's. Left
	// empty, a file in Nodius's format would read it as the type's code changed to
	// nothing (file.CodeToTypes) and wipe the code of every node of the type.
	if n.Process == "" {
		if c, ok := tx.LookupConfig(n.Type); ok {
			n.Process = c.Process
		}
	}
	tx.writeNodes()
	tx.writeNodeIdx()
	tx.nodeIdx[n.Key] = int32(len(tx.nodes))
	tx.nodes = append(tx.nodes, n)
	return n, nil
}

func (tx *txn) MoveNode(key string, x, y float64) error {
	i, err := tx.node(key)
	if err != nil {
		return err
	}
	if err := datasource.CheckPosition(x, y); err != nil {
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
	e, err := datasource.NewEdge(tx, e)
	if err != nil {
		return datasource.Edge{}, err
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
	if err := datasource.CheckKey("edge", key); err != nil {
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

// UpdateNode changes fields of a node by path (datasource.PatchNode says which and
// how the result must still fit the graph).
func (tx *txn) UpdateNode(key string, changes map[string]any) (datasource.Node, error) {
	i, err := tx.node(key)
	if err != nil {
		return datasource.Node{}, err
	}
	n, err := datasource.PatchNode(tx, tx.nodes[i], changes)
	if err != nil {
		return datasource.Node{}, err
	}
	tx.writeNodes()
	tx.nodes[i] = n
	return n, nil
}
