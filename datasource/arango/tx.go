package arango

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

var _ datasource.ActionApplier = (*Source)(nil)

// DefaultLockWait is how long applying an action waits, by default, for another
// writer holding the graph collections (see Config.LockWait).
const DefaultLockWait = 10 * time.Second

// ApplyAction applies a whole action, batch included, in one ArangoDB stream
// transaction: the workspace check, the check that the graph is still what the
// person approving was shown (datasource.Expect), the reads of the undo recorder
// (datasource.Record) and every write happen inside it, and it is committed only
// when all of them succeeded. Any failure aborts it, so nothing is written: a batch
// is never left half applied, and a graph that changed since the proposal was shown
// gives a *datasource.ConflictError with nothing changed.
//
// The transaction declares nodius_nodes and nodius_edges exclusive. Snapshot
// isolation alone is not enough: it lets two writers each read their own snapshot
// and write different documents (write skew). An approval deleting a node checks,
// in its snapshot, that the node has the edges that were shown; another client
// inserting an edge to that node checks, in its own snapshot, that the node exists.
// Neither writes a document the other wrote, so both would commit: the node gone,
// and an edge nobody approved leaving with it or dangling. With the exclusive lock
// every other writer of those collections waits until this transaction ends, so
// nothing changes between the check and the writes, and a writer that checks in
// its own transaction afterwards sees the result. Readers are not blocked.
//
// A lock held by another writer for longer than Config.LockWait (or a write-write
// conflict) fails with an error wrapping datasource.ErrLocked: nothing was
// changed, and trying again later may work.
func (s *Source) ApplyAction(ctx context.Context, graphKey string, a datasource.Action, opts ...datasource.ApplyOption) (datasource.ApplyResult, error) {
	o := datasource.ApplyOptionsOf(opts)
	if err := s.checkNoLiveServer(ctx, graphKey); err != nil {
		return datasource.ApplyResult{}, err
	}
	var res datasource.ApplyResult
	err := s.inTransaction(ctx, graphKey, func(w *txCopy) error {
		res = datasource.ApplyResult{Applied: true, Created: datasource.Created{Nodes: []string{}, Edges: []string{}}}
		if o.Expect != nil {
			if err := datasource.CheckShown(w, *o.Expect); err != nil {
				return &datasource.ConflictError{Err: err}
			}
		}
		return datasource.ApplyChanges(o.Changes(w), a, &res)
	})
	if err != nil {
		return datasource.ApplyResult{}, err
	}
	return res, nil
}

var _ datasource.WorkingCopyChanger = (*Source)(nil)

// Change runs fn on a working copy of graphKey inside one stream transaction, as
// ApplyAction does, and commits only when fn succeeds. Undo uses it, so reversing a
// change is all or nothing here too: a reversal that fails at its second step
// leaves its first one unreversed as well, not half the change undone.
func (s *Source) Change(ctx context.Context, graphKey string, fn func(datasource.WorkingCopy) error) error {
	if err := s.checkNoLiveServer(ctx, graphKey); err != nil {
		return err
	}
	return s.inTransaction(ctx, graphKey, func(w *txCopy) error { return fn(w) })
}

// inTransaction runs fn on a working copy of graphKey inside one stream transaction
// (see ApplyAction) and commits it when fn succeeds and every read it made did;
// otherwise, and whatever happens to ctx, the transaction is aborted. A read that
// failed is the error returned, whatever fn made of it: the lookups report such a
// node or edge as missing, so fn's decision (a conflict, a drift, a record) says
// nothing. A failure of fn that says the action does not fit the graph (a node gone,
// a key taken, a field that is not an object) is a *datasource.ConflictError, as in
// the other sources; failures to reach or use the database are returned classified.
func (s *Source) inTransaction(ctx context.Context, graphKey string, fn func(w *txCopy) error) error {
	colls := arangodb.TransactionCollections{
		Read:      []string{collGraphs},
		Write:     []string{collConfigs}, // node types (configs.go)
		Exclusive: []string{collNodes, collEdges},
	}
	return s.graphTransaction(ctx, graphKey, colls, func(tx arangodb.Transaction) error {
		// The workspace check, inside the transaction: a graph of another workspace
		// is not found, and nothing is changed.
		docs, err := queryAllOn[json.RawMessage](ctx, s, tx, qGraph, map[string]any{"key": graphKey, "ws": s.cfg.Workspace})
		if err != nil {
			return s.txError(err, graphKey, s.lockWait(), "read graph "+graphKey)
		}
		if len(docs) == 0 {
			return &datasource.NotFoundError{Kind: "graph", Key: graphKey}
		}
		g, err := decodeGraph(docs[0])
		if err != nil {
			return err
		}
		w := &txCopy{ctx: ctx, s: s, tx: tx, graphKey: graphKey, graph: g}
		err = fn(w)
		if w.err != nil {
			err = w.err
		}
		if err == nil {
			return nil
		}
		if datasource.IsConflict(err) || !isInfrastructure(err) {
			if !datasource.IsConflict(err) {
				err = &datasource.ConflictError{Err: err}
			}
			return err
		}
		return s.txError(err, graphKey, s.lockWait(), "apply a change to graph "+graphKey)
	})
}

