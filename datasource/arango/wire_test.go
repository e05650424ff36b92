package arango_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/internal/fault"
)

// Tests of what goes over the wire; they need the fake server.

func fakeOnly(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, 2)
	if h.fake == nil {
		t.Skip("wire-level test: runs against the fake server only")
	}
	return h
}

func TestQueriesUseBindVariablesOnly(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	src := h.src
	evil := `x" || true || "' RETURN 1 //`
	evilKey := `x"||true||"'RETURN_1` // passes the key rules, so it reaches the insert
	_, _ = src.Graph(ctx, evil)
	_, _ = src.Node(ctx, "g1", evil)
	_, _ = src.Nodes(ctx, "g1", evil)
	_, _ = src.Edges(ctx, "g1", evil)
	_, _ = src.Search(ctx, "g1", evil, 5, []float32{1, 0})
	_, _ = src.Neighborhood(ctx, "g1", "root", 2, datasource.Inbound)
	_, _ = src.Neighborhood(ctx, "g1", "root", 2, datasource.Outbound)
	_, _ = src.Neighborhood(ctx, "g1", "root", 2, datasource.Any)
	_, _ = src.CreateNode(ctx, "g1", datasource.Node{Key: evilKey, Type: "api-call"})
	_, _ = src.UpdateNode(ctx, "g1", "root", map[string]any{"process": evil})
	_ = src.MoveNode(ctx, "g1", evil, 1, 2)
	_, _ = src.CreateEdge(ctx, "g1", datasource.Edge{Key: evilKey, Source: "root", Target: "out"})
	_ = src.DeleteEdge(ctx, "g1", evil)
	_, _ = src.DeleteNode(ctx, "g1", "out")

	sent := h.fake.Queries()
	if len(sent) < 20 {
		t.Fatalf("only %d queries seen", len(sent))
	}
	if unknown := h.fake.Unknown(); len(unknown) > 0 {
		t.Errorf("queries outside the fixed set: %q", unknown)
	}
	seen := map[string]bool{}
	for _, q := range sent {
		seen[q.Query] = true
		if strings.Contains(q.Query, evil) || strings.Contains(q.Query, evilKey) || strings.Contains(q.Query, "x\"") {
			t.Errorf("user input inside the query text: %s", q.Query)
		}
		if q.Query == arango.QGraph && q.BindVars["ws"] != testWS {
			t.Errorf("graph query without the workspace bind variable: %v", q.BindVars)
		}
	}
	for _, q := range []string{arango.QGraph, arango.QNode, arango.QNodes, arango.QNodesSheet, arango.QEdgesSheet, arango.QTraverseAny, arango.QTraverseIn, arango.QTraverseOut, arango.QInsertNode, arango.QUpdateNode, arango.QInsertEdge, arango.QDeleteEdge, arango.QDeleteNode, arango.QVectorExact} {
		if !seen[q] {
			t.Errorf("query never sent: %s", q)
		}
	}
	// Every graph read starts with the workspace check.
	if sent[0].Query != arango.QGraph {
		t.Errorf("first query %q, want the workspace-filtered graph query", sent[0].Query)
	}
	var nodeQ arangotest.Sent
	for _, q := range sent {
		if q.Query == arango.QNode && strings.Contains(q.BindVars["key"].(string), "x\"") {
			nodeQ = q
		}
	}
	if nodeQ.BindVars["key"] != "g1-"+evil || nodeQ.BindVars["gk"] != "g1" {
		t.Errorf("node lookup bind vars = %v, want the composite key", nodeQ.BindVars)
	}
}

func TestCursorBatchingAndClosing(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	nodes, err := h.src.Nodes(ctx, "g1", "")
	if err != nil || len(nodes) != 5 {
		t.Fatalf("nodes = %d, %v", len(nodes), err)
	}
	if nexts := h.fake.NextBatches(); nexts < 2 {
		t.Errorf("5 nodes in batches of 2 took %d next-batch requests, want 2", nexts)
	}
	if n := h.fake.OpenCursors(); n != 0 {
		t.Errorf("%d cursors left open after reading everything", n)
	}

	// A document that cannot be decoded halfway through: the cursor is deleted.
	h.fake.Insert(arangotest.Nodes, map[string]any{"_key": "g1-zzz-bad", "graphKey": "g1", "type": 42})
	h.fake.Insert(arangotest.Nodes, map[string]any{"_key": "g1-zzz-more1", "graphKey": "g1"})
	h.fake.Insert(arangotest.Nodes, map[string]any{"_key": "g1-zzz-more2", "graphKey": "g1"})
	h.fake.Insert(arangotest.Nodes, map[string]any{"_key": "g1-zzz-more3", "graphKey": "g1"})
	if _, err := h.src.Nodes(ctx, "g1", ""); err == nil {
		t.Fatal("a malformed node document decoded")
	}
	if h.fake.DeletedCursors() == 0 {
		t.Error("no DELETE of the abandoned cursor")
	}
	if n := h.fake.OpenCursors(); n != 0 {
		t.Errorf("%d cursors left open after a decode error", n)
	}

	// A cancelled context still closes the cursor.
	cctx, cancel := context.WithCancel(ctx)
	calls := 0
	err = h.src.QueryEach(cctx, arango.QNodes, map[string]any{"gk": "g1"}, func(json.RawMessage) error {
		calls++
		cancel()
		return nil
	})
	if err == nil {
		t.Error("query went on after cancel")
	}
	if n := h.fake.OpenCursors(); n != 0 {
		t.Errorf("%d cursors left open after cancel", n)
	}
}

