package arango_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/undo"
	"github.com/nodius/nodius-ai/internal/fault"
)

// deleteTransform is the deletion of transform as the person was shown it: with
// the edges it has now (e2 and e3).
func deleteTransform(ctx context.Context, t *testing.T, src *arango.Source) datasource.Action {
	t.Helper()
	edges, err := src.Edges(ctx, "g1", "")
	if err != nil {
		t.Fatal(err)
	}
	var shown []datasource.Edge
	for _, e := range edges {
		if e.Source == "transform" || e.Target == "transform" {
			shown = append(shown, e)
		}
	}
	return datasource.Action{Type: datasource.DeleteNodeAction,
		DeleteNode: &datasource.DeleteNodePayload{NodeKey: "transform", RemovedEdges: shown}}
}

// edgeToTransform is another client's change: an edge e9 from root to transform.
var edgeToTransform = datasource.Action{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{
	EdgeKey: "e9", SourceKey: "root", SourceHandle: "0", TargetKey: "transform", TargetHandle: "0", Sheet: "0"}}

// otherClient opens a second Source on the same database: another nodius-ai.
func otherClient(ctx context.Context, t *testing.T, h *harness, lockWait time.Duration) *arango.Source {
	t.Helper()
	cfg := h.cfg
	cfg.LockWait = lockWait
	src, err := arango.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// noDanglingEdges fails when an edge of g1 joins a node that is not there.
func noDanglingEdges(t *testing.T, f *arangotest.Server) {
	t.Helper()
	for _, e := range f.Docs(arangotest.Edges) {
		if e["graphKey"] != "g1" {
			continue
		}
		for _, end := range []string{"_from", "_to"} {
			key := strings.TrimPrefix(e[end].(string), arangotest.Nodes+"/")
			if f.Doc(arangotest.Nodes, key) == nil {
				t.Errorf("edge %s dangles: %s %s is gone", e["_key"], end, key)
			}
		}
	}
}

// noTransactionLeft fails when a transaction is still running (holding its locks).
func noTransactionLeft(t *testing.T, f *arangotest.Server) {
	t.Helper()
	for id, status := range f.Transactions() {
		if status == "running" {
			t.Errorf("transaction %s is still running", id)
		}
	}
}

// Another client adds an edge to transform while an approval of its deletion has
// checked the graph and not yet written: the check, the delete and the commit are
// one exclusive transaction, so the other writer waits for it and then finds
// transform gone. Nothing the person did not see is deleted, and no edge is left
// pointing at the deleted node. (Checked first and written after, outside one
// transaction, the deletion took e9 unseen; in a transaction that is not exclusive,
// snapshot isolation let both commit and e9 dangled.)
func TestApplyHoldsTheGraphBetweenCheckAndWrite(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	del := deleteTransform(ctx, t, h.src)
	other := otherClient(ctx, t, h, 0)

	var armed atomic.Bool
	armed.Store(true)
	wrote := make(chan error, 1)
	h.fake.SetHook(func(ev arangotest.Event) {
		// Right after the approval read the edges of g1 for its check.
		if ev.Kind != "query" || !strings.Contains(ev.Query.Query, "FOR e IN nodius_edges FILTER e.graphKey == @gk") ||
			!armed.CompareAndSwap(true, false) {
			return
		}
		go func() {
			_, err := datasource.Apply(ctx, other, "g1", edgeToTransform)
			wrote <- err
		}()
		// Go on once the writer is waiting for the lock (or, without one, done).
		deadline := time.Now().Add(5 * time.Second)
		for h.fake.LockWaiters() == 0 && len(wrote) == 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
	})

	if _, err := datasource.Apply(ctx, h.src, "g1", del, datasource.Expect(del)); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if armed.Load() {
		t.Fatal("the approval never read the edges")
	}
	werr := <-wrote
	if !datasource.IsConflict(werr) || !errors.Is(werr, datasource.ErrNotFound) || !strings.Contains(werr.Error(), "transform") {
		t.Errorf("the other writer: %v, want transform not found (it waited for the deletion)", werr)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-transform") != nil {
		t.Error("transform was not deleted")
	}
	if h.fake.Doc(arangotest.Edges, "g1-e9") != nil {
		t.Error("e9 was created to a node being deleted")
	}
	for _, key := range []string{"g1-e1", "g1-root", "g1-fetch-api", "g1-out"} {
		if h.fake.Doc(arangotest.Nodes, key) == nil && h.fake.Doc(arangotest.Edges, key) == nil {
			t.Errorf("%s was deleted with transform", key)
		}
	}
	noDanglingEdges(t, h.fake)
	noTransactionLeft(t, h.fake)
}

// Another client adds an edge to transform just before the approval's transaction
// starts: the check inside the transaction sees it, nothing is deleted, and the
// edge is intact.
func TestApplySeesAWriterThatCameFirst(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	del := deleteTransform(ctx, t, h.src)
	other := otherClient(ctx, t, h, 0)

	var armed atomic.Bool
	armed.Store(true)
	var werr error
	h.fake.SetHook(func(ev arangotest.Event) {
		if ev.Kind == "begin" && armed.CompareAndSwap(true, false) {
			_, werr = datasource.Apply(ctx, other, "g1", edgeToTransform)
		}
	})
	_, err := datasource.Apply(ctx, h.src, "g1", del, datasource.Expect(del))
	if werr != nil {
		t.Fatalf("the other writer: %v", werr)
	}
	if !datasource.IsConflict(err) || !errors.Is(err, datasource.ErrGraphChanged) || !strings.Contains(err.Error(), "e9: root:0 → transform:0") {
		t.Fatalf("apply: %v, want the graph changed (e9)", err)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-transform") == nil || h.fake.Doc(arangotest.Edges, "g1-e9") == nil {
		t.Fatal("transform or e9 was deleted")
	}
	for _, key := range []string{"g1-e2", "g1-e3"} {
		if h.fake.Doc(arangotest.Edges, key) == nil {
			t.Errorf("%s was deleted although the apply was refused", key)
		}
	}
	noTransactionLeft(t, h.fake)
}

// A batch that fails halfway leaves nothing written: the steps before the failure
// are discarded with the transaction, whether the graph refused the step (a
// conflict, for the model) or the database failed (for the person).
func TestApplyBatchIsAllOrNothing(t *testing.T) {
	t.Parallel()
	create := func(key string) datasource.Action {
		return datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{
			NodeKey: key, TypeKey: "api-call", Sheet: "0", PosX: 1, PosY: 2}}
	}
	link := datasource.Action{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{
		EdgeKey: "new-edge", SourceKey: "root", SourceHandle: "0", TargetKey: "n1", TargetHandle: "0", Sheet: "0"}}
	update := func(key string) datasource.Action {
		return datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
			NodeKey: key, Changes: map[string]any{"process": "x"}}}
	}
	batch := func(steps ...datasource.Action) datasource.Action {
		return datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: steps}}
	}
	tests := []struct {
		name     string
		action   datasource.Action
		fail     arangotest.QueryFailFunc
		conflict bool
		want     string
	}{
		{"a step on a node that is not there", batch(create("n1"), link, update("transform"), update("missing")), nil, true, "node not found: missing"},
		{"a key that is taken", batch(create("n1"), link, create("root")), nil, true, "already exists"},
		{"the database failing on the third write", batch(create("n1"), link, create("n2")),
			func(q string, b map[string]any) (int, int, bool) {
				d, _ := b["doc"].(map[string]any)
				return 503, 503, d != nil && d["_key"] == "g1-n2"
			}, false, "503"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var h *harness
			if tc.fail != nil {
				h = fakeOnly(t)
				h.fake.FailQueries(tc.fail)
			} else {
				h = newHarness(t, 2) // also against a real ArangoDB
			}
			ctx := ctxT(t)
			before, err := h.src.Node(ctx, "g1", "transform")
			if err != nil {
				t.Fatal(err)
			}
			_, err = datasource.Apply(ctx, h.src, "g1", tc.action)
			if err == nil || datasource.IsConflict(err) != tc.conflict || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("apply: %v (conflict %v), want %q (conflict %v)", err, datasource.IsConflict(err), tc.want, tc.conflict)
			}
			for _, key := range []string{"n1", "n2"} {
				if _, err := h.src.Node(ctx, "g1", key); !errors.Is(err, datasource.ErrNotFound) {
					t.Errorf("node %s was kept from a batch that failed (%v)", key, err)
				}
			}
			edges, err := h.src.Edges(ctx, "g1", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range edges {
				if e.Key == "new-edge" {
					t.Error("the edge was kept from a batch that failed")
				}
			}
			if after, _ := h.src.Node(ctx, "g1", "transform"); after.Process != before.Process {
				t.Errorf("transform was updated by a batch that failed: %v", after.Process)
			}
			if h.fake != nil {
				noTransactionLeft(t, h.fake)
			}
		})
	}
}

