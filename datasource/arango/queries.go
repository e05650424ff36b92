package arango

// Collection names are constants (DESIGN.md section 2, seed 001); they are the only
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
	qConfigs    = `FOR c IN nodius_node_config FILTER c.workspace == @ws RETURN c`
	// The workspace's graph keys, for completion and for the message of a wrong --graph.
	qGraphKeys = `FOR g IN nodius_graphs FILTER g.workspace == @ws SORT g._key LIMIT 200 RETURN g._key`

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

	// Text search over the View of search.go, BM25-ranked. Every word of the
	// question is looked for in the key, the type and the code, with both
	// analyzers; @alt holds the lexicon's words for them (weighted below the
	// question's own), @types the node types whose names the question matches.
	qTextSearch = `FOR n IN nodius_nodes_search SEARCH n.graphKey == @gk AND (` +
		`ANALYZER(BOOST(n._key IN TOKENS(@q, "nodius_text_en"), 5) OR BOOST(n.type IN TOKENS(@q, "nodius_text_en"), 2) OR n.process IN TOKENS(@q, "nodius_text_en") OR ` +
		`BOOST(n._key IN TOKENS(@alt, "nodius_text_en"), 3) OR BOOST(n.type IN TOKENS(@alt, "nodius_text_en"), 1.2) OR BOOST(n.process IN TOKENS(@alt, "nodius_text_en"), 0.6), "nodius_text_en") OR ` +
		`ANALYZER(BOOST(n._key IN TOKENS(@q, "nodius_text_fr"), 5) OR BOOST(n.type IN TOKENS(@q, "nodius_text_fr"), 2) OR n.process IN TOKENS(@q, "nodius_text_fr"), "nodius_text_fr") OR ` +
		`BOOST(n.type IN @types, 2)) ` +
		`LET score = BM25(n) SORT score DESC, n._key LIMIT @limit RETURN {node: n, score: score}`

	// Embeddings of one graph's nodes, stored with the hash of the text they came from.
	qSetEmbeddings = `FOR u IN @updates UPDATE {_key: u.key} WITH {embedding: u.vector, embeddingHash: u.hash} ` +
		`IN nodius_nodes OPTIONS {ignoreErrors: true, mergeObjects: false} RETURN {key: NEW._key}`
)

// The parts the three neighbourhood queries share.
const (
	traverseTail = `PRUNE v.graphKey != @gk OPTIONS {order: "bfs", uniqueVertices: "global"} ` +
		`FILTER v.graphKey == @gk RETURN {node: v, hops: LENGTH(p.edges)}) ` +
		`LET ids = visited[*].node._id LET inner = visited[* FILTER CURRENT.hops < @depth].node._id `
	traverseRows = `FOR row IN APPEND(visited[* RETURN {node: CURRENT.node}], walked) RETURN row`
)

// Queries lists every query this package sends, for tests and fake servers.
func Queries() []string {
	return []string{
		qGraph, qGraphKeys, qNodes, qNodesSheet, qEdges, qEdgesSheet, qNode, qConfigs,
		qTraverseAny, qTraverseIn, qTraverseOut,
		qInsertNode, qUpdateNode, qDeleteNode, qInsertEdge, qDeleteEdge,
		qVectorExact, qVectorApprox, qSetEmbeddings, qTextSearch,
		qThreadsSince, qThread, qThreadUpsert,
	}
}
