package arango

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/internal/fault"
)

var _ datasource.GraphCreator = (*Source)(nil)

// collHTMLClasses holds the HTML classes (pages, components) of the Nodius server.
const collHTMLClasses = "nodius_html_class"

// Queries of graph creation and of its undo (see Queries).
const (
	qInsertGraph     = `INSERT @doc INTO nodius_graphs RETURN NEW`
	qInsertHTMLClass = `INSERT @doc INTO nodius_html_class RETURN NEW`
	qHTMLClass       = `FOR h IN nodius_html_class FILTER h._key == @key AND h.workspace == @ws LIMIT 1 RETURN h`
	// The graph's nodes go first, then the graph, then its class: each removal
	// checks the workspace (the graph's was checked in the same transaction).
	qRemoveGraphNodes = `FOR n IN nodius_nodes FILTER n.graphKey == @gk REMOVE n IN nodius_nodes RETURN OLD._key`
	qRemoveGraph      = `FOR d IN nodius_graphs FILTER d._key == @key AND d.workspace == @ws REMOVE d IN nodius_graphs RETURN OLD._key`
	qRemoveHTMLClass  = `FOR d IN nodius_html_class FILTER d._key == @key AND d.workspace == @ws REMOVE d IN nodius_html_class RETURN OLD._key`
)

// CanCreateGraph: an ArangoDB source makes graphs in its workspace; whether a
// Nodius server is running is checked when it writes (the approval then stays
// pending, as for any other write).
func (s *Source) CanCreateGraph(ctx context.Context) error { return ctx.Err() }

// CreateGraph inserts the graph the Nodius server's /api/graph/create makes
// (datasource.NewGraphContent) in one stream transaction: the nodius_graphs
// document, its nodes (keys {graphKey}-root, {graphKey}-return), and for an HTML
// class its nodius_html_class document. It is refused, nothing written, while a
// Nodius server runs on the database (unless arango_ignore_server). The digest is
// a hash of the documents as stored, which undo compares.
func (s *Source) CreateGraph(ctx context.Context, p datasource.CreateGraphPayload, key string) (datasource.CreatedGraph, error) {
	addr, ago, err := s.liveServer(ctx)
	if err != nil {
		return datasource.CreatedGraph{}, err
	}
	if addr != "" {
		return datasource.CreatedGraph{}, &fault.Error{Code: fault.Config, Message: fmt.Sprintf(
			"a Nodius server runs on this database (%s, seen %s ago), and nodius-ai does not write behind its back; nothing was created — "+
				"create %q through the server (--source server:URL of that server, or its web client), or set arango_ignore_server = true "+
				"(or NODIUS_AI_ARANGO_IGNORE_SERVER=1)", addr, ago, p.Name)}
	}
	if key == "" {
		k, err := newKey("ai_")
		if err != nil {
			return datasource.CreatedGraph{}, err
		}
		key = k
	}
	htmlKey := ""
	colls := []string{collGraphs, collNodes}
	if p.Type == "htmlClass" {
		htmlKey = "html_" + key
		colls = append(colls, collHTMLClasses)
	}
	ng := datasource.NewGraphContent(p, key, htmlKey, s.cfg.Workspace, time.Now())
	graphDoc, err := graphDocument(ng.Graph)
	if err != nil {
		return datasource.CreatedGraph{}, err
	}
	var stored []json.RawMessage
	err = s.graphTransaction(ctx, key, arangodb.TransactionCollections{Write: colls}, func(tx arangodb.Transaction) error {
		insert := func(q string, doc any, what string) error {
			docs, err := queryAllOn[json.RawMessage](ctx, s, tx, q, map[string]any{"doc": doc})
			if err != nil {
				return s.classify(err, what)
			}
			stored = append(stored, docs...)
			return nil
		}
		if err := insert(qInsertGraph, graphDoc, "create graph "+key); err != nil {
			return err
		}
		for _, n := range ng.Nodes {
			if err := insert(qInsertNode, createdNodeDocument(key, n), "create node "+n.Key+" of graph "+key); err != nil {
				return err
			}
		}
		if ng.HTMLClass != nil {
			return insert(qInsertHTMLClass, ng.HTMLClass, "create HTML class "+htmlKey)
		}
		return nil
	})
	if err != nil {
		return datasource.CreatedGraph{}, err
	}
	return datasource.CreatedGraph{Key: key, Name: p.Name, Type: p.Type, HTMLClass: htmlKey, Nodes: ng.NodeKeys(),
		Digest: digestDocs(stored), Open: "--graph " + key}, nil
}