// Another writer holding the graph collections longer than the lock wait: the
// apply gives up with an error wrapping datasource.ErrLocked (the approval keeps
// the proposal pending and says to try again), nothing is written, and once the
// other writer is done the same apply goes through.
func TestApplyGivesUpOnCollectionsLockedTooLong(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	held, err := h.src.Database().BeginTransaction(ctx, arangodb.TransactionCollections{
		Exclusive: []string{arangotest.Nodes, arangotest.Edges}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	src := otherClient(ctx, t, h, 300*time.Millisecond)
	add := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{
		NodeKey: "n1", TypeKey: "api-call", Sheet: "0"}}
	_, err = datasource.Apply(ctx, src, "g1", add)
	if !errors.Is(err, datasource.ErrLocked) || datasource.IsConflict(err) || !strings.Contains(err.Error(), "stayed locked by another writer for 300ms") {
		t.Fatalf("apply while locked: %v", err)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-n1") != nil {
		t.Fatal("the node was written although the apply gave up")
	}
	if err := held.Abort(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := datasource.Apply(ctx, src, "g1", add); err != nil {
		t.Fatalf("apply once the lock is free: %v", err)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-n1") == nil {
		t.Fatal("the node was not written")
	}
	noTransactionLeft(t, h.fake)
}

// A write-write conflict inside the transaction (another writer got there first)
// is reported like a lock held too long: ErrLocked, not a classified server error
// and not a changed graph, and nothing is written.
func TestApplyReportsAWriteConflictAsLocked(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	h.fake.FailQueries(func(q string, _ map[string]any) (int, int, bool) {
		return 409, arangotest.ErrWriteConflict, strings.HasPrefix(q, "UPDATE")
	})
	a := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
		{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n1", TypeKey: "api-call", Sheet: "0"}},
		{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: 5, PosY: 5}},
	}}}
	_, err := datasource.Apply(ctx, h.src, "g1", a)
	if _, classified := fault.As(err); !errors.Is(err, datasource.ErrLocked) || classified || datasource.IsConflict(err) ||
		!strings.Contains(err.Error(), "write-write conflict") {
		t.Fatalf("apply: %v", err)
	}
	if h.fake.Doc(arangotest.Nodes, "g1-n1") != nil {
		t.Fatal("n1 was written")
	}
	noTransactionLeft(t, h.fake)
}

