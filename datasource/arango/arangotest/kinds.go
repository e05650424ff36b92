package arangotest

import (
	"fmt"
	"strings"
)

// kind is what a query of package arango does, so the fake knows how to evaluate it.
type kind int

const (
	kGraph kind = iota + 1
	kNodes
	kNodesSheet
	kEdges
	kEdgesSheet
	kNode
	kConfigs
	kTraverseAny
	kTraverseIn
	kTraverseOut
	kInsertNode
	kUpdateNode
	kDeleteNode
	kInsertEdge
	kDeleteEdge
	kVectorExact
	kVectorApprox
	kSetEmbeddings
	kThreadsSince
	kThread
	kThreadUpsert
	kGraphKeys
	kTextSearch
	kDataPaths
	kEdge
	kNodeEdges
	kLiveServers
	kConfigByKey
	kPutConfig
	kDelConfig
	kTypeInUse
	kInsertGraph
	kInsertHTMLClass
	kHTMLClass
	kRemoveGraphNodes
	kRemoveGraph
	kRemoveHTMLClass
)

// signatures tells the queries of package arango apart by fragments of their fixed
// text. The query texts are unexported there (only the list arango.Queries() is
// public), and copying them here would let the two drift apart silently; a fragment
// that stops matching, or matches twice, fails New instead.
func signatures() map[kind][]string {
	return map[kind][]string{
		kGraph:         {"FOR g IN nodius_graphs", "g._key == @key", "g.workspace == @ws"},
		kGraphKeys:     {"FOR g IN nodius_graphs", "g.workspace == @ws", "RETURN g._key"},
		kNodes:         {"FOR n IN nodius_nodes FILTER n.graphKey == @gk RETURN n"},
		kNodesSheet:    {"FOR n IN nodius_nodes FILTER n.graphKey == @gk AND n.sheet == @sheet RETURN n"},
		kEdges:         {"FOR e IN nodius_edges FILTER e.graphKey == @gk RETURN e"},
		kEdgesSheet:    {"FOR e IN nodius_edges FILTER e.graphKey == @gk AND e.sheet == @sheet RETURN e"},
		kNode:          {"FOR n IN nodius_nodes FILTER n._key == @key AND n.graphKey == @gk"},
		kConfigs:       {"FOR c IN nodius_node_config", `c.workspace IN [@ws, "root"]`},
		kTraverseAny:   {" ANY @start nodius_edges", "PRUNE v.graphKey != @gk", "hops < @depth", "v.graphKey == @gk", "FILTER (e._from IN inner AND e._to IN ids) OR (e._to IN inner AND e._from IN ids)"},
		kTraverseIn:    {" INBOUND @start nodius_edges", "PRUNE v.graphKey != @gk", "hops < @depth", "v.graphKey == @gk", "FILTER e._to IN inner AND e._from IN ids"},
		kTraverseOut:   {" OUTBOUND @start nodius_edges", "PRUNE v.graphKey != @gk", "hops < @depth", "v.graphKey == @gk", "FILTER e._from IN inner AND e._to IN ids"},
		kInsertNode:    {"INSERT @doc INTO nodius_nodes"},
		kUpdateNode:    {"UPDATE {_key: @key} WITH @patch IN nodius_nodes"},
		kDeleteNode:    {"REMOVE {_key: @key} IN nodius_nodes", "REMOVE e IN nodius_edges"},
		kInsertEdge:    {"INSERT @doc INTO nodius_edges"},
		kDeleteEdge:    {"REMOVE {_key: @key} IN nodius_edges"},
		kVectorExact:   {"COSINE_SIMILARITY(n.embedding, @qe)", "n.graphKey == @gk"},
		kVectorApprox:  {"APPROX_NEAR_COSINE(n.embedding, @qe)", "@candidates", "n.graphKey == @gk"},
		kSetEmbeddings: {"FOR u IN @updates", "IN nodius_nodes"},
		kThreadsSince:  {"FOR t IN nodius_ai_threads", "t.workspace == @ws", "t.lastUpdatedTime > @since"},
		kThread:        {"FOR t IN nodius_ai_threads", "t._key == @key", "t.workspace == @ws"},
		kThreadUpsert:  {"UPSERT {_key: @key}", "IN nodius_ai_threads"},
		// The text search's weights are part of its signature: the fake ranks with
		// the same ones (search.go), and a change on either side fails New.
		kTextSearch: {
			"LET nodeHits = (FOR n IN nodius_nodes_search SEARCH BOOST(n.graphKey == @gk, 0) AND (ANALYZER(",
			`BOOST(n._key IN TOKENS(@q, "nodius_text_en"), 1.77)`, `BOOST(n.type IN TOKENS(@q, "nodius_text_en"), 1.38)`, `n.process IN TOKENS(@q, "nodius_text_en")`,
			`BOOST(n._key IN TOKENS(@alt, "nodius_text_en"), 1.06)`, `BOOST(n.type IN TOKENS(@alt, "nodius_text_en"), 0.83)`, `BOOST(n.process IN TOKENS(@alt, "nodius_text_en"), 0.6)`,
			`BOOST(n._key IN TOKENS(@q, "nodius_text_fr"), 1.77)`, `n.process IN TOKENS(@q, "nodius_text_fr")`,
			`BOOST(n.@d0 IN TOKENS(@q, "nodius_text_en"), 0.81)`, `BOOST(n.@d0 IN TOKENS(@alt, "nodius_text_en"), 0.49)`, `BOOST(n.@d15 IN TOKENS(@q, "nodius_text_fr"), 0.81)`,
			`BOOST(n.type IN @types, 1.38) OR BOOST(n.sheet IN @sheets, 0.65))`, `OPTIONS {collections: ["nodius_nodes"]}`,
			"LET score = BM25(n) SORT score DESC, n._key LIMIT @limit RETURN {id: n._id, score: score})",
			"LET edgeHits = (FOR e IN nodius_nodes_search SEARCH BOOST(e.graphKey == @gk, 0) AND (",
			`e.label IN TOKENS(@q, "nodius_text_en") OR BOOST(e.label IN TOKENS(@alt, "nodius_text_en"), 0.6)`, `e.label IN TOKENS(@q, "nodius_text_fr")`,
			`OPTIONS {collections: ["nodius_edges"]}`, "LET escore = BM25(e) * 0.65 SORT escore DESC, e._key LIMIT @limit FOR endID IN UNIQUE([e._from, e._to])",
			`LET typeHits = (FOR c IN nodius_nodes_search SEARCH BOOST(c.workspace IN [@ws, "root"], 0) AND (ANALYZER(`,
			`c.node.process IN TOKENS(@q, "nodius_text_en") OR BOOST(c.node.process IN TOKENS(@alt, "nodius_text_en"), 0.6)`,
			`ANALYZER(c.node.process IN TOKENS(@q, "nodius_text_fr"), "nodius_text_fr"))`, `OPTIONS {collections: ["nodius_node_config"]}`,
			"LET tscore = BM25(c) SORT tscore DESC, c._key LIMIT @limit RETURN {type: c._key, score: tscore})",
			"LET typeScores = ZIP(typeHits[*].type, typeHits[*].score)",
			"LET typeNodeHits = (FOR m IN nodius_nodes_search SEARCH m.graphKey == @gk AND m.type IN typeHits[*].type",
			"LET mscore = typeScores[m.type] SORT mscore DESC, m._key LIMIT @limit RETURN {id: m._id, score: mscore})",
			"FOR h IN UNION(nodeHits, edgeHits, typeNodeHits) COLLECT hid = h.id AGGREGATE total = SUM(h.score)",
			`FILTER node != null AND IS_SAME_COLLECTION("nodius_nodes", node) AND node.graphKey == @gk SORT total DESC, node._key LIMIT @limit`,
		},
		kEdge:        {"FOR e IN nodius_edges FILTER e._key == @key AND e.graphKey == @gk"},
		kLiveServers: {"FOR c IN nodius_cluster", "c.lastRefresh > @since"},
		kConfigByKey: {"FOR c IN nodius_node_config FILTER c._key == @key"},
		kPutConfig:   {"UPSERT {_key: @key, workspace: @ws}", "IN nodius_node_config"},
		kDelConfig:   {"FOR d IN nodius_node_config", "d._key == @key AND d.workspace == @ws", "REMOVE d IN nodius_node_config"},
		kTypeInUse:   {"FOR n IN nodius_nodes FILTER n.type == @type"},
		// Graph creation (a create_graph approved) and its undo.
		kInsertGraph:      {"INSERT @doc INTO nodius_graphs"},
		kInsertHTMLClass:  {"INSERT @doc INTO nodius_html_class"},
		kHTMLClass:        {"FOR h IN nodius_html_class", "h._key == @key", "h.workspace == @ws"},
		kRemoveGraphNodes: {"FOR n IN nodius_nodes FILTER n.graphKey == @gk REMOVE n IN nodius_nodes"},
		kRemoveGraph:      {"FOR d IN nodius_graphs", "d._key == @key", "d.workspace == @ws", "REMOVE d IN nodius_graphs"},
		kRemoveHTMLClass:  {"FOR d IN nodius_html_class", "d._key == @key", "d.workspace == @ws", "REMOVE d IN nodius_html_class"},
		kNodeEdges:        {"FOR e IN nodius_edges FILTER e.graphKey == @gk AND (e._from == @id OR e._to == @id)"},
		kDataPaths: {"FOR n IN nodius_nodes FILTER n.graphKey == @gk AND IS_OBJECT(n.data)", "FOR k IN ATTRIBUTES(n.data)",
			"FOR o IN objs FOR k2 IN ATTRIBUTES(o)", "RETURN [k, k2]", "COLLECT path = p WITH COUNT INTO c SORT c DESC, path LIMIT @max RETURN path"},
	}
}

// classify maps every query text to its kind. Each query must match exactly one
// signature and each signature exactly one query: a query added to, or changed in,
// package arango without teaching the fake is an error.
func classify(queries []string) (map[string]kind, error) {
	sigs := signatures()
	out := make(map[string]kind, len(queries))
	used := map[kind]bool{}
	for _, q := range queries {
		var found []kind
		for k, parts := range sigs {
			if containsAll(q, parts) {
				found = append(found, k)
			}
		}
		switch {
		case len(found) == 0:
			return nil, fmt.Errorf("query unknown to the fake (teach datasource/arango/arangotest how to answer it): %s", q)
		case len(found) > 1:
			return nil, fmt.Errorf("query matches %d fake signatures: %s", len(found), q)
		case used[found[0]]:
			return nil, fmt.Errorf("two queries match the same fake signature: %s", q)
		}
		used[found[0]] = true
		out[q] = found[0]
	}
	for k := range sigs {
		if !used[k] {
			return nil, fmt.Errorf("fake signature %v matches none of arango.Queries(): a query of package arango changed", sigs[k])
		}
	}
	return out, nil
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