// DeleteCreatedGraph removes a graph CreateGraph made (its nodes, the graph, its
// HTML class) in one stream transaction holding the collections exclusive, only
// while the documents are still as stored then and the graph has no edges.
func (s *Source) DeleteCreatedGraph(ctx context.Context, g datasource.CreatedGraph, dryRun bool) error {
	if !dryRun {
		if err := s.checkNoLiveServer(ctx, g.Key); err != nil {
			return err
		}
	}
	colls := []string{collGraphs, collNodes, collEdges}
	if g.HTMLClass != "" {
		colls = append(colls, collHTMLClasses)
	}
	check := func(db arangodb.DatabaseQuery) error {
		bind := map[string]any{"key": g.Key, "ws": s.cfg.Workspace}
		graphs, err := queryAllOn[json.RawMessage](ctx, s, db, qGraph, bind)
		if err != nil {
			return s.classify(err, "read graph "+g.Key)
		}
		if len(graphs) == 0 {
			return &datasource.NotFoundError{Kind: "graph", Key: g.Key}
		}
		if g.Digest == "" {
			return &datasource.GraphChangedError{Why: fmt.Sprintf("what graph %s held when it was made was not recorded, so it is left as it is", g.Key)}
		}
		nodes, err := queryAllOn[json.RawMessage](ctx, s, db, qNodes, map[string]any{"gk": g.Key})
		if err != nil {
			return s.classify(err, "read the nodes of graph "+g.Key)
		}
		edges, err := queryAllOn[json.RawMessage](ctx, s, db, qEdges, map[string]any{"gk": g.Key})
		if err != nil {
			return s.classify(err, "read the edges of graph "+g.Key)
		}
		// Only a graph holding nothing but what a creation makes is removed (the
		// record may come from an imported thread).
		for _, raw := range nodes {
			var n struct {
				Key string `json:"_key"`
			}
			_ = json.Unmarshal(raw, &n)
			if k := localKey(g.Key, n.Key); k != "root" && k != "return" {
				return &datasource.GraphChangedError{Why: fmt.Sprintf("graph %s got node %s since it was made, so it is left as it is", g.Key, k)}
			}
		}
		if len(edges) > 0 {
			return &datasource.GraphChangedError{Why: fmt.Sprintf("graph %s got %d edge(s) since it was made, so it is left as it is", g.Key, len(edges))}
		}
		docs := append(graphs, nodes...)
		if g.HTMLClass != "" {
			class, err := queryAllOn[json.RawMessage](ctx, s, db, qHTMLClass, map[string]any{"key": g.HTMLClass, "ws": s.cfg.Workspace})
			if err != nil {
				return s.classify(err, "read HTML class "+g.HTMLClass)
			}
			docs = append(docs, class...)
		}
		if digestDocs(docs) != g.Digest {
			return &datasource.GraphChangedError{Why: fmt.Sprintf("graph %s was changed since it was made (%d node(s) now), so it is left as it is", g.Key, len(nodes))}
		}
		return nil
	}
	if dryRun {
		return check(s.db)
	}
	return s.graphTransaction(ctx, g.Key, arangodb.TransactionCollections{Exclusive: colls}, func(tx arangodb.Transaction) error {
		if err := check(tx); err != nil {
			return err
		}
		for _, r := range []struct {
			q, what string
			bind    map[string]any
		}{
			{qRemoveGraphNodes, "remove the nodes of graph " + g.Key, map[string]any{"gk": g.Key}},
			{qRemoveGraph, "remove graph " + g.Key, map[string]any{"key": g.Key, "ws": s.cfg.Workspace}},
			{qRemoveHTMLClass, "remove HTML class " + g.HTMLClass, map[string]any{"key": g.HTMLClass, "ws": s.cfg.Workspace}},
		} {
			if r.q == qRemoveHTMLClass && g.HTMLClass == "" {
				continue
			}
			if _, err := queryAllOn[json.RawMessage](ctx, s, tx, r.q, r.bind); err != nil {
				return s.classify(err, r.what)
			}
		}
		return nil
	})
}

// graphDocument is the nodius_graphs document of g, with the members the server
// writes (g.Extra: category, version, permission, times, htmlKeyLinked).
func graphDocument(g datasource.Graph) (map[string]any, error) {
	doc := map[string]any{"_key": g.Key, "name": g.Name, "workspace": g.Workspace, "sheetsList": g.Sheets}
	if g.Description != "" {
		doc["description"] = g.Description
	}
	for k, raw := range g.Extra {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("encode graph %s: %s: %w", g.Key, k, err)
		}
		doc[k] = v
	}
	return doc, nil
}

// createdNodeDocument is the nodius_nodes document of a node the server's
// createNodeFromConfig makes: composite key, graphKey, type, typeVersion, sheet,
// size, position, handles, and data when it has some; no code.
func createdNodeDocument(graphKey string, n datasource.Node) map[string]any {
	doc := map[string]any{"_key": compositeKey(graphKey, n.Key), "graphKey": graphKey, "type": n.Type, "typeVersion": 1,
		"sheet": n.Sheet, "size": n.Size, "posX": n.PosX, "posY": n.PosY, "handles": n.Handles}
	if n.Data != nil {
		doc["data"] = n.Data
	}
	return doc
}

// digestDocs hashes documents as stored, without ArangoDB's own members (_id,
// _rev), in key order: the same documents give the same digest whoever read them.
func digestDocs(docs []json.RawMessage) string {
	var canon []string
	for _, raw := range docs {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			canon = append(canon, string(raw))
			continue
		}
		for k := range m {
			if k != "_key" && strings.HasPrefix(k, "_") {
				delete(m, k)
			}
		}
		b, _ := json.Marshal(m) // map keys come out sorted
		canon = append(canon, string(b))
	}
	sort.Strings(canon)
	h := sha256.New()
	for _, c := range canon {
		h.Write([]byte(c))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}
