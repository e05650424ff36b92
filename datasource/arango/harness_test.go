package arango_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"github.com/arangodb/go-driver/v2/arangodb"

	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// harness is one database holding the fixture: the fake server, or a real ArangoDB
// when NODIUS_AI_TEST_ARANGO holds an arango:// URL (a database of its own is created
// and dropped).
type harness struct {
	src  *arango.Source
	cfg  arango.Config      // what src was opened with, to open another Source
	fake *arangotest.Server // nil against a real server
}

const testWS = "ws1"

// fixture: graph g1 (workspace ws1), 5 nodes on two sheets, a chain of edges (words
// found only in a data value, an edge label or a sheet name: leaderboard, picker,
// kickoff, archive); graph
// other (workspace ws2) whose node must never be seen from ws1; graph tri
// (workspace ws1) whose edges a traversal visiting each vertex once would miss:
// parallel edges, a triangle, a cycle back to the first node and a self-loop.
func fixture() map[string][]map[string]any {
	node := func(gk, key, typ, sheet, process string, data map[string]any) map[string]any {
		return map[string]any{
			"_key": gk + "-" + key, "graphKey": gk, "type": typ, "sheet": sheet, "process": process,
			"data": data, "posX": 10, "posY": 20, "size": map[string]any{"width": 200, "height": 100},
			"handles": map[string]any{
				"L": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "any"}}},
				"R": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "out", "accept": "any"}}},
			},
			"customField": "kept",
		}
	}
	edge := func(gk, key, from, to, sheet string) map[string]any {
		return map[string]any{
			"_key": gk + "-" + key, "graphKey": gk, "sheet": sheet,
			"_from": "nodius_nodes/" + gk + "-" + from, "_to": "nodius_nodes/" + gk + "-" + to,
			"source": from, "sourceHandle": "0", "target": to, "targetHandle": "0", "label": "",
		}
	}
	handle := func(e map[string]any, source string) map[string]any { e["sourceHandle"] = source; return e }
	label := func(e map[string]any, l string) map[string]any { e["label"] = l; return e }
	return map[string][]map[string]any{
		arangotest.Graphs: {
			{"_key": "g1", "workspace": "ws1", "name": "NBA", "description": "stats", "sheets": map[string]any{"0": "main", "1": "archive"}},
			{"_key": "other", "workspace": "ws2", "name": "Secret", "sheets": map[string]any{"0": "main"}},
			{"_key": "tri", "workspace": "ws1", "name": "Triangle", "sheets": map[string]any{"0": "main"}},
		},
		arangotest.Nodes: {
			node("g1", "root", "starter", "0", "", map[string]any{"fields": []any{map[string]any{"label": "Season picker", "default": 2024}}}),
			node("g1", "fetch-api", "api-call", "0", "const r = await fetch(url)", map[string]any{"url": "https://x", "method": "GET"}),
			node("g1", "transform", "js", "0", "return data.map(x => x)", nil),
			node("g1", "out", "return", "0", "", map[string]any{"title": "Weekly leaderboard", "rows": 25, "public": true}),
			node("g1", "side", "js", "1", "sheet one", nil),
			node("other", "secret", "js", "0", "classified", nil),
			node("tri", "start", "starter", "0", "", nil),
			node("tri", "fetch", "api-call", "0", "", nil),
			node("tri", "handler", "js", "0", "", nil),
			node("tri", "sink", "return", "0", "", nil),
			node("tri", "tail", "js", "0", "", nil),
		},
		arangotest.Edges: {
			label(edge("g1", "e1", "root", "fetch-api", "0"), "kickoff"),
			edge("g1", "e2", "fetch-api", "transform", "0"),
			edge("g1", "e3", "transform", "out", "0"),
			edge("other", "e1", "secret", "secret", "0"),
			edge("tri", "t1", "start", "fetch", "0"),
			handle(edge("tri", "p1", "fetch", "handler", "0"), "0"),
			handle(edge("tri", "p2", "fetch", "handler", "0"), "1"),
			edge("tri", "t2", "handler", "sink", "0"),
			edge("tri", "t3", "fetch", "sink", "0"),
			edge("tri", "t4", "sink", "start", "0"),
			edge("tri", "t5", "sink", "tail", "0"),
			edge("tri", "loop", "handler", "handler", "0"),
		},
		arangotest.Configs: {
			{"_key": "api-call", "workspace": "ws1", "displayName": "API Call", "description": "calls an HTTP API", "category": "network"},
			{"_key": "hidden", "workspace": "ws2", "displayName": "Hidden"},
		},
	}
}

// newHarness returns the fixture on the fake server (batchSize sets the cursor batch
// size), or on the real server named by NODIUS_AI_TEST_ARANGO.
func newHarness(t *testing.T, batchSize int) *harness {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if real := os.Getenv("NODIUS_AI_TEST_ARANGO"); real != "" {
		return newRealHarness(ctx, t, real, batchSize)
	}
	f := arangotest.New(t)
	for coll, docs := range fixture() {
		for _, d := range docs {
			f.Insert(coll, d)
		}
	}
	cfg, err := arango.ParseURL(f.URL(testWS))
	if err != nil {
		t.Fatal(err)
	}
	cfg.BatchSize = batchSize
	src, err := arango.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return &harness{src: src, cfg: cfg, fake: f}
}

func newRealHarness(ctx context.Context, t *testing.T, raw string, batchSize int) *harness {
	t.Helper()
	base, err := arango.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	sys := base
	sys.Database = "_system"
	admin, err := arango.Open(ctx, sys)
	if err != nil {
		t.Fatalf("open _system on NODIUS_AI_TEST_ARANGO: %v", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "nodius_ai_test_" + hex.EncodeToString(b[:])
	db, err := admin.Client().CreateDatabase(ctx, name, nil)
	if err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = db.Remove(cctx)
		_ = admin.Close()
	})
	for _, c := range []string{arangotest.Graphs, arangotest.Nodes, arangotest.Configs, arangotest.Threads} {
		if _, err := db.CreateCollectionV2(ctx, c, nil); err != nil {
			t.Fatalf("create %s: %v", c, err)
		}
	}
	edgeType := arangodb.CollectionTypeEdge
	if _, err := db.CreateCollectionV2(ctx, arangotest.Edges, &arangodb.CreateCollectionPropertiesV2{Type: &edgeType}); err != nil {
		t.Fatalf("create %s: %v", arangotest.Edges, err)
	}
	for coll, docs := range fixture() {
		col, err := db.GetCollection(ctx, coll, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if _, err := col.CreateDocument(ctx, d); err != nil {
				t.Fatalf("seed %s: %v", coll, err)
			}
		}
	}
	cfg := base
	cfg.Database, cfg.Workspace, cfg.BatchSize = name, testWS, batchSize
	src, err := arango.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open test database: %v", err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return &harness{src: src, cfg: cfg}
}
