package arangotest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"
	"github.com/arangodb/go-driver/v2/arangodb/shared"

	"github.com/nodius/nodius-ai/datasource/arango"
)

// fixedQuery returns the query of package arango that starts with prefix.
func fixedQuery(t *testing.T, prefix string) string {
	t.Helper()
	for _, q := range arango.Queries() {
		if strings.HasPrefix(q, prefix) {
			return q
		}
	}
	t.Fatalf("no query starts with %q", prefix)
	return ""
}

// The fake's stream transactions keep what an approval relies on: writes inside
// one are invisible to others until the commit and gone after an abort; a
// transaction holding a collection exclusive makes other writers wait until it
// ends, or fail with ArangoDB's lock timeout; a commit over a document another
// client changed meanwhile is a write-write conflict.
func TestStreamTransactions(t *testing.T) {
	t.Parallel()
	f := New(t)
	f.Insert(Nodes, map[string]any{"_key": "g-a", "graphKey": "g", "process": "old"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := arango.ParseURL(f.URL("ws"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := arango.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	db := src.Database()
	insert := fixedQuery(t, "INSERT @doc INTO nodius_nodes")
	update := fixedQuery(t, "UPDATE {_key: @key} WITH @patch IN nodius_nodes")
	read := fixedQuery(t, "FOR n IN nodius_nodes FILTER n._key == @key")
	run := func(q arangodb.DatabaseQuery, query string, bind map[string]any) ([]map[string]any, error) {
		cur, err := q.Query(ctx, query, &arangodb.QueryOptions{BindVars: bind})
		if err != nil {
			return nil, err
		}
		defer cur.Close()
		var out []map[string]any
		for {
			var d map[string]any
			if _, err := cur.ReadDocument(ctx, &d); shared.IsNoMoreDocuments(err) {
				return out, nil
			} else if err != nil {
				return nil, err
			}
			out = append(out, d)
		}
	}
	begin := func(cols arangodb.TransactionCollections, wait float64) (arangodb.Transaction, error) {
		return db.BeginTransaction(ctx, cols, &arangodb.BeginTransactionOptions{LockTimeout: wait})
	}
	exclusive := arangodb.TransactionCollections{Exclusive: []string{Nodes}}

	// Invisible until the commit; the transaction reads its own write.
	tx, err := begin(exclusive, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(tx, insert, map[string]any{"doc": map[string]any{"_key": "g-b", "graphKey": "g"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := run(tx, read, map[string]any{"key": "g-b", "gk": "g"}); len(got) != 1 {
		t.Fatal("the transaction does not see its own write")
	}
	if f.Doc(Nodes, "g-b") != nil {
		t.Fatal("a write is visible before the commit")
	}
	if got, _ := run(db, read, map[string]any{"key": "g-a", "gk": "g"}); len(got) != 1 {
		t.Fatal("a reader waited for the exclusive transaction")
	}
	// Another writer waits for the commit, then writes.
	done := make(chan error, 1)
	go func() {
		_, err := run(db, update, map[string]any{"key": "g-a", "patch": map[string]any{"process": "other"}})
		done <- err
	}()
	for f.LockWaiters() == 0 {
		select {
		case err := <-done:
			t.Fatalf("a writer did not wait for the exclusive transaction: %v", err)
		case <-time.After(2 * time.Millisecond):
		}
	}
	// Another exclusive transaction gives up after its lock timeout.
	if _, err := begin(exclusive, 0.2); !shared.IsArangoErrorWithErrorNum(err, ErrLockTimeout) {
		t.Fatalf("begin while locked: %v, want a lock timeout", err)
	}
	if err := tx.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil || f.Doc(Nodes, "g-b") == nil || f.Doc(Nodes, "g-a")["process"] != "other" {
		t.Fatalf("after the commit: %v, b %v, a %v", err, f.Doc(Nodes, "g-b"), f.Doc(Nodes, "g-a"))
	}

	// Discarded on abort.
	tx, err = begin(exclusive, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(tx, insert, map[string]any{"doc": map[string]any{"_key": "g-c", "graphKey": "g"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Abort(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if f.Doc(Nodes, "g-c") != nil {
		t.Fatal("an aborted write was kept")
	}
	if _, err := run(tx, read, map[string]any{"key": "g-a", "gk": "g"}); !shared.IsArangoErrorWithErrorNum(err, ErrTransactionGone) {
		t.Fatalf("a query in an aborted transaction: %v", err)
	}

	// Not exclusive: snapshot isolation, and a write-write conflict at the commit.
	tx, err = begin(arangodb.TransactionCollections{Write: []string{Nodes}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(db, update, map[string]any{"key": "g-a", "patch": map[string]any{"process": "outside"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := run(tx, read, map[string]any{"key": "g-a", "gk": "g"}); len(got) != 1 || got[0]["process"] != "other" {
		t.Fatalf("the transaction reads %v, want its snapshot", got)
	}
	if _, err := run(tx, update, map[string]any{"key": "g-a", "patch": map[string]any{"process": "inside"}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx, nil); !shared.IsArangoErrorWithErrorNum(err, ErrWriteConflict) {
		t.Fatalf("commit over a changed document: %v, want a write-write conflict", err)
	}
	if p := f.Doc(Nodes, "g-a")["process"]; p != "outside" {
		t.Fatalf("process = %v after a conflicting commit", p)
	}
	// A write to a collection the transaction did not declare is refused.
	tx, err = begin(arangodb.TransactionCollections{Read: []string{Nodes}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(tx, insert, map[string]any{"doc": map[string]any{"_key": "g-d", "graphKey": "g"}}); !shared.IsArangoErrorWithErrorNum(err, ErrUnregistered) {
		t.Fatalf("an undeclared write: %v", err)
	}
	_ = tx.Abort(ctx, nil)
	for id, status := range f.Transactions() {
		if status == "running" {
			t.Errorf("transaction %s still running", id)
		}
	}
}

// Every query of package arango that writes is known to write what it writes, so
// that it waits for an exclusive transaction and is refused in a transaction that
// did not declare the collection: a new write query must be added to writesOf.
func TestEveryWriteQueryTakesItsLock(t *testing.T) {
	t.Parallel()
	kinds, err := classify(arango.Queries())
	if err != nil {
		t.Fatal(err)
	}
	for q, k := range kinds {
		writes := false
		for _, w := range []string{"INSERT ", "UPDATE ", "REMOVE ", "UPSERT ", "REPLACE "} {
			writes = writes || strings.Contains(q, w)
		}
		if writes != (len(writesOf(k)) > 0) {
			t.Errorf("query writes %v, but the fake locks %v for it: %s", writes, writesOf(k), q)
		}
	}
}
