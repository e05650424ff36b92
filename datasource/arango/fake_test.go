package arango

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
)

// fakeArango answers the go-driver's HTTP requests the way ArangoDB does, for the
// queries of this package: the real driver talks to it over loopback. Each known
// query is evaluated in Go over an in-memory store; any other query text is refused
// as a syntax error and recorded, so a test sees at once a query built by
// concatenation. It also checks that bind parameters match the query's @names, as
// ArangoDB does.
type fakeArango struct {
	t    testing.TB
	srv  *httptest.Server
	db   string
	user string
	pass string

	mu       sync.Mutex
	version  string
	colls    map[string]map[string]map[string]any // collection -> _key -> document
	indexes  []map[string]any                     // indexes of nodius_nodes
	cursors  map[string][]any                     // open cursor id -> results left
	nextID   int
	sent     []sentQuery
	unknown  []string
	deleted  []string // cursor ids closed by DELETE
	nexts    int      // next-batch requests
	versions int      // /_api/version requests
	// fail, when set, may answer a request with an error status instead.
	fail func(r *http.Request) (status, errorNum int, ok bool)
	// failQuery, when set, may refuse one query text with an error status.
	failQuery func(q string) (status, errorNum int, ok bool)
}

type sentQuery struct {
	Query    string
	BindVars map[string]any
}

