package arango

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/internal/fault"
)

var _ embedding.Source = (*Source)(nil)

// newKey makes a local key for a node or edge created without one.
func newKey(prefix string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate key: %w", err)
	}
	return prefix + hex.EncodeToString(b[:]), nil
}

// CreateNode inserts n into the graph (datasource.NewNode's rules, in one
// transaction as every change); an empty key gets a generated one. A key that
// already exists is refused (409).
func (s *Source) CreateNode(ctx context.Context, graphKey string, n datasource.Node) (datasource.Node, error) {
	var out datasource.Node
	err := s.Change(ctx, graphKey, func(w datasource.WorkingCopy) (err error) {
		out, err = w.CreateNode(n)
		return err
	})
	return out, err
}

// createNode inserts n, checked by the caller (txCopy.CreateNode), on db.
func (s *Source) createNode(ctx context.Context, db arangodb.DatabaseQuery, graphKey string, n datasource.Node) (datasource.Node, error) {
	if n.Key == "" {
		k, err := newKey("node_")
		if err != nil {
			return datasource.Node{}, err
		}
		n.Key = k
	}
	doc, err := nodeDocument(graphKey, n)
	if err != nil {
		return datasource.Node{}, err
	}
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qInsertNode, map[string]any{"doc": doc})
	if err != nil {
		if isConflict(err) {
			return datasource.Node{}, &fault.Error{Code: fault.InvalidRequest, Status: 409, Err: err,
				Message: fmt.Sprintf("node %q already exists in graph %q", n.Key, graphKey)}
		}
		return datasource.Node{}, s.classify(err, "create node "+n.Key)
	}
	if len(docs) == 0 {
		return n, nil
	}
	return decodeNode(graphKey, docs[0])
}

// UpdateNode changes fields of a node by path (datasource.PatchNode's rules, in one
// transaction as every change).
func (s *Source) UpdateNode(ctx context.Context, graphKey, nodeKey string, changes map[string]any) (datasource.Node, error) {
	var out datasource.Node
	err := s.Change(ctx, graphKey, func(w datasource.WorkingCopy) (err error) {
		out, err = w.UpdateNode(nodeKey, changes)
		return err
	})
	return out, err
}

// writeNode writes n's top-level fields that the changes touched (a change path's
// first segment: "data.url" rewrites data), on db; a field n no longer has is
// written as null.
func (s *Source) writeNode(ctx context.Context, db arangodb.DatabaseQuery, graphKey string, n datasource.Node, changes map[string]any) (datasource.Node, error) {
	fields, err := toFields(n)
	if err != nil {
		return datasource.Node{}, fmt.Errorf("encode node %s: %w", n.Key, err)
	}
	patch := map[string]json.RawMessage{}
	for path := range changes {
		top, _, _ := strings.Cut(path, ".")
		if v, ok := fields[top]; ok {
			patch[top] = v
		} else {
			patch[top] = json.RawMessage("null")
		}
	}
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qUpdateNode, map[string]any{"key": compositeKey(graphKey, n.Key), "patch": patch})
	if err != nil {
		if isDocNotFound(err) {
			return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: n.Key}
		}
		return datasource.Node{}, s.classify(err, "update node "+n.Key)
	}
	if len(docs) == 0 {
		return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: n.Key}
	}
	return decodeNode(graphKey, docs[0])
}

// MoveNode changes a node's canvas position.
func (s *Source) MoveNode(ctx context.Context, graphKey, nodeKey string, posX, posY float64) error {
	if _, err := s.Graph(ctx, graphKey); err != nil {
		return err
	}
	return s.moveNode(ctx, s.db, graphKey, nodeKey, posX, posY)
}

// moveNode is MoveNode on db (see queryOn), the workspace checked.
func (s *Source) moveNode(ctx context.Context, db arangodb.DatabaseQuery, graphKey, nodeKey string, posX, posY float64) error {
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qUpdateNode, map[string]any{
		"key": compositeKey(graphKey, nodeKey), "patch": map[string]any{"posX": posX, "posY": posY}})
	if err != nil {
		if isDocNotFound(err) {
			return &datasource.NotFoundError{Kind: "node", Key: nodeKey}
		}
		return s.classify(err, "move node "+nodeKey)
	}
	if len(docs) == 0 {
		return &datasource.NotFoundError{Kind: "node", Key: nodeKey}
	}
	return nil
}

// DeleteNode removes the node and its edges in one query, and returns the edges.
func (s *Source) DeleteNode(ctx context.Context, graphKey, nodeKey string) ([]datasource.Edge, error) {
	if err := s.checkRead(ctx, graphKey); err != nil {
		return nil, err
	}
	return s.deleteNode(ctx, s.db, graphKey, nodeKey)
}

