package arangotest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Stream transactions, as ArangoDB's RocksDB engine runs them, with the semantics
// an approval depends on:
//
//   - POST /_api/transaction/begin declares read, write and exclusive collections
//     and takes a snapshot of the data: the transaction's reads see that snapshot
//     and its own writes, nothing another client writes afterwards;
//   - requests carrying the x-arango-trx-id header run inside it: their writes are
//     invisible to every other request until PUT /_api/transaction/{id} commits
//     them, and DELETE /_api/transaction/{id} discards them;
//   - locks: a transaction holding a collection exclusive makes every other writer
//     of it wait (another transaction's begin, a write query outside any
//     transaction) until it commits or aborts; a transaction writing a collection
//     (not exclusive) makes an exclusive begin wait. Readers never wait. A wait
//     longer than the lock timeout (the begin's lockTimeout, DefaultLockTimeout for
//     a query) fails as ArangoDB does: HTTP 500, errorNum 18 (lock timeout);
//   - a commit whose writes touch a document another client changed since the
//     snapshot fails with HTTP 409, errorNum 1200 (write-write conflict), and
//     nothing of it is kept;
//   - a write to a collection not declared write or exclusive is refused (HTTP
//     400, errorNum 1652), as is a request naming a transaction that is not
//     running (HTTP 404, errorNum 1655).
//
// The Server's own Insert, Update and Delete change the shared data at once,
// whatever lock is held: a test setting the scene, not a client.

// TrxHeader is the header that makes a request part of a stream transaction.
const TrxHeader = "x-arango-trx-id"

// DefaultLockTimeout is how long a write outside any transaction waits for an
// exclusive transaction before it fails with a lock timeout.
const DefaultLockTimeout = 10 * time.Second

// ArangoDB's error numbers for transactions.
const (
	ErrLockTimeout       = 18
	ErrWriteConflict     = 1200
	ErrUnregistered      = 1652
	ErrTransactionAbort  = 1654
	ErrTransactionGone   = 1655
	errCollectionMissing = 1203
)

// Event is a moment of the fake's work a test can act on (SetHook).
type Event struct {
	// Kind is "begin" (a begin request arrived, before its locks are taken),
	// "query" (a query was evaluated, before its answer is sent), "commit" or
	// "abort" (a transaction ended).
	Kind string
	// Trx is the transaction concerned, "" for a query outside any.
	Trx string
	// Query is the query evaluated (Kind "query").
	Query Sent
}

// HookFunc sees events; see SetHook.
type HookFunc func(Event)

// transaction is one stream transaction.
type transaction struct {
	id        string
	status    string // running, committed, aborted
	read      []string
	write     []string
	exclusive []string
	view      map[string]map[string]map[string]any // the snapshot, with the transaction's writes
	base      map[string]map[string]map[string]any // the snapshot as taken
}

// writes reports whether the transaction declared coll for writing.
func (t *transaction) writes(coll string) bool {
	return slices.Contains(t.write, coll) || slices.Contains(t.exclusive, coll)
}

// SetHook makes f see every Event; nil turns it off. f runs without the server's
// lock, so it may call the Server and send it requests (which may wait for a lock
// f's trigger holds); the request that triggered it waits for f to return.
func (s *Server) SetHook(f HookFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hook = f
}

func (s *Server) fire(ev Event) {
	s.mu.Lock()
	h := s.hook
	s.mu.Unlock()
	if h != nil {
		h(ev)
	}
}

// LockWaiters counts requests waiting for a collection lock now.
func (s *Server) LockWaiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiters
}

// Transactions returns the status of every transaction begun so far, by id.
func (s *Server) Transactions() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for id, t := range s.trxs {
		out[id] = t.status
	}
	return out
}

// writesOf lists the collections a query kind writes.
func writesOf(k kind) []string {
	switch k {
	case kInsertNode, kUpdateNode, kSetEmbeddings:
		return []string{Nodes}
	case kInsertEdge, kDeleteEdge:
		return []string{Edges}
	case kDeleteNode:
		return []string{Nodes, Edges}
	case kThreadUpsert:
		return []string{Threads}
	case kPutConfig, kDelConfig:
		return []string{Configs}
	case kInsertGraph, kRemoveGraph:
		return []string{Graphs}
	case kRemoveGraphNodes:
		return []string{Nodes}
	case kInsertHTMLClass, kRemoveHTMLClass:
		return []string{HTMLClasses}
	}
	return nil
}

