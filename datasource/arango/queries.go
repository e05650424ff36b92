package arango

import (
	"math"
	"strconv"
	"strings"
)

// Collection names are constants (the Nodius server's collections); they are the only
// names that ever appear inside a query string. Everything that comes from a user, a
// model or a graph (keys, workspace, sheet, vectors) travels as a bind variable.
const (
	collGraphs  = "nodius_graphs"
	collNodes   = "nodius_nodes"
	collEdges   = "nodius_edges"
	collConfigs = "nodius_node_config"
	collThreads = "nodius_ai_threads"
)

// The queries, fixed strings. Tests check that every query sent is one of these.
const (
	// Workspace filter first: a graph of another workspace is "not found".
	qGraph = `FOR g IN nodius_graphs FILTER g._key == @key AND g.workspace == @ws LIMIT 1 RETURN g`

	qNodes      = `FOR n IN nodius_nodes FILTER n.graphKey == @gk RETURN n`
	qNodesSheet = `FOR n IN nodius_nodes FILTER n.graphKey == @gk AND n.sheet == @sheet RETURN n`
	qEdges      = `FOR e IN nodius_edges FILTER e.graphKey == @gk RETURN e`
	qEdgesSheet = `FOR e IN nodius_edges FILTER e.graphKey == @gk AND e.sheet == @sheet RETURN e`
	qNode       = `FOR n IN nodius_nodes FILTER n._key == @key AND n.graphKey == @gk LIMIT 1 RETURN n`
	qConfigs    = `FOR c IN nodius_node_config FILTER c.workspace IN [@ws, "root"] RETURN c`
	// The workspace's graph keys, for completion and for the message of a wrong --graph.
	qGraphKeys = `FOR g IN nodius_graphs FILTER g.workspace == @ws SORT g._key LIMIT 200 RETURN g._key`

	// One edge, and the edges of one node (the edge index): what an apply reads in
	// its transaction, which holds the collections exclusive and so must be short.
	qEdge      = `FOR e IN nodius_edges FILTER e._key == @key AND e.graphKey == @gk LIMIT 1 RETURN e`
	qNodeEdges = `FOR e IN nodius_edges FILTER e.graphKey == @gk AND (e._from == @id OR e._to == @id) RETURN e`

	// Neighborhood, one query per direction (a direction cannot be a bind variable).
	// The traversal finds each vertex once, with its distance from the start (BFS,
	// global uniqueness gives the shortest); vertices of another graph are neither
	// kept nor walked through. The edges are then the ones a breadth-first walk
	// follows, as datasource/memgraph does: every edge in the direction from a vertex
	// closer than @depth to a vertex reached, parallel edges and edges back to a
	// vertex already seen included. Rows are {node} in BFS order (start first), then
	// {edge}.
	qTraverseAny = `LET visited = (FOR v, e, p IN 0..@depth ANY @start nodius_edges ` + traverseTail +
		`LET walked = (FOR e IN nodius_edges FILTER (e._from IN inner AND e._to IN ids) OR (e._to IN inner AND e._from IN ids) RETURN {edge: e}) ` +
		traverseRows
	qTraverseIn = `LET visited = (FOR v, e, p IN 0..@depth INBOUND @start nodius_edges ` + traverseTail +
		`LET walked = (FOR e IN nodius_edges FILTER e._to IN inner AND e._from IN ids RETURN {edge: e}) ` +
		traverseRows
	qTraverseOut = `LET visited = (FOR v, e, p IN 0..@depth OUTBOUND @start nodius_edges ` + traverseTail +
		`LET walked = (FOR e IN nodius_edges FILTER e._from IN inner AND e._to IN ids RETURN {edge: e}) ` +
		traverseRows

	qInsertNode = `INSERT @doc INTO nodius_nodes RETURN NEW`
	// mergeObjects false: a changed top-level field (data) is replaced as a whole; the
	// caller has already merged nested paths ("data.url") into it.
	qUpdateNode = `UPDATE {_key: @key} WITH @patch IN nodius_nodes OPTIONS {mergeObjects: false} RETURN NEW`
	// One query removes the node and its edges, so no edge is left dangling when the
	// second step would fail.
	qDeleteNode = `LET removed = (FOR e IN nodius_edges FILTER e._from == @id OR e._to == @id ` +
		`REMOVE e IN nodius_edges RETURN OLD) ` +
		`REMOVE {_key: @key} IN nodius_nodes RETURN {removed: removed}`
	qInsertEdge = `INSERT @doc INTO nodius_edges RETURN NEW`
	qDeleteEdge = `REMOVE {_key: @key} IN nodius_edges RETURN OLD`

	// Exact similarity over the graph's nodes (ArangoDB 3.9+, no index needed).
	// LENGTH guards against vectors of another model, which would fail the query.
	qVectorExact = `FOR n IN nodius_nodes FILTER n.graphKey == @gk AND n.embedding != null AND LENGTH(n.embedding) == @dim ` +
		`LET score = COSINE_SIMILARITY(n.embedding, @qe) FILTER score > @min ` +
		`SORT score DESC LIMIT @limit RETURN {node: n, score: score}`
	// Approximate similarity through a vector index (ArangoDB 3.12.4+). The index
	// wants SORT+LIMIT right after the score, so candidates of every graph are taken
	// first and then filtered to this graph.
	qVectorApprox = `FOR n IN nodius_nodes LET score = APPROX_NEAR_COSINE(n.embedding, @qe) ` +
		`SORT score DESC LIMIT @candidates ` +
		`FILTER n.graphKey == @gk AND score > @min LIMIT @limit RETURN {node: n, score: score}`

	// Embeddings of one graph's nodes, stored with the hash of the text they came from.
	qSetEmbeddings = `FOR u IN @updates UPDATE {_key: u.key} WITH {embedding: u.vector, embeddingHash: u.hash} ` +
		`IN nodius_nodes OPTIONS {ignoreErrors: true, mergeObjects: false} RETURN {key: NEW._key}`

	// The paths of a graph's node data that hold text, most common first: the
	// View indexes every field of data, but a search must name the fields it
	// looks in (ArangoSearch has no "any field under data"). Paths go two levels
	// down (data.url, data.headers.accept, data.fields[*].label: arrays are
	// indexed as their elements); a field whose value is a string or holds one
	// counts. The scan runs on the server and sends back at most @max paths.
	qDataPaths = `FOR n IN nodius_nodes FILTER n.graphKey == @gk AND IS_OBJECT(n.data) ` +
		`FOR k IN ATTRIBUTES(n.data) LET v = n.data[k] ` +
		`LET objs = IS_OBJECT(v) ? [v] : (IS_ARRAY(v) ? v[* FILTER IS_OBJECT(CURRENT)] : []) ` +
		`LET top = (IS_STRING(v) OR (IS_ARRAY(v) AND LENGTH(v[* FILTER IS_STRING(CURRENT)]) > 0)) ? [[k]] : [] ` +
		`LET inner = (FOR o IN objs FOR k2 IN ATTRIBUTES(o) LET w = o[k2] ` +
		`FILTER IS_STRING(w) OR (IS_ARRAY(w) AND LENGTH(w[* FILTER IS_STRING(CURRENT)]) > 0) RETURN [k, k2]) ` +
		`FOR p IN APPEND(top, inner, true) COLLECT path = p WITH COUNT INTO c SORT c DESC, path LIMIT @max RETURN path`
)

