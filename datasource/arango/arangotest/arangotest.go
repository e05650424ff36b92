// Package arangotest is a fake ArangoDB for tests: an httptest server that answers
// the go-driver's HTTP requests (database, version, indexes, cursors, stream
// transactions: see transaction.go) the way ArangoDB does, for the fixed queries of
// package arango only. ArangoDB cannot run
// on the machines the tests run on (too heavy for CI), so the real driver talks
// to this server over loopback, and the tests of datasource/arango and of the CLI
// share one fake instead of each keeping its own.
//
// Each known query is evaluated in Go over an in-memory store. Any other query text
// is refused as a syntax error and recorded, so a test sees at once a query built by
// concatenation; bind parameters are checked against the query's @names, as
// ArangoDB does.
package arangotest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango"
)

// The database and credentials the fake accepts; URL puts them in the arango:// URL.
// Tests that check an error message hides the password look for Password.
const (
	DB       = "nodius_test"
	User     = "root"
	Password = "s3cret"
)

// The Nodius server's collections the fake holds.
const (
	Graphs  = "nodius_graphs"
	Nodes   = "nodius_nodes"
	Edges   = "nodius_edges"
	Configs = "nodius_node_config"
	Threads = "nodius_ai_threads"
	// Cluster is where each running Nodius server registers itself.
	Cluster = "nodius_cluster"
	// HTMLClasses holds the server's HTML classes (a create_graph of an HTML class).
	HTMLClasses = "nodius_html_class"
)

// Sent is one query as the client sent it, for assertions.
type Sent struct {
	Query    string
	BindVars map[string]any
}

// RequestFailFunc and QueryFailFunc inject faults: ok true means answer status with
// errorNum instead of doing the work, as ArangoDB does when it fails.
type (
	RequestFailFunc func(r *http.Request) (status, errorNum int, ok bool)
	QueryFailFunc   func(query string, bindVars map[string]any) (status, errorNum int, ok bool)
)

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	srv   *httptest.Server
	kinds map[string]kind // arango.Queries() text -> what it does

	mu        sync.Mutex
	version   string
	colls     map[string]map[string]map[string]any // collection -> _key -> document
	indexes   []map[string]any                     // indexes of nodius_nodes
	cursors   map[string]*cursor                   // open cursor id -> results left
	nextID    int
	sent      []Sent
	unknown   []string
	deleted   []string // cursor ids closed by DELETE
	nexts     int      // next-batch requests
	versions  int      // /_api/version requests
	failReq   RequestFailFunc
	failQuery QueryFailFunc

	analyzers map[string]map[string]any // custom analyzers by name (search.go)
	views     map[string]map[string]any // Views by name: name, type, links
	calls     []string                  // analyzer and View API requests

	trxs    map[string]*transaction // stream transactions by id (transaction.go)
	locks   *sync.Cond              // on mu: signalled when a transaction ends
	waiters int                     // requests waiting for a lock
	hook    HookFunc
}

type cursor struct {
	rest  []any
	batch int
}

// New starts a fake with empty collections, answering as ArangoDB 3.11.8; it is
// closed when the test ends. It fails the test when package arango sends a query
// the fake cannot evaluate, so a new query is noticed here and not as a puzzling
// refusal in some test.
func New(tb testing.TB) *Server {
	tb.Helper()
	kinds, err := classify(arango.Queries())
	if err != nil {
		tb.Fatalf("arangotest: %v", err)
	}
	s := &Server{
		kinds:   kinds,
		version: "3.11.8",
		colls:   map[string]map[string]map[string]any{Graphs: {}, Nodes: {}, Edges: {}, Configs: {}, Threads: {}, HTMLClasses: {}},
		cursors: map[string]*cursor{},

		analyzers: map[string]map[string]any{},
		views:     map[string]map[string]any{},

		trxs: map[string]*transaction{},
	}
	s.locks = sync.NewCond(&s.mu)
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	tb.Cleanup(s.srv.Close)
	return s
}

// URL is the arango:// URL of this fake for a workspace.
func (s *Server) URL(workspace string) string {
	host := strings.TrimPrefix(s.srv.URL, "http://")
	return fmt.Sprintf("arango://%s:%s@%s/%s?workspace=%s", User, Password, host, DB, workspace)
}