// run evaluates a known query, inside the transaction trx when it is not "": on
// the transaction's view, else on the shared data once no exclusive transaction
// holds what it writes. The caller holds s.mu.
func (s *Server) run(trx string, k kind, b map[string]any) (res []any, status, num int, msg string) {
	if trx == "" {
		if colls := writesOf(k); len(colls) > 0 {
			if status, num, msg := s.waitFor(time.Now().Add(DefaultLockTimeout), func() bool { return s.writable(colls, nil) }); status != 0 {
				return nil, status, num, msg
			}
		}
		return s.exec(k, b)
	}
	t, ok := s.trxs[trx]
	if !ok || t.status != "running" {
		return nil, 404, ErrTransactionGone, "transaction '" + trx + "' not found"
	}
	for _, c := range writesOf(k) {
		if !t.writes(c) {
			return nil, 400, ErrUnregistered, "collection '" + c + "' is not registered for writing in the transaction"
		}
	}
	shared := s.colls
	s.colls = t.view
	defer func() { s.colls = shared }()
	return s.exec(k, b)
}

// writable reports whether no running transaction but self holds any of colls
// exclusive. The caller holds s.mu.
func (s *Server) writable(colls []string, self *transaction) bool {
	for _, t := range s.trxs {
		if t == self || t.status != "running" {
			continue
		}
		for _, c := range colls {
			if slices.Contains(t.exclusive, c) {
				return false
			}
		}
	}
	return true
}

// lockable reports whether t can take its locks: no other running transaction
// writes what it holds exclusive, and none holds exclusive what it writes. The
// caller holds s.mu.
func (s *Server) lockable(t *transaction) bool {
	for _, o := range s.trxs {
		if o == t || o.status != "running" {
			continue
		}
		for _, c := range t.exclusive {
			if o.writes(c) {
				return false
			}
		}
	}
	return s.writable(t.write, t)
}

// waitFor waits, releasing s.mu meanwhile, until ok or the deadline: then it
// answers ArangoDB's lock timeout. The caller holds s.mu.
func (s *Server) waitFor(deadline time.Time, ok func() bool) (status, num int, msg string) {
	for !ok() {
		left := time.Until(deadline)
		if left <= 0 {
			return 500, ErrLockTimeout, "timeout waiting to lock collection"
		}
		wake := time.AfterFunc(left, func() {
			s.mu.Lock()
			s.locks.Broadcast()
			s.mu.Unlock()
		})
		s.waiters++
		s.locks.Wait()
		s.waiters--
		wake.Stop()
	}
	return 0, 0, ""
}

// serveTransaction answers /_api/transaction/begin and /_api/transaction/{id}.
func (s *Server) serveTransaction(w http.ResponseWriter, r *http.Request, rest string) {
	id := strings.TrimPrefix(strings.TrimPrefix(rest, "_api/transaction"), "/")
	switch {
	case id == "begin" && r.Method == http.MethodPost:
		s.begin(w, r)
	case id != "" && id != "begin" && r.Method == http.MethodGet:
		s.mu.Lock()
		status := ""
		if t, ok := s.trxs[id]; ok {
			status = t.status
		}
		s.mu.Unlock()
		if status == "" {
			arangoErr(w, 404, ErrTransactionGone, "transaction '"+id+"' not found")
			return
		}
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"id": id, "status": status}})
	case id != "" && id != "begin" && (r.Method == http.MethodPut || r.Method == http.MethodDelete):
		s.end(w, id, r.Method == http.MethodPut)
	default:
		arangoErr(w, 405, 405, "method not allowed")
	}
}

