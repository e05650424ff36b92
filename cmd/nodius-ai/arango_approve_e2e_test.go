package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// arangoDemo stores the demo graph in a fake ArangoDB (workspace ws), written
// through the arango source itself, and returns the fake and a client of it.
func arangoDemo(ctx context.Context, t *testing.T) (*arangotest.Server, *arango.Source) {
	t.Helper()
	fa := arangotest.New(t)
	snap, err := demo.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	fa.Insert(arangotest.Graphs, map[string]any{"_key": demo.GraphKey, "workspace": "ws", "name": snap.Graph.Name, "sheets": snap.Graph.Sheets})
	// The graph's node types first: ArangoDB, as every source, refuses a node of a
	// type the graph does not have.
	for _, c := range snap.Configs {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		doc["workspace"] = "ws"
		fa.Insert(arangotest.Configs, doc)
	}
	cfg, err := arango.ParseURL(fa.URL("ws"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := arango.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	for _, n := range snap.Nodes {
		if _, err := src.CreateNode(ctx, demo.GraphKey, n); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range snap.Edges {
		if _, err := src.CreateEdge(ctx, demo.GraphKey, e); err != nil {
			t.Fatal(err)
		}
	}
	return fa, src
}

// Over ArangoDB, approve checks what the person was shown and deletes in one
// exclusive stream transaction. Another client holds the graph collections when
// approve has claimed the decision, adds an edge to fetch-api and commits:
// approve, which waited for the lock, sees the edge, deletes nothing, exits 1 with
// "approved but not applied", and the thread and the model say so, as for a
// file: graph. (Checked before and written after, the deletion took the new edge
// with it.)
func TestApproveOnArangoSeesAWriterBetweenItsChecksAndTheWrite(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fa, client := arangoDemo(ctx, t)
	e := newEnv(t, proposeDeleteFetchAPI, llmtest.Turn{Text: "The graph changed; I will look again."})
	e.vars = append(e.vars, "NODIUS_AI_SOURCE="+fa.URL("ws"))
	thread := e.askProposal("--graph", demo.GraphKey)

	held, err := client.Database().BeginTransaction(ctx, arangodb.TransactionCollections{
		Exclusive: []string{arangotest.Nodes, arangotest.Edges}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, done := startApprove(t, e, thread, "--proposal", "del1")
	// approve has checked the graph and claimed the decision: it waits for the lock.
	deadline := time.Now().Add(30 * time.Second)
	for fa.LockWaiters() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("approve did not wait for the lock; outcome %q", e.proposalOutcome(thread))
		}
		select {
		case r := <-done:
			t.Fatalf("approve ended before taking the lock: %d %s", r.code, r.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if o := e.proposalOutcome(thread); o != "claimed" {
		t.Fatalf("approve waits for the lock with the decision %q, want claimed", o)
	}
	var insert string
	for _, q := range arango.Queries() {
		if strings.HasPrefix(q, "INSERT @doc INTO nodius_edges") {
			insert = q
		}
	}
	cur, err := held.Query(ctx, insert, &arangodb.QueryOptions{BindVars: map[string]any{"doc": map[string]any{
		"_key": "demo-e9", "graphKey": demo.GraphKey, "sheet": "0", "sourceHandle": "0", "targetHandle": "0",
		"_from": "nodius_nodes/demo-sort-stats", "_to": "nodius_nodes/demo-fetch-api"}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = cur.Close()
	if err := held.Commit(ctx, nil); err != nil {
		t.Fatal(err)
	}

	r := <-done
	if r.code != 1 || !strings.Contains(r.stderr, "approved but not applied") || !strings.Contains(r.stderr, "e9: sort-stats:0 → fetch-api:0") {
		t.Fatalf("approve: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := client.Node(ctx, demo.GraphKey, "fetch-api"); err != nil {
		t.Fatalf("fetch-api: %v", err)
	}
	edges, err := client.Edges(ctx, demo.GraphKey, "")
	if err != nil {
		t.Fatal(err)
	}
	of := 0
	for _, x := range edges {
		if x.Source == "fetch-api" || x.Target == "fetch-api" {
			of++
		}
	}
	if of != 4 {
		t.Fatalf("fetch-api has %d edges, want its 3 and e9", of)
	}
	s := e.show(thread)
	if p := s.Proposals[0]; p.Outcome != "not_applied" || !strings.Contains(p.ApplyError, "e9") {
		t.Fatalf("thread: %+v", p)
	}
	reqs := e.srv.ChatRequests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Body), "not_applied") {
		t.Fatalf("the model was not told: %s", last.Body)
	}
	for id, status := range fa.Transactions() {
		if status == "running" {
			t.Errorf("transaction %s still running", id)
		}
	}
}

// Another client holds the graph collections longer than approve waits
// (graph_lock_wait): approve says so in one sentence and exits 1, nothing is
// applied, the proposal stays pending and the model is not called; once the
// collections are free, approving deletes fetch-api once.
func TestApproveOnArangoGivesUpOnCollectionsLockedTooLong(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fa, client := arangoDemo(ctx, t)
	e := newEnv(t, proposeDeleteFetchAPI, llmtest.Turn{Text: "Deleted."})
	e.vars = append(e.vars, "NODIUS_AI_SOURCE="+fa.URL("ws"))
	e.writeConfig("graph_lock_wait = \"700ms\"\n")
	thread := e.askProposal("--graph", demo.GraphKey)
	requests := len(e.srv.ChatRequests())

	held, err := client.Database().BeginTransaction(ctx, arangodb.TransactionCollections{
		Exclusive: []string{arangotest.Nodes, arangotest.Edges}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := e.run("", "approve", thread)
	if r.code != 1 || !strings.Contains(r.stderr, "stayed locked by another writer for 700ms") ||
		!strings.Contains(r.stderr, "the proposal is still pending") || strings.Contains(r.stderr, arangotest.Password) {
		t.Fatalf("approve while locked: exit %d\n%s", r.code, r.stderr)
	}
	if s := e.show(thread); s.Proposals[0].Decision != "pending" {
		t.Fatalf("the proposal is %q after a lock timeout, want pending", s.Proposals[0].Decision)
	}
	if n := len(e.srv.ChatRequests()); n != requests {
		t.Fatalf("the model was called after a lock timeout (%d requests, want %d)", n, requests)
	}
	if _, err := client.Node(ctx, demo.GraphKey, "fetch-api"); err != nil {
		t.Fatalf("fetch-api: %v", err)
	}
	if err := held.Abort(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "approve", thread); r.code != 0 {
		t.Fatalf("approve once the collections are free: %d %s", r.code, r.stderr)
	}
	if _, err := client.Node(ctx, demo.GraphKey, "fetch-api"); !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("fetch-api after the approval: %v", err)
	}
}