// Close stops the server, as a server that goes away (it is also closed when the
// test ends).
func (s *Server) Close() { s.srv.Close() }

// Insert stores a copy of doc (which must have a string _key) in a collection,
// adding _id and _rev as ArangoDB does; an existing document is replaced.
func (s *Server) Insert(collection string, doc map[string]any) {
	d := clone(doc)
	key := d["_key"].(string)
	d["_id"], d["_rev"] = collection+"/"+key, "1"
	s.mu.Lock()
	defer s.mu.Unlock()
	s.coll(collection)[key] = d
}

// Doc returns a copy of a stored document, or nil.
func (s *Server) Doc(collection, key string) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.colls[collection][key]
	if !ok {
		return nil
	}
	return clone(d)
}

// Docs returns copies of a collection's documents, ordered by _key.
func (s *Server) Docs(collection string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sorted(collection, func(map[string]any) bool { return true })
}

// Update sets top-level fields of a stored document, as another client would
// (embeddings, a type that does not decode); it reports whether the document exists.
func (s *Server) Update(collection, key string, fields map[string]any) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.colls[collection][key]
	if !ok {
		return false
	}
	for k, v := range clone(fields) {
		d[k] = v
	}
	return true
}

// Delete removes a stored document, if present.
func (s *Server) Delete(collection, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.colls[collection], key)
}

// Queries returns every query sent so far, in order, known or not.
func (s *Server) Queries() []Sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sent)
}

// Unknown returns the query texts refused because they are not among
// arango.Queries().
func (s *Server) Unknown() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unknown)
}

// OpenCursors counts cursors the client neither exhausted nor deleted.
func (s *Server) OpenCursors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cursors)
}

// DeletedCursors counts DELETE requests for cursors.
func (s *Server) DeletedCursors() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.deleted)
}

// NextBatches counts next-batch requests on cursors.
func (s *Server) NextBatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nexts
}

// VersionRequests counts /_api/version requests.
func (s *Server) VersionRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.versions
}

// SetVersion sets the version the server reports (default 3.11.8).
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// SetIndexes sets the indexes listed for nodius_nodes (none by default).
func (s *Server) SetIndexes(indexes ...map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.indexes = slices.Clone(indexes)
}

// FailRequests makes f see every request before anything else (authentication
// included) and answer it with an error when it says so; nil turns it off.
func (s *Server) FailRequests(f RequestFailFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failReq = f
}

// FailQueries makes f see every known query with its bind variables once they are
// checked, and refuse it with an error when it says so; nil turns it off. f runs
// with the server's lock held: it must not call the Server.
func (s *Server) FailQueries(f QueryFailFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failQuery = f
}

func (s *Server) coll(name string) map[string]map[string]any {
	c, ok := s.colls[name]
	if !ok {
		c = map[string]map[string]any{}
		s.colls[name] = c
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func arangoErr(w http.ResponseWriter, status, num int, msg string) {
	writeJSON(w, status, map[string]any{"error": true, "code": status, "errorNum": num, "errorMessage": msg})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	fail := s.failReq
	s.mu.Unlock()
	if fail != nil {
		if status, num, ok := fail(r); ok {
			arangoErr(w, status, num, http.StatusText(status))
			return
		}
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(User+":"+Password))
	if r.Header.Get("Authorization") != want {
		arangoErr(w, 401, 11, "not authorized to execute this request")
		return
	}
	path := r.URL.Path
	if path == "/_api/version" {
		s.mu.Lock()
		s.versions++
		v := s.version
		s.mu.Unlock()
		writeJSON(w, 200, map[string]any{"server": "arango", "version": v, "license": "community"})
		return
	}
	prefix := "/_db/" + DB + "/"
	if !strings.HasPrefix(path, prefix) {
		if strings.HasPrefix(path, "/_db/") {
			arangoErr(w, 404, 1228, "database not found")
			return
		}
		arangoErr(w, 404, 404, "unknown path "+path)
		return
	}
	rest := strings.TrimPrefix(path, prefix)
	switch {
	case rest == "_api/database/current" && r.Method == http.MethodGet:
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"name": DB, "id": "1", "isSystem": false}})
	case rest == "_api/index" && r.Method == http.MethodGet:
		s.mu.Lock()
		idx := slices.Clone(s.indexes)
		s.mu.Unlock()
		if r.URL.Query().Get("collection") != Nodes {
			idx = nil
		}
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "indexes": idx})
	case rest == "_api/analyzer" || strings.HasPrefix(rest, "_api/analyzer/"):
		s.serveAnalyzer(w, r, rest)
	case rest == "_api/view" || strings.HasPrefix(rest, "_api/view/"):
		s.serveView(w, r, rest)
	case rest == "_api/transaction" || strings.HasPrefix(rest, "_api/transaction/"):
		s.serveTransaction(w, r, rest)
	case rest == "_api/cursor" && r.Method == http.MethodPost:
		s.createCursor(w, r)
	case strings.HasPrefix(rest, "_api/cursor/"):
		id := strings.TrimPrefix(rest, "_api/cursor/")
		switch r.Method {
		case http.MethodPost, http.MethodPut:
			s.nextBatch(w, id)
		case http.MethodDelete:
			s.mu.Lock()
			_, ok := s.cursors[id]
			delete(s.cursors, id)
			s.deleted = append(s.deleted, id)
			s.mu.Unlock()
			if !ok {
				arangoErr(w, 404, 1600, "cursor not found")
				return
			}
			writeJSON(w, 202, map[string]any{"error": false, "code": 202, "id": id})
		default:
			arangoErr(w, 405, 405, "method not allowed")
		}
	default:
		arangoErr(w, 404, 404, "unknown path "+path)
	}
}