// deleteNode is DeleteNode on db (see queryOn), the workspace checked.
func (s *Source) deleteNode(ctx context.Context, db arangodb.DatabaseQuery, graphKey, nodeKey string) ([]datasource.Edge, error) {
	if _, err := s.nodeOn(ctx, db, graphKey, nodeKey); err != nil {
		return nil, err
	}
	rows, err := queryAllOn[struct {
		Removed []json.RawMessage `json:"removed"`
	}](ctx, s, db, qDeleteNode, map[string]any{"id": nodeID(graphKey, nodeKey), "key": compositeKey(graphKey, nodeKey)})
	if err != nil {
		if isDocNotFound(err) {
			return nil, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
		}
		return nil, s.classify(err, "delete node "+nodeKey)
	}
	edges := []datasource.Edge{}
	for _, r := range rows {
		for _, raw := range r.Removed {
			e, err := decodeEdge(graphKey, raw)
			if err != nil {
				return nil, err
			}
			edges = append(edges, e)
		}
	}
	return edges, nil
}

// CreateEdge inserts an edge between two nodes of one sheet (datasource.NewEdge's
// rules, in one transaction as every change).
func (s *Source) CreateEdge(ctx context.Context, graphKey string, e datasource.Edge) (datasource.Edge, error) {
	var out datasource.Edge
	err := s.Change(ctx, graphKey, func(w datasource.WorkingCopy) (err error) {
		out, err = w.CreateEdge(e)
		return err
	})
	return out, err
}

// createEdge inserts e, checked by the caller (txCopy.CreateEdge), on db.
func (s *Source) createEdge(ctx context.Context, db arangodb.DatabaseQuery, graphKey string, e datasource.Edge) (datasource.Edge, error) {
	if e.Key == "" {
		k, err := newKey("edge_")
		if err != nil {
			return datasource.Edge{}, err
		}
		e.Key = k
	}
	doc, err := edgeDocument(graphKey, e)
	if err != nil {
		return datasource.Edge{}, err
	}
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qInsertEdge, map[string]any{"doc": doc})
	if err != nil {
		if isConflict(err) {
			return datasource.Edge{}, &fault.Error{Code: fault.InvalidRequest, Status: 409, Err: err,
				Message: fmt.Sprintf("edge %q already exists in graph %q", e.Key, graphKey)}
		}
		return datasource.Edge{}, s.classify(err, "create edge "+e.Key)
	}
	if len(docs) == 0 {
		return e, nil
	}
	return decodeEdge(graphKey, docs[0])
}

// DeleteEdge removes one edge by its local key.
func (s *Source) DeleteEdge(ctx context.Context, graphKey, edgeKey string) error {
	if _, err := s.Graph(ctx, graphKey); err != nil {
		return err
	}
	return s.deleteEdge(ctx, s.db, graphKey, edgeKey)
}

// deleteEdge is DeleteEdge on db (see queryOn), the workspace checked.
func (s *Source) deleteEdge(ctx context.Context, db arangodb.DatabaseQuery, graphKey, edgeKey string) error {
	_, err := queryAllOn[json.RawMessage](ctx, s, db, qDeleteEdge, map[string]any{"key": compositeKey(graphKey, edgeKey)})
	if err != nil {
		if isDocNotFound(err) {
			return &datasource.NotFoundError{Kind: "edge", Key: edgeKey}
		}
		return s.classify(err, "delete edge "+edgeKey)
	}
	return nil
}

// SetEmbeddings stores vectors and content hashes on node documents, one query for
// the whole batch. Nodes that vanished meanwhile are skipped by the server
// (ignoreErrors) and reported.
func (s *Source) SetEmbeddings(ctx context.Context, graphKey string, updates map[string]embedding.Update) error {
	if len(updates) == 0 {
		return nil
	}
	if _, err := s.Graph(ctx, graphKey); err != nil {
		return err
	}
	list := make([]map[string]any, 0, len(updates))
	for k, u := range updates {
		list = append(list, map[string]any{"key": compositeKey(graphKey, k), "vector": u.Vector, "hash": u.Hash})
	}
	rows, err := queryAll[struct {
		Key string `json:"key"`
	}](ctx, s, qSetEmbeddings, map[string]any{"updates": list})
	if err != nil {
		return s.classify(err, "store embeddings of graph "+graphKey)
	}
	if len(rows) < len(updates) {
		done := map[string]bool{}
		for _, r := range rows {
			done[localKey(graphKey, r.Key)] = true
		}
		var missing []string
		for k := range updates {
			if !done[k] {
				missing = append(missing, k)
			}
		}
		return fmt.Errorf("store embeddings: %d node(s) no longer exist: %s: %w", len(missing), strings.Join(missing, ", "), datasource.ErrNotFound)
	}
	return nil
}