func TestErrorsAreClassified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		setup    func(t *testing.T, f *arangotest.Server, url string) string
		code     fault.Code
		contains string
	}{
		{"wrong password", func(t *testing.T, f *arangotest.Server, u string) string {
			return strings.Replace(u, ":s3cret@", ":wrong@", 1)
		}, fault.Auth, "rejected the credentials"},
		{"forbidden", func(t *testing.T, f *arangotest.Server, u string) string {
			f.FailRequests(func(*http.Request) (int, int, bool) { return 403, 11, true })
			return u
		}, fault.Auth, "may not access"},
		{"unknown database", func(t *testing.T, f *arangotest.Server, u string) string {
			return strings.Replace(u, "/nodius_test?", "/nope?", 1)
		}, fault.Config, "does not exist"},
		{"server error", func(t *testing.T, f *arangotest.Server, u string) string {
			f.FailRequests(func(r *http.Request) (int, int, bool) {
				return 500, 4, r.URL.Path != "/_db/nodius_test/_api/database/current"
			})
			return u
		}, fault.ServerError, "500"},
		{"connection refused", func(t *testing.T, f *arangotest.Server, u string) string {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := l.Addr().String()
			_ = l.Close()
			return "arango://root:s3cret@" + addr + "/nodius_test?workspace=ws1"
		}, fault.Network, "connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := arangotest.New(t)
			f.Insert(arangotest.Graphs, map[string]any{"_key": "g1", "workspace": "ws1"})
			u := tc.setup(t, f, f.URL("ws1"))
			cfg, err := arango.ParseURL(u)
			if err != nil {
				t.Fatal(err)
			}
			ctx := ctxT(t)
			src, err := arango.Open(ctx, cfg)
			if err == nil {
				_, err = src.Graph(ctx, "g1")
			}
			ce, ok := fault.As(err)
			if !ok || ce.Code != tc.code || !strings.Contains(ce.Message, tc.contains) {
				t.Fatalf("err = %v, want %s containing %q", err, tc.code, tc.contains)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "wrong") {
				t.Errorf("password in error: %v", err)
			}
		})
	}
}

func TestConflictIs409(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	_, err := h.src.CreateEdge(ctxT(t), "g1", datasource.Edge{Key: "e1", Source: "root", Target: "out"})
	ce, ok := fault.As(err)
	if !ok || ce.Status != 409 || !strings.Contains(ce.Message, "already exists") {
		t.Errorf("err = %v, want 409 already exists", err)
	}
}

func TestApproxVectorSearchWhenIndexed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		version string
		index   bool
		approx  bool
	}{
		{"3.11 exact only", "3.11.8", true, false},
		{"3.12.4 without index", "3.12.4", false, false},
		{"3.12.4 with index", "3.12.4", true, true},
		{"3.12.5-enterprise with index", "3.12.5-1", true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := fakeOnly(t)
			h.fake.SetVersion(tc.version)
			if tc.index {
				h.fake.SetIndexes(map[string]any{"id": "nodius_nodes/1", "type": "vector", "fields": []string{"embedding"},
					"params": map[string]any{"dimension": 2, "metric": "cosine", "nLists": 1}})
			}
			for _, k := range []string{"g1-fetch-api", "g1-out", "other-secret"} {
				h.fake.Update(arangotest.Nodes, k, map[string]any{"embedding": []any{1.0, 0.0}})
			}
			ctx := ctxT(t)
			for range 2 {
				hits, err := h.src.VectorSearch(ctx, "g1", []float32{1, 0}, 5)
				if err != nil || len(hits) != 2 {
					t.Fatalf("hits = %+v, %v", hits, err)
				}
				for _, hit := range hits {
					if hit.Node.Key == "secret" {
						t.Error("a node of another graph came back")
					}
				}
			}
			usedApprox := slices.ContainsFunc(h.fake.Queries(), func(q arangotest.Sent) bool { return q.Query == arango.QVectorApprox })
			if usedApprox != tc.approx {
				t.Errorf("approx used = %v, want %v", usedApprox, tc.approx)
			}
			if versions := h.fake.VersionRequests(); versions != 1 {
				t.Errorf("server version asked %d times, want once (cached)", versions)
			}
		})
	}
}