var bindRe = regexp.MustCompile(`@(\w+)`)

func (s *Server) createCursor(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string         `json:"query"`
		BindVars  map[string]any `json:"bindVars"`
		BatchSize int            `json:"batchSize"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		arangoErr(w, 400, 600, "malformed JSON")
		return
	}
	s.mu.Lock()
	s.sent = append(s.sent, Sent{req.Query, req.BindVars})
	k, known := s.kinds[req.Query]
	if !known {
		s.unknown = append(s.unknown, req.Query)
	}
	s.mu.Unlock()
	if !known {
		arangoErr(w, 400, 1501, "syntax error, unexpected query")
		return
	}
	declared := map[string]bool{}
	for _, m := range bindRe.FindAllStringSubmatch(req.Query, -1) {
		declared[m[1]] = true
		if _, ok := req.BindVars[m[1]]; !ok {
			arangoErr(w, 400, 1551, "no value specified for declared bind parameter '"+m[1]+"'")
			return
		}
	}
	for name := range req.BindVars {
		if !declared[name] {
			arangoErr(w, 400, 1552, "bind parameter '"+name+"' was not declared in the query")
			return
		}
	}
	s.mu.Lock()
	if s.failQuery != nil {
		if status, num, ok := s.failQuery(req.Query, req.BindVars); ok {
			s.mu.Unlock()
			arangoErr(w, status, num, "injected failure")
			return
		}
	}
	trx := r.Header.Get(TrxHeader)
	res, status, num, msg := s.run(trx, k, req.BindVars)
	s.mu.Unlock()
	s.fire(Event{Kind: "query", Trx: trx, Query: Sent{req.Query, req.BindVars}})
	if status != 0 {
		arangoErr(w, status, num, msg)
		return
	}
	batch := req.BatchSize
	if batch <= 0 {
		batch = 1000
	}
	s.answer(w, 201, res, batch)
}

// answer sends the first batch and keeps the rest under a cursor id. Like ArangoDB,
// the id is only given while more results are left.
func (s *Server) answer(w http.ResponseWriter, status int, res []any, batch int) {
	if res == nil {
		res = []any{}
	}
	body := map[string]any{"error": false, "code": status}
	if len(res) > batch {
		s.mu.Lock()
		s.nextID++
		id := strconv.Itoa(s.nextID)
		s.cursors[id] = &cursor{rest: res[batch:], batch: batch}
		s.mu.Unlock()
		body["id"], body["hasMore"], body["result"] = id, true, res[:batch]
	} else {
		body["hasMore"], body["result"] = false, res
	}
	writeJSON(w, status, body)
}

func (s *Server) nextBatch(w http.ResponseWriter, id string) {
	s.mu.Lock()
	s.nexts++
	c, ok := s.cursors[id]
	if !ok {
		s.mu.Unlock()
		arangoErr(w, 404, 1600, "cursor not found")
		return
	}
	body := map[string]any{"error": false, "code": 200}
	if len(c.rest) > c.batch {
		body["id"], body["hasMore"], body["result"] = id, true, c.rest[:c.batch]
		c.rest = c.rest[c.batch:]
	} else {
		delete(s.cursors, id)
		body["hasMore"], body["result"] = false, c.rest
	}
	s.mu.Unlock()
	writeJSON(w, 200, body)
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// sorted returns copies of the documents of coll that keep accepts, by _key, so
// answers do not depend on map order. The caller holds s.mu.
func (s *Server) sorted(coll string, keep func(d map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, d := range s.colls[coll] {
		if keep(d) {
			out = append(out, clone(d))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["_key"].(string) < out[j]["_key"].(string) })
	return out
}

// stored returns the documents of coll that keep accepts, by _key, without copying
// them: the caller holds s.mu, only reads them, and copies what it answers.
func (s *Server) stored(coll string, keep func(d map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, d := range s.colls[coll] {
		if keep(d) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["_key"].(string) < out[j]["_key"].(string) })
	return out
}

func anys[T any](in []T) []any {
	out := make([]any, len(in))
	for i, v := range in {
		out[i] = v
	}
	return out
}

// exec evaluates one known query. It returns the results, or an error status. The
// caller holds s.mu.
func (s *Server) exec(k kind, b map[string]any) (res []any, status, num int, msg string) {
	str := func(name string) string { v, _ := b[name].(string); return v }
	switch k {
	case kGraph:
		g := s.sorted(Graphs, func(d map[string]any) bool { return d["_key"] == str("key") && d["workspace"] == str("ws") })
		return anys(g), 0, 0, ""
	case kGraphKeys:
		var keys []any
		for _, g := range s.sorted(Graphs, func(d map[string]any) bool { return d["workspace"] == str("ws") }) {
			keys = append(keys, g["_key"])
		}
		return keys, 0, 0, ""
	case kNodes, kNodesSheet, kEdges, kEdgesSheet:
		coll := Nodes
		if k == kEdges || k == kEdgesSheet {
			coll = Edges
		}
		withSheet := k == kNodesSheet || k == kEdgesSheet
		return anys(s.sorted(coll, func(d map[string]any) bool {
			return d["graphKey"] == str("gk") && (!withSheet || d["sheet"] == str("sheet"))
		})), 0, 0, ""
	case kNode:
		return anys(s.sorted(Nodes, func(d map[string]any) bool { return d["_key"] == str("key") && d["graphKey"] == str("gk") })), 0, 0, ""
	case kEdge:
		return anys(s.sorted(Edges, func(d map[string]any) bool { return d["_key"] == str("key") && d["graphKey"] == str("gk") })), 0, 0, ""
	case kNodeEdges:
		return anys(s.sorted(Edges, func(d map[string]any) bool {
			return d["graphKey"] == str("gk") && (d["_from"] == str("id") || d["_to"] == str("id"))
		})), 0, 0, ""
	case kLiveServers:
		since, _ := b["since"].(float64)
		var out []any
		for _, d := range s.sorted(Cluster, func(d map[string]any) bool {
			t, _ := d["lastRefresh"].(float64)
			return d["status"] == "online" && t > since
		}) {
			out = append(out, map[string]any{"host": d["host"], "port": d["port"], "lastRefresh": d["lastRefresh"]})
		}
		return out, 0, 0, ""
	case kConfigs:
		return anys(s.sorted(Configs, func(d map[string]any) bool { return d["workspace"] == str("ws") || d["workspace"] == "root" })), 0, 0, ""
	case kTraverseAny, kTraverseIn, kTraverseOut:
		return s.traverse(k, str("start"), int(b["depth"].(float64)), str("gk")), 0, 0, ""
	case kInsertNode, kInsertEdge:
		coll := Nodes
		if k == kInsertEdge {
			coll = Edges
		}
		doc, _ := b["doc"].(map[string]any)
		key, _ := doc["_key"].(string)
		if _, dup := s.coll(coll)[key]; dup {
			return nil, 409, 1210, "unique constraint violated - in index primary of type primary over '_key'; conflicting key: " + key
		}
		if coll == Edges && (doc["_from"] == nil || doc["_to"] == nil) {
			return nil, 400, 1233, "edge attribute missing or invalid"
		}
		doc["_id"], doc["_rev"] = coll+"/"+key, "1"
		s.coll(coll)[key] = doc
		return []any{clone(doc)}, 0, 0, ""
	case kUpdateNode:
		d, ok := s.colls[Nodes][str("key")]
		if !ok {
			return nil, 404, 1202, "document not found"
		}
		for f, v := range b["patch"].(map[string]any) {
			d[f] = v
		}
		return []any{clone(d)}, 0, 0, ""
	case kDeleteNode:
		if _, ok := s.colls[Nodes][str("key")]; !ok {
			return nil, 404, 1202, "document not found"
		}
		removed := []any{}
		for _, e := range s.sorted(Edges, func(d map[string]any) bool { return d["_from"] == str("id") || d["_to"] == str("id") }) {
			delete(s.colls[Edges], e["_key"].(string))
			removed = append(removed, e)
		}
		delete(s.colls[Nodes], str("key"))
		return []any{map[string]any{"removed": removed}}, 0, 0, ""
	case kDeleteEdge:
		d, ok := s.colls[Edges][str("key")]
		if !ok {
			return nil, 404, 1202, "document not found"
		}
		delete(s.colls[Edges], str("key"))
		return []any{d}, 0, 0, ""
	case kVectorExact, kVectorApprox:
		return s.vector(k, b), 0, 0, ""
	case kTextSearch:
		return s.textSearch(b)
	case kDataPaths:
		return s.dataPaths(str("gk"), int(b["max"].(float64))), 0, 0, ""
	case kSetEmbeddings:
		var out []any
		for _, u := range b["updates"].([]any) {
			um := u.(map[string]any)
			d, ok := s.colls[Nodes][um["key"].(string)]
			if !ok {
				continue
			}
			d["embedding"], d["embeddingHash"] = um["vector"], um["hash"]
			out = append(out, map[string]any{"key": d["_key"]})
		}
		return out, 0, 0, ""
	case kThreadsSince:
		docs := s.sorted(Threads, func(d map[string]any) bool {
			ts, _ := d["lastUpdatedTime"].(float64)
			return d["workspace"] == str("ws") && ts > b["since"].(float64)
		})
		sort.SliceStable(docs, func(i, j int) bool {
			return docs[i]["lastUpdatedTime"].(float64) < docs[j]["lastUpdatedTime"].(float64)
		})
		return anys(docs), 0, 0, ""
	case kThread:
		return anys(s.sorted(Threads, func(d map[string]any) bool { return d["_key"] == str("key") && d["workspace"] == str("ws") })), 0, 0, ""
	case kConfigByKey:
		return anys(s.sorted(Configs, func(d map[string]any) bool { return d["_key"] == str("key") })), 0, 0, ""
	case kPutConfig:
		// UPSERT {_key, workspace}: a document of that key in another workspace is
		// not found, and the insert then breaks the key's uniqueness.
		doc, _ := b["doc"].(map[string]any)
		key := str("key")
		if d, ok := s.coll(Configs)[key]; ok && d["workspace"] != str("ws") {
			return nil, 409, 1210, "unique constraint violated - in index primary of type primary over '_key'; conflicting key: " + key
		}
		doc["_key"], doc["_id"], doc["_rev"] = key, Configs+"/"+key, "1"
		s.coll(Configs)[key] = doc
		return []any{clone(doc)}, 0, 0, ""
	case kDelConfig:
		d, ok := s.coll(Configs)[str("key")]
		if !ok || d["workspace"] != str("ws") {
			return []any{}, 0, 0, ""
		}
		delete(s.colls[Configs], str("key"))
		return []any{d["_key"]}, 0, 0, ""
	case kTypeInUse:
		var out []any
		for _, d := range s.sorted(Nodes, func(d map[string]any) bool { return d["type"] == str("type") }) {
			out = append(out, d["_key"])
		}
		if len(out) > 1 {
			out = out[:1]
		}
		return out, 0, 0, ""
	case kThreadUpsert:
		key, ts := str("key"), b["ts"].(float64)
		doc := b["doc"].(map[string]any)
		old, ok := s.colls[Threads][key]
		written := !ok || (old["workspace"] == str("ws") && old["lastUpdatedTime"].(float64) < ts)
		stored := old
		if written {
			doc["_key"], doc["_id"], doc["_rev"] = key, Threads+"/"+key, "1"
			s.colls[Threads][key] = doc
			stored = doc
		}
		return []any{map[string]any{"written": written, "stored": stored["lastUpdatedTime"]}}, 0, 0, ""
	}
	if res, status, num, msg, ok := s.execGraphs(k, b); ok {
		return res, status, num, msg
	}
	return nil, 400, 1501, "query not supported by the fake"
}

// traverse answers the neighbourhood queries: a breadth-first walk from start,
// each vertex once (uniqueVertices "global"), vertices of another graph pruned (not
// returned, not walked through), giving the vertices and their distance; then the
// edges in the direction from a vertex closer than depth to a vertex reached, in
// collection (_key) order. Rows are {node} in BFS order, start first, then {edge}.
// The caller holds s.mu.
func (s *Server) traverse(k kind, start string, depth int, gk string) []any {
	node := func(id string) (map[string]any, bool) {
		n, ok := s.colls[Nodes][strings.TrimPrefix(id, Nodes+"/")]
		return n, ok && strings.HasPrefix(id, Nodes+"/") && n["graphKey"] == gk
	}
	first, ok := node(start)
	if !ok {
		return nil // ArangoDB warns of a missing start vertex and returns nothing
	}
	edges := s.stored(Edges, func(map[string]any) bool { return true })
	out := []any{map[string]any{"node": clone(first)}}
	seen := map[string]bool{start: true}
	ids := map[string]bool{start: true}
	inner := map[string]bool{}
	frontier := []string{start}
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, id := range frontier {
			inner[id] = true
			for _, e := range edges {
				var other string
				switch {
				case k != kTraverseIn && e["_from"] == id:
					other = e["_to"].(string)
				case k != kTraverseOut && e["_to"] == id:
					other = e["_from"].(string)
				default:
					continue
				}
				if seen[other] {
					continue
				}
				seen[other] = true
				n, ok := node(other)
				if !ok {
					continue
				}
				ids[other] = true
				out = append(out, map[string]any{"node": clone(n)})
				next = append(next, other)
			}
		}
		frontier = next
	}
	for _, e := range edges {
		from, to := e["_from"].(string), e["_to"].(string)
		walkedOut := inner[from] && ids[to]
		walkedIn := inner[to] && ids[from]
		if (k == kTraverseOut && walkedOut) || (k == kTraverseIn && walkedIn) || (k == kTraverseAny && (walkedOut || walkedIn)) {
			out = append(out, map[string]any{"edge": clone(e)})
		}
	}
	return out
}

// vector ranks nodes by cosine similarity. The approximate query, like a vector
// index, takes the best candidates of every graph before filtering to this one.
// The caller holds s.mu.
func (s *Server) vector(k kind, b map[string]any) []any {
	qe := b["qe"].([]any)
	minScore := b["min"].(float64)
	limit := int(b["limit"].(float64))
	type hit struct {
		n     map[string]any
		score float64
	}
	var hits []hit
	for _, n := range s.sorted(Nodes, func(map[string]any) bool { return true }) {
		emb, ok := n["embedding"].([]any)
		if !ok {
			continue
		}
		if k == kVectorExact && (n["graphKey"] != b["gk"] || float64(len(emb)) != b["dim"].(float64)) {
			continue
		}
		hits = append(hits, hit{n, cosine(emb, qe)})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if k == kVectorApprox {
		hits = hits[:min(len(hits), int(b["candidates"].(float64)))]
	}
	var out []any
	for _, h := range hits {
		if h.n["graphKey"] != b["gk"] || h.score <= minScore {
			continue
		}
		out = append(out, map[string]any{"node": h.n, "score": h.score})
		if len(out) == limit {
			break
		}
	}
	return out
}

func cosine(a, b []any) float64 {
	if len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		x, y := a[i].(float64), b[i].(float64)
		dot, na, nb = dot+x*y, na+x*x, nb+y*y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / (math.Sqrt(na) * math.Sqrt(nb))
}