func newFakeArango(t testing.TB) *fakeArango {
	f := &fakeArango{
		t: t, db: "nodius_test", user: "root", pass: "s3cret", version: "3.11.8",
		colls:   map[string]map[string]map[string]any{collGraphs: {}, collNodes: {}, collEdges: {}, collConfigs: {}, collThreads: {}},
		cursors: map[string][]any{},
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// url is the arango:// URL of this fake.
func (f *fakeArango) url(ws string) string {
	host := strings.TrimPrefix(f.srv.URL, "http://")
	return fmt.Sprintf("arango://%s:%s@%s/%s?workspace=%s", f.user, f.pass, host, f.db, ws)
}

func (f *fakeArango) insert(coll string, doc map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := clone(doc)
	d["_id"] = coll + "/" + d["_key"].(string)
	d["_rev"] = "1"
	f.colls[coll][d["_key"].(string)] = d
}

func (f *fakeArango) queries() []sentQuery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func arangoErr(w http.ResponseWriter, status, num int, msg string) {
	writeJSON(w, status, map[string]any{"error": true, "code": status, "errorNum": num, "errorMessage": msg})
}

func (f *fakeArango) serve(w http.ResponseWriter, r *http.Request) {
	if f.fail != nil {
		if status, num, ok := f.fail(r); ok {
			arangoErr(w, status, num, http.StatusText(status))
			return
		}
	}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(f.user+":"+f.pass))
	if r.Header.Get("Authorization") != want {
		arangoErr(w, 401, 11, "not authorized to execute this request")
		return
	}
	path := r.URL.Path
	if path == "/_api/version" {
		f.mu.Lock()
		f.versions++
		v := f.version
		f.mu.Unlock()
		writeJSON(w, 200, map[string]any{"server": "arango", "version": v, "license": "community"})
		return
	}
	prefix := "/_db/" + f.db + "/"
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
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"name": f.db, "id": "1", "isSystem": false}})
	case rest == "_api/index" && r.Method == http.MethodGet:
		f.mu.Lock()
		idx := slices.Clone(f.indexes)
		f.mu.Unlock()
		if r.URL.Query().Get("collection") != collNodes {
			idx = nil
		}
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "indexes": idx})
	case rest == "_api/cursor" && r.Method == http.MethodPost:
		f.createCursor(w, r)
	case strings.HasPrefix(rest, "_api/cursor/"):
		id := strings.TrimPrefix(rest, "_api/cursor/")
		switch r.Method {
		case http.MethodPost, http.MethodPut:
			f.nextBatch(w, id)
		case http.MethodDelete:
			f.mu.Lock()
			_, ok := f.cursors[id]
			delete(f.cursors, id)
			f.deleted = append(f.deleted, id)
			f.mu.Unlock()
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

func (f *fakeArango) createCursor(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Query     string         `json:"query"`
		BindVars  map[string]any `json:"bindVars"`
		BatchSize int            `json:"batchSize"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		arangoErr(w, 400, 600, "malformed JSON")
		return
	}
	f.mu.Lock()
	f.sent = append(f.sent, sentQuery{req.Query, req.BindVars})
	f.mu.Unlock()
	if !slices.Contains(Queries(), req.Query) {
		f.mu.Lock()
		f.unknown = append(f.unknown, req.Query)
		f.mu.Unlock()
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
	for k := range req.BindVars {
		if !declared[k] {
			arangoErr(w, 400, 1552, "bind parameter '"+k+"' was not declared in the query")
			return
		}
	}
	f.mu.Lock()
	if f.failQuery != nil {
		if status, num, ok := f.failQuery(req.Query); ok {
			f.mu.Unlock()
			arangoErr(w, status, num, "injected failure")
			return
		}
	}
	res, status, num, msg := f.exec(req.Query, req.BindVars)
	f.mu.Unlock()
	if status != 0 {
		arangoErr(w, status, num, msg)
		return
	}
	batch := req.BatchSize
	if batch <= 0 {
		batch = 1000
	}
	f.answer(w, 201, res, batch)
}

// answer sends the first batch and keeps the rest under a cursor id. Like ArangoDB,
// the id is only given while more results are left.
func (f *fakeArango) answer(w http.ResponseWriter, status int, res []any, batch int) {
	if res == nil {
		res = []any{}
	}
	body := map[string]any{"error": false, "code": status}
	if len(res) > batch {
		f.mu.Lock()
		f.nextID++
		id := strconv.Itoa(f.nextID)
		f.cursors[id] = res[batch:]
		f.cursors[id+"#batch"] = []any{batch}
		f.mu.Unlock()
		body["id"], body["hasMore"], body["result"] = id, true, res[:batch]
	} else {
		body["hasMore"], body["result"] = false, res
	}
	writeJSON(w, status, body)
}

func (f *fakeArango) nextBatch(w http.ResponseWriter, id string) {
	f.mu.Lock()
	rest, ok := f.cursors[id]
	b := f.cursors[id+"#batch"]
	f.nexts++
	f.mu.Unlock()
	if !ok {
		arangoErr(w, 404, 1600, "cursor not found")
		return
	}
	batch := b[0].(int)
	body := map[string]any{"error": false, "code": 200}
	f.mu.Lock()
	if len(rest) > batch {
		f.cursors[id] = rest[batch:]
		body["id"], body["hasMore"], body["result"] = id, true, rest[:batch]
	} else {
		delete(f.cursors, id)
		delete(f.cursors, id+"#batch")
		body["hasMore"], body["result"] = false, rest
	}
	f.mu.Unlock()
	writeJSON(w, 200, body)
}

// openCursors counts cursors the client neither exhausted nor deleted.
func (f *fakeArango) openCursors() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for id := range f.cursors {
		if !strings.Contains(id, "#") {
			n++
		}
	}
	return n
}

func clone(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func (f *fakeArango) sorted(coll string, keep func(d map[string]any) bool) []map[string]any {
	var out []map[string]any
	for _, d := range f.colls[coll] {
		if keep(d) {
			out = append(out, clone(d))
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

// exec evaluates one known query. It returns the results, or an error status.
func (f *fakeArango) exec(q string, b map[string]any) (res []any, status, num int, msg string) {
	str := func(k string) string { s, _ := b[k].(string); return s }
	switch q {
	case qGraph:
		g := f.sorted(collGraphs, func(d map[string]any) bool { return d["_key"] == str("key") && d["workspace"] == str("ws") })
		return anys(g), 0, 0, ""
	case qNodes, qNodesSheet, qEdges, qEdgesSheet:
		coll := collNodes
		if q == qEdges || q == qEdgesSheet {
			coll = collEdges
		}
		withSheet := q == qNodesSheet || q == qEdgesSheet
		return anys(f.sorted(coll, func(d map[string]any) bool {
			return d["graphKey"] == str("gk") && (!withSheet || d["sheet"] == str("sheet"))
		})), 0, 0, ""
	case qNode:
		return anys(f.sorted(collNodes, func(d map[string]any) bool { return d["_key"] == str("key") && d["graphKey"] == str("gk") })), 0, 0, ""
	case qConfigs:
		return anys(f.sorted(collConfigs, func(d map[string]any) bool { return d["workspace"] == str("ws") })), 0, 0, ""
	case qTraverseAny, qTraverseIn, qTraverseOut:
		return f.traverse(q, str("start"), int(b["depth"].(float64)), str("gk")), 0, 0, ""
	case qInsertNode, qInsertEdge:
		coll := collNodes
		if q == qInsertEdge {
			coll = collEdges
		}
		doc, _ := b["doc"].(map[string]any)
		key, _ := doc["_key"].(string)
		if _, dup := f.colls[coll][key]; dup {
			return nil, 409, 1210, "unique constraint violated - in index primary of type primary over '_key'; conflicting key: " + key
		}
		if coll == collEdges && (doc["_from"] == nil || doc["_to"] == nil) {
			return nil, 400, 1233, "edge attribute missing or invalid"
		}
		doc["_id"], doc["_rev"] = coll+"/"+key, "1"
		f.colls[coll][key] = doc
		return []any{clone(doc)}, 0, 0, ""
	case qUpdateNode:
		d, ok := f.colls[collNodes][str("key")]
		if !ok {
			return nil, 404, 1202, "document not found"
		}
		for k, v := range b["patch"].(map[string]any) {
			d[k] = v
		}
		return []any{clone(d)}, 0, 0, ""
	case qDeleteNode:
		if _, ok := f.colls[collNodes][str("key")]; !ok {
			return nil, 404, 1202, "document not found"
		}
		removed := []any{}
		for _, e := range f.sorted(collEdges, func(d map[string]any) bool { return d["_from"] == str("id") || d["_to"] == str("id") }) {
			delete(f.colls[collEdges], e["_key"].(string))
			removed = append(removed, e)
		}
		delete(f.colls[collNodes], str("key"))
		return []any{map[string]any{"removed": removed}}, 0, 0, ""
	case qDeleteEdge:
		d, ok := f.colls[collEdges][str("key")]
		if !ok {
			return nil, 404, 1202, "document not found"
		}
		delete(f.colls[collEdges], str("key"))
		return []any{d}, 0, 0, ""
	case qVectorExact, qVectorApprox:
		return f.vector(q, b), 0, 0, ""
	case qSetEmbeddings:
		var out []any
		for _, u := range b["updates"].([]any) {
			um := u.(map[string]any)
			d, ok := f.colls[collNodes][um["key"].(string)]
			if !ok {
				continue
			}
			d["embedding"], d["embeddingHash"] = um["vector"], um["hash"]
			out = append(out, map[string]any{"key": d["_key"]})
		}
		return out, 0, 0, ""
	case qThreadsSince:
		docs := f.sorted(collThreads, func(d map[string]any) bool {
			ts, _ := d["lastUpdatedTime"].(float64)
			return d["workspace"] == str("ws") && ts > b["since"].(float64)
		})
		sort.SliceStable(docs, func(i, j int) bool {
			return docs[i]["lastUpdatedTime"].(float64) < docs[j]["lastUpdatedTime"].(float64)
		})
		return anys(docs), 0, 0, ""
	case qThread:
		return anys(f.sorted(collThreads, func(d map[string]any) bool { return d["_key"] == str("key") && d["workspace"] == str("ws") })), 0, 0, ""
	case qThreadUpsert:
		key, ts := str("key"), b["ts"].(float64)
		doc := b["doc"].(map[string]any)
		old, ok := f.colls[collThreads][key]
		written := !ok || (old["workspace"] == str("ws") && old["lastUpdatedTime"].(float64) < ts)
		stored := old
		if written {
			doc["_key"], doc["_id"], doc["_rev"] = key, collThreads+"/"+key, "1"
			f.colls[collThreads][key] = doc
			stored = doc
		}
		return []any{map[string]any{"written": written, "stored": stored["lastUpdatedTime"]}}, 0, 0, ""
	}
	return nil, 400, 1501, "query not supported by the fake"
}

func (f *fakeArango) traverse(q, start string, depth int, gk string) []any {
	visited := map[string]bool{start: true}
	frontier := []string{start}
	var out []any
	for d := 1; d <= depth && len(frontier) > 0; d++ {
		var next []string
		for _, id := range frontier {
			for _, e := range f.sorted(collEdges, func(map[string]any) bool { return true }) {
				var other string
				switch {
				case q != qTraverseIn && e["_from"] == id:
					other = e["_to"].(string)
				case q != qTraverseOut && e["_to"] == id:
					other = e["_from"].(string)
				default:
					continue
				}
				if visited[other] {
					continue
				}
				visited[other] = true
				n, ok := f.colls[collNodes][strings.TrimPrefix(other, collNodes+"/")]
				if !ok || n["graphKey"] != gk {
					continue
				}
				out = append(out, map[string]any{"node": clone(n), "edge": e})
				next = append(next, other)
			}
		}
		frontier = next
	}
	return out
}

func (f *fakeArango) vector(q string, b map[string]any) []any {
	qe := b["qe"].([]any)
	minScore := b["min"].(float64)
	limit := int(b["limit"].(float64))
	type hit struct {
		n     map[string]any
		score float64
	}
	var hits []hit
	for _, n := range f.sorted(collNodes, func(map[string]any) bool { return true }) {
		emb, ok := n["embedding"].([]any)
		if !ok {
			continue
		}
		if q == qVectorExact && (n["graphKey"] != b["gk"] || float64(len(emb)) != b["dim"].(float64)) {
			continue
		}
		hits = append(hits, hit{n, cosine(emb, qe)})
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	if q == qVectorApprox {
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
