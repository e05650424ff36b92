package arango

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource"
)

// Node types in nodius_node_config, as the Nodius server keeps them: one
// document per type, keyed by the type's key, with the workspace and the type's
// code in node.process. A type belongs to the workspace, not to one graph: every
// node of it, in every graph of the workspace, runs its code. A type change is
// made in the same stream transaction as the action's other changes (the live
// editing check of ApplyAction and Change applies to it too).

var _ datasource.ConfigChanges = (*txCopy)(nil)

const (
	// One type by key, whatever its workspace: a key is unique in the collection.
	qConfigByKey = `FOR c IN nodius_node_config FILTER c._key == @key LIMIT 1 RETURN c`
	// The whole document is replaced: the caller has merged the change into it.
	// Both writes name the workspace too, so that neither can touch a type of
	// another workspace (or a shared one) whatever the caller checked: the upsert
	// then tries an insert, which the key's uniqueness refuses.
	qPutConfig = `UPSERT {_key: @key, workspace: @ws} INSERT @doc REPLACE @doc IN nodius_node_config RETURN NEW`
	qDelConfig = `FOR d IN nodius_node_config FILTER d._key == @key AND d.workspace == @ws REMOVE d IN nodius_node_config RETURN OLD._key`
	// Whether any node (of any graph) still has the type.
	qTypeInUse = `FOR n IN nodius_nodes FILTER n.type == @type LIMIT 1 RETURN n._key`
)

// configQueries are this file's queries, listed in Queries.
func configQueries() []string { return []string{qConfigByKey, qPutConfig, qDelConfig, qTypeInUse} }

// rootWorkspace holds Nodius's shared node types: every workspace reads them (the
// server's getNodeConfigs and /api/nodeconfig/get read [workspace, "root"]), none
// writes them from here.
const rootWorkspace = "root"

// configOn reads the type key on db, whatever its workspace (a key is unique in
// the collection); found is false when no type has that key.
func (s *Source) configOn(ctx context.Context, db arangodb.DatabaseQuery, key string) (c datasource.NodeConfig, found bool, err error) {
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qConfigByKey, map[string]any{"key": key})
	if err != nil {
		return c, false, s.classify(err, "read node type "+key)
	}
	if len(docs) == 0 {
		return c, false, nil
	}
	if c, err = decodeConfig(docs[0]); err != nil {
		return c, false, err
	}
	return c, true, nil
}

// readable reports whether the workspace sees type c: its own, or a shared one.
func (s *Source) readable(c datasource.NodeConfig) bool {
	return c.Workspace == s.cfg.Workspace || c.Workspace == rootWorkspace
}

// notOurs is the refusal to write type c of another workspace (or a shared one).
func (s *Source) notOurs(c datasource.NodeConfig) error {
	if c.Workspace == rootWorkspace {
		return fmt.Errorf("node type %q is one of Nodius's shared types (workspace \"root\"), which nodius-ai does not change; choose another key", c.Key)
	}
	return fmt.Errorf("node type key %q is taken by another workspace; choose another key", c.Key)
}

func (s *Source) putConfig(ctx context.Context, db arangodb.DatabaseQuery, c datasource.NodeConfig) (datasource.NodeConfig, error) {
	if c.Key == "" {
		return c, fmt.Errorf("a node type needs a key")
	}
	if datasource.IsBuiltinType(c.Key) {
		return c, fmt.Errorf("%q is a built-in node type: it has no config to write", c.Key)
	}
	if cur, found, err := s.configOn(ctx, db, c.Key); err != nil {
		return c, err
	} else if found && cur.Workspace != s.cfg.Workspace {
		return c, s.notOurs(cur)
	}
	c.Workspace = s.cfg.Workspace
	doc, err := toFields(c)
	if err != nil {
		return c, fmt.Errorf("encode node type %s: %w", c.Key, err)
	}
	doc["_key"] = rawString(c.Key)
	docs, err := queryAllOn[json.RawMessage](ctx, s, db, qPutConfig, map[string]any{"key": c.Key, "ws": s.cfg.Workspace, "doc": doc})
	if err != nil {
		return c, s.classify(err, "write node type "+c.Key)
	}
	if len(docs) == 0 {
		return c, nil
	}
	return decodeConfig(docs[0])
}

func (s *Source) deleteConfig(ctx context.Context, db arangodb.DatabaseQuery, key string) error {
	if cur, found, err := s.configOn(ctx, db, key); err != nil {
		return err
	} else if !found || !s.readable(cur) {
		return &datasource.NotFoundError{Kind: "node type", Key: key}
	} else if cur.Workspace != s.cfg.Workspace {
		return s.notOurs(cur)
	}
	used, err := queryAllOn[string](ctx, s, db, qTypeInUse, map[string]any{"type": key})
	if err != nil {
		return s.classify(err, "check the nodes of type "+key)
	}
	if len(used) > 0 {
		return fmt.Errorf("node type %s still has nodes (%s, maybe in another graph of the workspace): delete them first", key, used[0])
	}
	removed, err := queryAllOn[string](ctx, s, db, qDelConfig, map[string]any{"key": key, "ws": s.cfg.Workspace})
	if err != nil {
		return s.classify(err, "remove node type "+key)
	}
	if len(removed) == 0 {
		return &datasource.NotFoundError{Kind: "node type", Key: key}
	}
	return nil
}

// LookupConfig reads, in the transaction, a type the workspace sees: its own or
// a shared one (as Configs lists them).
func (w *txCopy) LookupConfig(key string) (datasource.NodeConfig, bool) {
	c, found, err := w.s.configOn(w.ctx, w.tx, key)
	if err != nil {
		w.fail(err)
		return datasource.NodeConfig{}, false
	}
	if !found || !w.s.readable(c) {
		return datasource.NodeConfig{}, false
	}
	return c, true
}

// PutConfig writes the type in the transaction. Its nodes read their code from
// it (the real schema keeps no code on nodes).
func (w *txCopy) PutConfig(c datasource.NodeConfig) (datasource.NodeConfig, error) {
	return w.s.putConfig(w.ctx, w.tx, c)
}

// DeleteConfig removes the type in the transaction, when no node has it.
func (w *txCopy) DeleteConfig(key string) error { return w.s.deleteConfig(w.ctx, w.tx, key) }