// The transaction holds the collections of every graph exclusive, so it reads only
// what the check and the recorder need (a node, one node's edges, an edge), never a
// whole graph: on a large graph the lock stays short.
func TestApplyReadsOnlyWhatItChecks(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	del := deleteTransform(ctx, t, h.src)
	e1, err := h.src.Edges(ctx, "g1", "")
	if err != nil {
		t.Fatal(err)
	}
	a := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{del,
		{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e1", Edge: &e1[0]}},
		{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: "root",
			Changes: map[string]any{"process": "x"}, Before: map[string]any{"process": ""}}}}}}
	before := len(h.fake.Queries())
	if _, err := datasource.Apply(ctx, h.src, "g1", a, datasource.Expect(a), datasource.Record(undo.NewRecorder())); err != nil {
		t.Fatal(err)
	}
	for _, q := range h.fake.Queries()[before:] {
		if strings.HasSuffix(q.Query, "FILTER n.graphKey == @gk RETURN n") || strings.HasSuffix(q.Query, "FILTER e.graphKey == @gk RETURN e") {
			t.Errorf("the apply read a whole graph: %s", q.Query)
		}
	}
}

// Undoing a change is all or nothing: a reversal that fails partway (the database
// failing on its second deletion) leaves the graph as it was, and the same undo
// run again reverses all of it.
func TestUndoIsAllOrNothing(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	create := func(key string) datasource.Action {
		return datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{
			NodeKey: key, TypeKey: "api-call", Sheet: "0", PosX: 1, PosY: 2}}
	}
	a := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{create("n1"), create("n2")}}}
	rec := undo.NewRecorder()
	if _, err := datasource.Apply(ctx, h.src, "g1", a, datasource.Record(rec)); err != nil {
		t.Fatal(err)
	}
	rev, err := rec.Reversal()
	if err != nil {
		t.Fatal(err)
	}
	failing := true
	h.fake.FailQueries(func(q string, b map[string]any) (int, int, bool) {
		return 503, 503, failing && strings.Contains(q, "REMOVE") && strings.Contains(fmt.Sprint(b), "g1-n1")
	})
	if _, err := undo.Apply(ctx, h.src, "g1", rev); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("undo with the database failing: %v", err)
	}
	for _, key := range []string{"n1", "n2"} {
		if _, err := h.src.Node(ctx, "g1", key); err != nil {
			t.Errorf("%s is gone after an undo that failed: %v", key, err)
		}
	}
	noTransactionLeft(t, h.fake)
	failing = false
	if _, err := undo.Apply(ctx, h.src, "g1", rev); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"n1", "n2"} {
		if _, err := h.src.Node(ctx, "g1", key); !errors.Is(err, datasource.ErrNotFound) {
			t.Errorf("%s is still there after the undo (%v)", key, err)
		}
	}
}