func TestVectorSearchErrorsLetTextRankingWin(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	if _, err := h.src.VectorSearch(ctx, "g1", []float32{1, 0}, 5); !errors.Is(err, arango.ErrNoVectors) {
		t.Errorf("no embeddings: err = %v, want ErrNoVectors", err)
	}
	h.fake.Update(arangotest.Nodes, "g1-root", map[string]any{"embedding": []any{1.0, 0.0}})
	h.fake.FailQueries(func(q string, _ map[string]any) (int, int, bool) {
		return 400, 1540, q == arango.QVectorExact || q == arango.QVectorApprox
	})
	if _, err := h.src.VectorSearch(ctx, "g1", []float32{1, 0}, 5); err == nil {
		t.Error("a failing vector query gave no error")
	}
	hits, err := h.src.Search(ctx, "g1", "transform", 3, []float32{1, 0})
	if err != nil || len(hits) == 0 || hits[0].Node.Key != "transform" {
		t.Errorf("search fell back to text = %+v, %v", hits, err)
	}
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    arango.Config
		wantErr string
	}{
		{"arango://root:pw@db.local:8530/nodius?workspace=acme", arango.Config{Endpoint: "http://db.local:8530", User: "root", Password: "pw", Database: "nodius", Workspace: "acme"}, ""},
		{"arangos://u:p%40ss@db.local/prod", arango.Config{Endpoint: "https://db.local:8529", User: "u", Password: "p@ss", Database: "prod", TLS: true}, ""},
		{"arango://127.0.0.1", arango.Config{Endpoint: "http://127.0.0.1:8529", User: "root", Database: "nodius"}, ""},
		{"arangos://u:p@h:1/d?insecure=true", arango.Config{Endpoint: "https://h:1", User: "u", Password: "p", Database: "d", TLS: true, InsecureTLS: true}, ""},
		{"http://h:8529/db", arango.Config{}, "scheme"},
		{"arango://:8529/db", arango.Config{}, "no host"},
		{"arango://h:99999/db", arango.Config{}, "invalid port"},
		{"arango://h/a/b", arango.Config{}, "database name only"},
	}
	for _, tc := range tests {
		got, err := arango.ParseURL(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	cfg, _ := arango.ParseURL("arango://root:topsecret@h:1/db?workspace=w")
	if d := cfg.Describe(); strings.Contains(d, "topsecret") || d != "arango://root@h:1/db (workspace w)" {
		t.Errorf("Describe = %q", d)
	}
}

// TestResultLimit: an ArangoDB answer over MaxResultBytes fails with a sentence
// naming max_arango_result_bytes.
func TestResultLimit(t *testing.T) {
	t.Parallel()
	f := arangotest.New(t)
	for coll, docs := range fixture() {
		for _, d := range docs {
			f.Insert(coll, d)
		}
	}
	f.Insert(arangotest.Nodes, map[string]any{"_key": "g1-huge", "graphKey": "g1", "process": strings.Repeat("x", 300_000)})
	cfg, err := arango.ParseURL(f.URL(testWS))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxResultBytes = 100_000
	src, err := arango.Open(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	_, err = src.Nodes(ctxT(t), "g1", "")
	fe, ok := fault.As(err)
	if !ok || fe.Code != fault.BudgetExceeded || !strings.Contains(fe.Message, "max_arango_result_bytes") {
		t.Fatalf("Nodes with a 300 KB node and a 100 KB limit = %v", err)
	}
}

// The reads of one question (search, node, neighbourhoods) make the workspace check
// once, not once each; a graph that failed it is asked again every time, and a write
// always checks.
func TestReadsShareOneWorkspaceCheck(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	graphChecks := func(from int) int {
		n := 0
		for _, q := range h.fake.Queries()[from:] {
			if q.Query == arango.QGraph {
				n++
			}
		}
		return n
	}
	before := len(h.fake.Queries())
	if _, err := h.src.Search(ctx, "g1", "fetch api", 5, nil); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []datasource.Direction{datasource.Inbound, datasource.Outbound, datasource.Any} {
		if _, err := h.src.Neighborhood(ctx, "g1", "root", 2, dir); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := h.src.Nodes(ctx, "g1", ""); err != nil {
		t.Fatal(err)
	}
	if n := graphChecks(before); n != 1 {
		t.Errorf("%d workspace checks for the reads of one question, want 1", n)
	}

	before = len(h.fake.Queries())
	for range 2 {
		if _, err := h.src.Nodes(ctx, "no-such-graph", ""); err == nil {
			t.Fatal("a graph that is not there was read")
		}
	}
	if n := graphChecks(before); n != 2 {
		t.Errorf("%d workspace checks for two reads of a missing graph, want 2 (a failure is not remembered)", n)
	}

	before = len(h.fake.Queries())
	if err := h.src.MoveNode(ctx, "g1", "root", 1, 2); err != nil {
		t.Fatal(err)
	}
	if n := graphChecks(before); n != 1 {
		t.Errorf("%d workspace checks for a write, want 1 (writes always check)", n)
	}
}