// lockWait is how long a transaction waits for the collections it locks.
func (s *Source) lockWait() time.Duration {
	if s.cfg.LockWait <= 0 {
		return DefaultLockWait
	}
	return s.cfg.LockWait
}

// graphTransaction runs fn in a stream transaction on colls and commits it when fn
// succeeds; otherwise, and whatever happens to ctx, it is aborted.
func (s *Source) graphTransaction(ctx context.Context, graphKey string, colls arangodb.TransactionCollections, fn func(arangodb.Transaction) error) error {
	wait := s.lockWait()
	tx, err := s.db.BeginTransaction(ctx, colls, &arangodb.BeginTransactionOptions{LockTimeout: wait.Seconds()})
	if err != nil {
		return s.txError(err, graphKey, wait, "start a transaction on graph "+graphKey)
	}
	committed := false
	defer func() {
		if committed {
			return
		}
		// Aborted with a context of its own: a cancelled ctx must not leave the
		// collections locked until the server's idle timeout.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = tx.Abort(actx, nil)
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx, nil); err != nil {
		return s.txError(err, graphKey, wait, "commit the change to graph "+graphKey)
	}
	committed = true
	return nil
}

// isInfrastructure reports whether err is a failure to reach or use the database
// (the network, credentials, the server, a lock, a cancelled context), not the
// action failing to fit the graph.
func isInfrastructure(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, datasource.ErrLocked) {
		return true
	}
	if isLockError(err) {
		return true
	}
	if errors.Is(err, datasource.ErrNotFound) {
		var nf *datasource.NotFoundError
		return errors.As(err, &nf) && nf.Kind == "graph"
	}
	if fe, ok := fault.As(err); ok {
		return fe.Code != fault.InvalidRequest
	}
	_, driver := asDriverError(err)
	return driver
}

// Error numbers of ArangoDB that mean another writer is in the way.
const (
	errLockTimeout   = shared.ErrLockTimeout    // 18: timeout waiting for a collection lock
	errWriteConflict = shared.ErrArangoConflict // 1200: write-write conflict
)

func isLockError(err error) bool {
	ae, ok := asDriverError(err)
	return ok && (ae.ErrorNum == errLockTimeout || ae.ErrorNum == errWriteConflict)
}

// txError classifies a failure of the transaction: another writer in the way is a
// *LockedError (wrapping datasource.ErrLocked), anything else as classify says.
func (s *Source) txError(err error, graphKey string, wait time.Duration, what string) error {
	if errors.Is(err, datasource.ErrLocked) {
		return err
	}
	if ae, ok := asDriverError(err); ok && isLockError(err) {
		// The driver's error only, not a classification made on the way: the
		// approval reports ErrLocked as such (timeout, the proposal stays pending).
		return &LockedError{Graph: graphKey, Endpoint: s.cfg.Endpoint, Wait: wait, Err: ae}
	}
	return s.classify(err, what)
}

// LockedError is a change that gave up because another writer held the graph's
// collections (longer than the lock wait) or wrote the same documents: nothing
// was changed, and trying again when the other writer is done may work.
type LockedError struct {
	Graph    string
	Endpoint string
	Wait     time.Duration
	Err      error // the driver's error
}

func (e *LockedError) Error() string {
	if ae, ok := asDriverError(e.Err); ok && ae.ErrorNum == errWriteConflict {
		return fmt.Sprintf("graph %s in ArangoDB at %s was being changed by another writer at the same time (write-write conflict)", e.Graph, e.Endpoint)
	}
	return fmt.Sprintf("graph %s in ArangoDB at %s stayed locked by another writer for %s", e.Graph, e.Endpoint, e.Wait)
}