func (s *Server) begin(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Collections map[string]json.RawMessage `json:"collections"`
		LockTimeout *float64                   `json:"lockTimeout"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		arangoErr(w, 400, 600, "malformed JSON")
		return
	}
	t := &transaction{status: "running"}
	for name, dst := range map[string]*[]string{"read": &t.read, "write": &t.write, "exclusive": &t.exclusive} {
		raw, ok := req.Collections[name]
		if !ok {
			continue
		}
		var one string
		if json.Unmarshal(raw, &one) == nil {
			*dst = []string{one}
		} else if err := json.Unmarshal(raw, dst); err != nil {
			arangoErr(w, 400, 10, "collections."+name+" must be a string or an array of strings")
			return
		}
	}
	wait := DefaultLockTimeout
	if req.LockTimeout != nil && *req.LockTimeout > 0 {
		wait = time.Duration(*req.LockTimeout * float64(time.Second))
	}
	s.fire(Event{Kind: "begin"})

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range slices.Concat(t.read, t.write, t.exclusive) {
		if _, ok := s.colls[c]; !ok {
			arangoErr(w, 404, errCollectionMissing, "collection or view not found: "+c)
			return
		}
	}
	if status, num, msg := s.waitFor(time.Now().Add(wait), func() bool { return s.lockable(t) }); status != 0 {
		arangoErr(w, status, num, msg)
		return
	}
	s.nextID++
	t.id = "trx" + strconv.Itoa(s.nextID)
	t.view, t.base = cloneColls(s.colls), cloneColls(s.colls)
	s.trxs[t.id] = t
	writeJSON(w, 201, map[string]any{"error": false, "code": 201, "result": map[string]any{"id": t.id, "status": "running"}})
}

// end commits (or aborts) a running transaction and wakes the waiting writers.
func (s *Server) end(w http.ResponseWriter, id string, commit bool) {
	s.mu.Lock()
	t, ok := s.trxs[id]
	switch {
	case !ok:
		s.mu.Unlock()
		arangoErr(w, 404, ErrTransactionGone, "transaction '"+id+"' not found")
		return
	case t.status != "running" && (commit != (t.status == "committed")):
		s.mu.Unlock()
		arangoErr(w, 409, ErrTransactionAbort, "transaction '"+id+"' is already "+t.status)
		return
	case t.status != "running":
		s.mu.Unlock()
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"id": id, "status": t.status}})
		return
	}
	conflict := commit && !s.publish(t)
	t.status = "committed"
	if !commit || conflict {
		t.status = "aborted"
	}
	t.view, t.base = nil, nil
	status := t.status
	s.locks.Broadcast()
	s.mu.Unlock()
	if conflict {
		arangoErr(w, 409, ErrWriteConflict, "write-write conflict")
	} else {
		writeJSON(w, 200, map[string]any{"error": false, "code": 200, "result": map[string]any{"id": id, "status": status}})
	}
	kind := "commit"
	if status == "aborted" {
		kind = "abort"
	}
	s.fire(Event{Kind: kind, Trx: id})
}

// publish makes the transaction's writes the shared data, unless one of the
// documents it wrote was changed by another client since its snapshot: then
// nothing is published and it reports false. The caller holds s.mu.
func (s *Server) publish(t *transaction) bool {
	type change struct {
		coll, key string
		doc       map[string]any // nil: removed
	}
	var changes []change
	for _, c := range slices.Concat(t.write, t.exclusive) {
		keys := map[string]bool{}
		for k := range t.view[c] {
			keys[k] = true
		}
		for k := range t.base[c] {
			keys[k] = true
		}
		for k := range keys {
			now, was := t.view[c][k], t.base[c][k]
			if reflect.DeepEqual(now, was) {
				continue
			}
			if cur := s.colls[c][k]; !reflect.DeepEqual(cur, was) {
				return false
			}
			changes = append(changes, change{c, k, now})
		}
	}
	for _, ch := range changes {
		if ch.doc == nil {
			delete(s.colls[ch.coll], ch.key)
		} else {
			s.coll(ch.coll)[ch.key] = ch.doc
		}
	}
	return true
}

func cloneColls(colls map[string]map[string]map[string]any) map[string]map[string]map[string]any {
	out := make(map[string]map[string]map[string]any, len(colls))
	for name, docs := range colls {
		c := make(map[string]map[string]any, len(docs))
		for k, d := range docs {
			c[k] = clone(d)
		}
		out[name] = c
	}
	return out
}