// An undo during which the database fails to read a node says so, and changes
// nothing: the node the failed read did not see is not taken for one deleted since
// (a drift, which would tell the person the graph changed when it did not).
func TestUndoWhenAReadFails(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	if _, err := datasource.Apply(ctx, h.src, "g1", datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{
		NodeKey: "n1", TypeKey: "api-call", Sheet: "0", PosX: 1, PosY: 2}}); err != nil {
		t.Fatal(err)
	}
	a := datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{
		NodeKey: "n1", Changes: map[string]any{"process": "x = 1"}}}
	rec := undo.NewRecorder()
	if _, err := datasource.Apply(ctx, h.src, "g1", a, datasource.Record(rec)); err != nil {
		t.Fatal(err)
	}
	rev, err := rec.Reversal()
	if err != nil {
		t.Fatal(err)
	}
	h.fake.FailQueries(func(q string, b map[string]any) (int, int, bool) {
		return 503, 503, strings.HasPrefix(q, "FOR n IN nodius_nodes") && strings.Contains(fmt.Sprint(b), "g1-n1")
	})
	_, err = undo.Apply(ctx, h.src, "g1", rev)
	if err == nil || datasource.IsConflict(err) || !strings.Contains(err.Error(), "503") {
		t.Fatalf("undo with the database failing to read the node: %v, want the failed read (503), not a conflict", err)
	}
	noTransactionLeft(t, h.fake)
	h.fake.FailQueries(nil)
	if n, err := h.src.Node(ctx, "g1", "n1"); err != nil || n.Process != "x = 1" {
		t.Errorf("after the failed undo: %+v, %v; want the change still there", n, err)
	}
}