// qTextSearch is the text search over the View of search.go, BM25-ranked, in one
// round trip. It is a fixed string, built once from constants (see textSearchQuery).
var qTextSearch = textSearchQuery()

// maxDataPaths is how many data fields one text search looks in: the query names
// each one through a bind variable (@d0 … @d15), bound to a path of the graph's
// data or, when the graph has fewer, to a field nothing indexes.
const maxDataPaths = 16

// The weights of the fields. The in-process index (datasource/search) weighs each
// field inside BM25F's saturation (w·tf / (k1 + w·tf)): the key 5, the type and its
// name 2, code 1, data values 0.7, edge labels and the sheet's name 0.5. ArangoDB
// scores each field with its own BM25 and a BOOST multiplies that score, so the
// boosts here are those weights once saturated, for one occurrence at the average
// length, relative to code: what one matching word of each field adds in process.
// A word of the lexicon (@alt) scores 0.6 of the question's own word, as in process.
var (
	wKey, wType, wProcess = boost(5), boost(2), boost(1)
	wData, wEdge, wSheet  = boost(0.7), boost(0.5), boost(0.5)
)

const (
	wAlt = 0.6
	k1   = 1.2 // BM25's, in process and ArangoDB's default
)

// boost is the in-process field weight w as a BOOST (see above), to two decimals.
func boost(w float64) float64 { return round2(w / (k1 + w) * (k1 + 1)) }

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// textSearchQuery builds qTextSearch. Nodes match by their key, type, code and
// data values (every word of the question with both analyzers; the lexicon's words
// in English, weighted below), by a type the question names (@types) or a sheet it
// names (@sheets, matched in process against the graph's sheet names). Edges of
// the graph match by their label, and credit both their ends, as the in-process
// index counts a node's edge labels as its own. Node types of the workspace (@ws) or of "root" (Nodius's shared types)
// match by their code and credit the graph's nodes of that type, as the
// in-process index reads a node's code from its type. The three rankings are
// summed per node; the ends of an edge are read by id and kept only when they
// belong to the graph. Only collection, View and analyzer names are in the text.
func textSearchQuery() string {
	f := func(x float64) string { return strconv.FormatFloat(round2(x), 'f', -1, 64) }
	in := func(field, words, analyzer string, w float64) string {
		c := field + ` IN TOKENS(` + words + `, "` + analyzer + `")`
		if w == 1 {
			return c
		}
		return `BOOST(` + c + `, ` + f(w) + `)`
	}
	var en, fr []string
	for _, fw := range []struct {
		field string
		w     float64
	}{{"n._key", wKey}, {"n.type", wType}, {"n.process", wProcess}} {
		en = append(en, in(fw.field, "@q", "nodius_text_en", fw.w))
		fr = append(fr, in(fw.field, "@q", "nodius_text_fr", fw.w))
	}
	for _, fw := range []struct {
		field string
		w     float64
	}{{"n._key", wKey}, {"n.type", wType}, {"n.process", wProcess}} {
		en = append(en, in(fw.field, "@alt", "nodius_text_en", fw.w*wAlt))
	}
	for i := range maxDataPaths {
		d := "n.@d" + strconv.Itoa(i)
		en = append(en, in(d, "@q", "nodius_text_en", wData), in(d, "@alt", "nodius_text_en", wData*wAlt))
		fr = append(fr, in(d, "@q", "nodius_text_fr", wData))
	}
	var b strings.Builder
	// The graph filter scores nothing (BOOST 0): its BM25 would be the same for
	// every node of the graph, but not for a node credited by an edge too.
	b.WriteString(`LET nodeHits = (FOR n IN nodius_nodes_search SEARCH BOOST(n.graphKey == @gk, 0) AND (`)
	b.WriteString(`ANALYZER(` + strings.Join(en, ` OR `) + `, "nodius_text_en") OR `)
	b.WriteString(`ANALYZER(` + strings.Join(fr, ` OR `) + `, "nodius_text_fr") OR `)
	b.WriteString(`BOOST(n.type IN @types, ` + f(wType) + `) OR BOOST(n.sheet IN @sheets, ` + f(wSheet) + `)) `)
	b.WriteString(`OPTIONS {collections: ["nodius_nodes"]} `)
	b.WriteString(`LET score = BM25(n) SORT score DESC, n._key LIMIT @limit RETURN {id: n._id, score: score}) `)
	b.WriteString(`LET edgeHits = (FOR e IN nodius_nodes_search SEARCH BOOST(e.graphKey == @gk, 0) AND (`)
	b.WriteString(`ANALYZER(` + in("e.label", "@q", "nodius_text_en", 1) + ` OR ` + in("e.label", "@alt", "nodius_text_en", wAlt) + `, "nodius_text_en") OR `)
	b.WriteString(`ANALYZER(` + in("e.label", "@q", "nodius_text_fr", 1) + `, "nodius_text_fr")) `)
	b.WriteString(`OPTIONS {collections: ["nodius_edges"]} `)
	b.WriteString(`LET escore = BM25(e) * ` + f(wEdge) + ` SORT escore DESC, e._key LIMIT @limit `)
	b.WriteString(`FOR endID IN UNIQUE([e._from, e._to]) RETURN {id: endID, score: escore}) `)
	// Node types of the workspace match by their code (node.process, where
	// Nodius's schema keeps a node's code), weighted as a node's own code, and
	// credit the graph's nodes of those types, found through the View's type
	// field, best type first (at most @limit nodes). One search over all the
	// types found, not one per type: a SEARCH inside a loop whose condition
	// changes with the loop is what some ArangoDB releases mis-optimise
	// (immutable-search-condition).
	b.WriteString(`LET typeHits = (FOR c IN nodius_nodes_search SEARCH BOOST(c.workspace IN [@ws, "root"], 0) AND (`)
	b.WriteString(`ANALYZER(` + in("c.node.process", "@q", "nodius_text_en", wProcess) + ` OR ` + in("c.node.process", "@alt", "nodius_text_en", wProcess*wAlt) + `, "nodius_text_en") OR `)
	b.WriteString(`ANALYZER(` + in("c.node.process", "@q", "nodius_text_fr", wProcess) + `, "nodius_text_fr")) `)
	b.WriteString(`OPTIONS {collections: ["nodius_node_config"]} `)
	b.WriteString(`LET tscore = BM25(c) SORT tscore DESC, c._key LIMIT @limit RETURN {type: c._key, score: tscore}) `)
	b.WriteString(`LET typeScores = ZIP(typeHits[*].type, typeHits[*].score) `)
	b.WriteString(`LET typeNodeHits = (FOR m IN nodius_nodes_search SEARCH m.graphKey == @gk AND m.type IN typeHits[*].type `)
	b.WriteString(`OPTIONS {collections: ["nodius_nodes"]} LET mscore = typeScores[m.type] SORT mscore DESC, m._key LIMIT @limit RETURN {id: m._id, score: mscore}) `)
	// Each name is declared once in the whole query, subqueries included.
	b.WriteString(`FOR h IN UNION(nodeHits, edgeHits, typeNodeHits) COLLECT hid = h.id AGGREGATE total = SUM(h.score) `)
	b.WriteString(`LET node = DOCUMENT(hid) FILTER node != null AND IS_SAME_COLLECTION("nodius_nodes", node) AND node.graphKey == @gk `)
	b.WriteString(`SORT total DESC, node._key LIMIT @limit RETURN {node: node, score: total}`)
	return b.String()
}

