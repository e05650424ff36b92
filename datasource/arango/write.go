package arango

import (
	"bytes"
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

// CreateNode inserts n into the graph; an empty key gets a generated one. A key that
// already exists is refused (409).
func (s *Source) CreateNode(ctx context.Context, graphKey string, n datasource.Node) (datasource.Node, error) {
	if _, err := s.Graph(ctx, graphKey); err != nil {
		return datasource.Node{}, err
	}
	return s.createNode(ctx, s.db, graphKey, n)
}

// createNode is CreateNode on db (see queryOn), the workspace checked.
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

// UpdateNode applies field changes. Keys are field paths: "process" replaces the
// process, "data.url" sets one entry inside data and keeps the rest.
func (s *Source) UpdateNode(ctx context.Context, graphKey, nodeKey string, changes map[string]any) (datasource.Node, error) {
	if len(changes) == 0 {
		return s.Node(ctx, graphKey, nodeKey)
	}
	if err := s.checkRead(ctx, graphKey); err != nil {
		return datasource.Node{}, err
	}
	return s.updateNode(ctx, s.db, graphKey, nodeKey, changes)
}

// updateNode is UpdateNode on db (see queryOn), the workspace checked: the node is
// read there, the changes merged into it, and the changed top-level fields written.
func (s *Source) updateNode(ctx context.Context, db arangodb.DatabaseQuery, graphKey, nodeKey string, changes map[string]any) (datasource.Node, error) {
	cur, err := s.nodeOn(ctx, db, graphKey, nodeKey)
	if err != nil {
		return datasource.Node{}, err
	}
	fields, err := toFields(cur)
	if err != nil {
		return datasource.Node{}, err
	}
	doc := map[string]any{}
	for k, v := range fields {
		var x any
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber() // keep big integers in data exact
		if err := dec.Decode(&x); err != nil {
			return datasource.Node{}, fmt.Errorf("decode node %s field %s: %w", nodeKey, k, err)
		}
		doc[k] = x
	}
	patch := map[string]any{}
	for path, v := range changes {
		parts := strings.Split(path, ".")
		top := parts[0]
		if top == "" || top == "_key" || top == "key" || strings.HasPrefix(top, "_") || top == "graphKey" {
			return datasource.Node{}, fmt.Errorf("update node %s: field %q cannot be changed", nodeKey, path)
		}
		if err := setPath(doc, parts, v); err != nil {
			return datasource.Node{}, fmt.Errorf("update node %s: %w", nodeKey, err)
		}
		patch[top] = doc[top]
	}
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qUpdateNode, map[string]any{"key": compositeKey(graphKey, nodeKey), "patch": patch})
	if err != nil {
		if isDocNotFound(err) {
			return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
		}
		return datasource.Node{}, s.classify(err, "update node "+nodeKey)
	}
	if len(docs) == 0 {
		return datasource.Node{}, &datasource.NotFoundError{Kind: "node", Key: nodeKey}
	}
	return decodeNode(graphKey, docs[0])
}

// setPath sets doc[parts[0]][parts[1]]... = v, creating objects on the way.
func setPath(doc map[string]any, parts []string, v any) error {
	if len(parts) == 1 {
		doc[parts[0]] = v
		return nil
	}
	child, ok := doc[parts[0]].(map[string]any)
	if !ok {
		if doc[parts[0]] != nil {
			return fmt.Errorf("field %q is not an object, cannot set %q inside it", parts[0], strings.Join(parts[1:], "."))
		}
		child = map[string]any{}
		doc[parts[0]] = child
	}
	return setPath(child, parts[1:], v)
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

// CreateEdge inserts an edge between two existing nodes of the graph.
func (s *Source) CreateEdge(ctx context.Context, graphKey string, e datasource.Edge) (datasource.Edge, error) {
	if _, err := s.Graph(ctx, graphKey); err != nil {
		return datasource.Edge{}, err
	}
	return s.createEdge(ctx, s.db, graphKey, e)
}

// createEdge is CreateEdge on db (see queryOn), the workspace checked.
func (s *Source) createEdge(ctx context.Context, db arangodb.DatabaseQuery, graphKey string, e datasource.Edge) (datasource.Edge, error) {
	for _, end := range []string{e.Source, e.Target} {
		if _, err := s.nodeOn(ctx, db, graphKey, end); err != nil {
			return datasource.Edge{}, err
		}
	}
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