// Unwrap lets errors.Is find datasource.ErrLocked and the driver's error.
func (e *LockedError) Unwrap() []error { return []error{datasource.ErrLocked, e.Err} }

// txCopy is the graph as one stream transaction sees it: its reads see the
// transaction's own writes, and nothing it writes is seen by others before the
// commit. It is the datasource.WorkingCopy the action and the recorder run on.
type txCopy struct {
	ctx      context.Context
	s        *Source
	tx       arangodb.Transaction
	graphKey string
	graph    datasource.Graph // as the transaction read it first
	err      error            // the first read that failed (the lookups report only found or not)
}

// Graph is the graph's metadata as the transaction read it (datasource.Scope).
func (w *txCopy) Graph() datasource.Graph { return w.graph }

// ConfigKeys lists the workspace's node types, for the message of an unknown type
// (datasource.Scope): read outside the transaction, as it only names them.
func (w *txCopy) ConfigKeys() []string {
	cfgs, err := w.s.configs(w.ctx)
	if err != nil {
		return nil
	}
	keys := make([]string, len(cfgs))
	for i, c := range cfgs {
		keys[i] = c.Key
	}
	return keys
}

func (w *txCopy) fail(err error) {
	if w.err == nil && !errors.Is(err, datasource.ErrNotFound) {
		w.err = err
	}
}

func (w *txCopy) CreateNode(n datasource.Node) (datasource.Node, error) {
	n, err := datasource.NewNode(w, n)
	if err != nil {
		return datasource.Node{}, err
	}
	return w.s.createNode(w.ctx, w.tx, w.graphKey, n)
}

func (w *txCopy) UpdateNode(key string, changes map[string]any) (datasource.Node, error) {
	cur, err := w.s.nodeOn(w.ctx, w.tx, w.graphKey, key)
	if err != nil || len(changes) == 0 {
		return cur, err
	}
	n, err := datasource.PatchNode(w, cur, changes)
	if err != nil {
		return datasource.Node{}, err
	}
	return w.s.writeNode(w.ctx, w.tx, w.graphKey, n, changes)
}

func (w *txCopy) MoveNode(key string, x, y float64) error {
	return w.s.moveNode(w.ctx, w.tx, w.graphKey, key, x, y)
}

func (w *txCopy) DeleteNode(key string) ([]datasource.Edge, error) {
	return w.s.deleteNode(w.ctx, w.tx, w.graphKey, key)
}

func (w *txCopy) CreateEdge(e datasource.Edge) (datasource.Edge, error) {
	e, err := datasource.NewEdge(w, e)
	if err != nil {
		return datasource.Edge{}, err
	}
	return w.s.createEdge(w.ctx, w.tx, w.graphKey, e)
}

func (w *txCopy) DeleteEdge(key string) error {
	return w.s.deleteEdge(w.ctx, w.tx, w.graphKey, key)
}

func (w *txCopy) LookupNode(key string) (datasource.Node, bool) {
	n, err := w.s.nodeOn(w.ctx, w.tx, w.graphKey, key)
	if err != nil {
		w.fail(err)
		return datasource.Node{}, false
	}
	return n, true
}

// The lookups read only what they are asked for (the transaction holds the
// collections exclusive: it must be short, even on a large graph), and remember a
// read that failed in w.err.

func (w *txCopy) LookupEdge(key string) (datasource.Edge, bool) {
	edges, err := w.readEdges(qEdge, map[string]any{"key": compositeKey(w.graphKey, key), "gk": w.graphKey}, "read edge "+key)
	if err != nil || len(edges) == 0 {
		return datasource.Edge{}, false
	}
	return edges[0], true
}

func (w *txCopy) EdgesOf(nodeKey string) []datasource.Edge {
	edges, _ := w.readEdges(qNodeEdges, map[string]any{"id": nodeID(w.graphKey, nodeKey), "gk": w.graphKey}, "read the edges of node "+nodeKey)
	return edges
}

func (w *txCopy) readEdges(q string, bind map[string]any, what string) ([]datasource.Edge, error) {
	var out []datasource.Edge
	err := w.s.queryOn(w.ctx, w.tx, q, bind, func(raw json.RawMessage) error {
		e, err := decodeEdge(w.graphKey, raw)
		if err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		err = w.s.classify(err, what)
		w.fail(err)
		return nil, err
	}
	return out, nil
}