// The parts the three neighbourhood queries share.
const (
	traverseTail = `PRUNE v.graphKey != @gk OPTIONS {order: "bfs", uniqueVertices: "global"} ` +
		`FILTER v.graphKey == @gk RETURN {node: v, hops: LENGTH(p.edges)}) ` +
		`LET ids = visited[*].node._id LET inner = visited[* FILTER CURRENT.hops < @depth].node._id `
	traverseRows = `FOR row IN APPEND(visited[* RETURN {node: CURRENT.node}], walked) RETURN row`
)

// Queries lists every query this package sends, for tests and fake servers.
func Queries() []string {
	return append([]string{
		qGraph, qGraphKeys, qNodes, qNodesSheet, qEdges, qEdgesSheet, qNode, qConfigs,
		qTraverseAny, qTraverseIn, qTraverseOut,
		qInsertNode, qUpdateNode, qDeleteNode, qInsertEdge, qDeleteEdge,
		qVectorExact, qVectorApprox, qSetEmbeddings, qTextSearch,
		qThreadsSince, qThread, qThreadUpsert, qDataPaths,
		qEdge, qNodeEdges, qLiveServers,
		qInsertGraph, qInsertHTMLClass, qHTMLClass, qRemoveGraphNodes, qRemoveGraph, qRemoveHTMLClass,
	}, configQueries()...)
}

// qLiveServers lists the Nodius servers running on this database: each server
// registers itself in nodius_cluster and refreshes lastRefresh every minute, and
// the servers themselves count one older than two minutes as gone.
const qLiveServers = `FOR c IN nodius_cluster FILTER c.status == "online" AND c.lastRefresh > @since ` +
	`RETURN {host: c.host, port: c.port, lastRefresh: c.lastRefresh}`
