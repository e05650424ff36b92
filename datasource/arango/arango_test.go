package arango_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/memgraph"
	"github.com/nodius/nodius-ai/internal/fault"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func nodeKeys(ns []datasource.Node) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Key)
	}
	sort.Strings(out)
	return out
}

func edgeKeys(es []datasource.Edge) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Key)
	}
	sort.Strings(out)
	return out
}

// The behaviour suite: runs on the fake, and on a real ArangoDB when
// NODIUS_AI_TEST_ARANGO is set.
func TestReads(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2) // small batches: every list spans several cursor round trips
	ctx := ctxT(t)
	src := h.src

	g, err := src.Graph(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if g.Key != "g1" || g.Name != "NBA" || g.Workspace != "ws1" || g.SheetName("1") != "archive" {
		t.Errorf("graph = %+v", g)
	}
	if _, ok := g.Extra["_id"]; ok {
		t.Error("system field _id leaked into Graph.Extra")
	}

	tests := []struct {
		name string
		call func() error
	}{
		{"graph of another workspace", func() error { _, err := src.Graph(ctx, "other"); return err }},
		{"missing graph", func() error { _, err := src.Graph(ctx, "nope"); return err }},
		{"nodes of another workspace", func() error { _, err := src.Nodes(ctx, "other", ""); return err }},
		{"edges of another workspace", func() error { _, err := src.Edges(ctx, "other", ""); return err }},
		{"node of another workspace", func() error { _, err := src.Node(ctx, "other", "secret"); return err }},
		{"configs of another workspace", func() error { _, err := src.Configs(ctx, "other"); return err }},
		{"search another workspace", func() error { _, err := src.Search(ctx, "other", "classified", 5, nil); return err }},
		{"neighborhood of another workspace", func() error {
			_, err := src.Neighborhood(ctx, "other", "secret", 1, datasource.Any)
			return err
		}},
		{"missing node", func() error { _, err := src.Node(ctx, "g1", "nope"); return err }},
		{"node key crafted to reach another graph", func() error { _, err := src.Node(ctx, "g1", "x\" || true || \""); return err }},
	}
	for _, tc := range tests {
		if err := tc.call(); !errors.Is(err, datasource.ErrNotFound) {
			t.Errorf("%s: err = %v, want not found", tc.name, err)
		}
	}

	nodes, err := src.Nodes(ctx, "g1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := nodeKeys(nodes), []string{"fetch-api", "out", "root", "side", "transform"}; !slices.Equal(got, want) {
		t.Errorf("nodes = %v, want %v (local keys)", got, want)
	}
	sheet1, err := src.Nodes(ctx, "g1", "1")
	if err != nil || !slices.Equal(nodeKeys(sheet1), []string{"side"}) {
		t.Errorf("sheet 1 nodes = %v, %v", nodeKeys(sheet1), err)
	}

	n, err := src.Node(ctx, "g1", "fetch-api")
	if err != nil {
		t.Fatal(err)
	}
	if n.Key != "fetch-api" || n.Type != "api-call" || n.Process != "const r = await fetch(url)" || n.PosX != 10 || n.Size.Width != 200 {
		t.Errorf("node = %+v", n)
	}
	if d, _ := n.Data.(map[string]any); d["url"] != "https://x" {
		t.Errorf("node data = %v", n.Data)
	}
	if len(n.Handles["L"].Point) != 1 || n.Handles["L"].Point[0].Type != "in" {
		t.Errorf("node handles = %+v", n.Handles)
	}
	for _, f := range []string{"_id", "_rev", "graphKey"} {
		if _, ok := n.Extra[f]; ok {
			t.Errorf("system field %s leaked into Node.Extra", f)
		}
	}

	edges, err := src.Edges(ctx, "g1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := edgeKeys(edges); !slices.Equal(got, []string{"e1", "e2", "e3"}) {
		t.Errorf("edges = %v", got)
	}
	for _, e := range edges {
		if strings.HasPrefix(e.Source, "g1-") || strings.HasPrefix(e.Target, "g1-") || strings.Contains(e.Source, "/") {
			t.Errorf("edge %s has storage keys: %s -> %s", e.Key, e.Source, e.Target)
		}
	}

	configs, err := src.Configs(ctx, "g1")
	if err != nil || len(configs) != 1 || configs[0].Key != "api-call" || configs[0].DisplayName != "API Call" {
		t.Errorf("configs = %+v, %v", configs, err)
	}

	snap, err := src.Snapshot(ctx, "g1")
	if err != nil || len(snap.Nodes) != 5 || len(snap.Edges) != 3 || len(snap.Configs) != 1 || snap.Graph.Key != "g1" {
		t.Errorf("snapshot = %d nodes %d edges %d configs, %v", len(snap.Nodes), len(snap.Edges), len(snap.Configs), err)
	}

	hits, err := src.Search(ctx, "g1", "fetch api", 3, nil)
	if err != nil || len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Errorf("search = %+v, %v", hits, err)
	}
}

func TestNeighborhood(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 1)
	ctx := ctxT(t)
	tests := []struct {
		start string
		depth int
		dir   datasource.Direction
		nodes []string
		edges []string
	}{
		{"fetch-api", 1, datasource.Outbound, []string{"fetch-api", "transform"}, []string{"e2"}},
		{"fetch-api", 1, datasource.Inbound, []string{"fetch-api", "root"}, []string{"e1"}},
		{"fetch-api", 1, datasource.Any, []string{"fetch-api", "root", "transform"}, []string{"e1", "e2"}},
		{"root", 2, datasource.Outbound, []string{"fetch-api", "root", "transform"}, []string{"e1", "e2"}},
		{"root", 5, datasource.Inbound, []string{"root"}, nil},
		{"out", 0, datasource.Any, []string{"out"}, nil},
	}
	for _, tc := range tests {
		nb, err := h.src.Neighborhood(ctx, "g1", tc.start, tc.depth, tc.dir)
		if err != nil {
			t.Fatalf("%s %d %s: %v", tc.start, tc.depth, tc.dir, err)
		}
		if nb.Nodes[0].Key != tc.start {
			t.Errorf("%s %d %s: first node %s, want the start node", tc.start, tc.depth, tc.dir, nb.Nodes[0].Key)
		}
		if got := nodeKeys(nb.Nodes); !slices.Equal(got, tc.nodes) {
			t.Errorf("%s %d %s: nodes %v, want %v", tc.start, tc.depth, tc.dir, got, tc.nodes)
		}
		if got := edgeKeys(nb.Edges); !slices.Equal(got, tc.edges) {
			t.Errorf("%s %d %s: edges %v, want %v", tc.start, tc.depth, tc.dir, got, tc.edges)
		}
	}
	if _, err := h.src.Neighborhood(ctx, "g1", "nope", 1, datasource.Any); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("missing start: %v", err)
	}
}

// The arango source walks a graph exactly as the in-memory store does: same nodes,
// same edges, parallel edges, triangles, cycles and self-loops included.
func TestNeighborhoodMatchesMemgraph(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := ctxT(t)
	snap, err := h.src.Snapshot(ctx, "tri")
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Nodes) != 5 || len(snap.Edges) != 8 {
		t.Fatalf("snapshot of tri: %d nodes, %d edges", len(snap.Nodes), len(snap.Edges))
	}
	mem, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		t.Fatal(err)
	}
	// The defect this guards against: both parallel edges fetch -> handler.
	nb, err := h.src.Neighborhood(ctx, "tri", "fetch", 1, datasource.Outbound)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := edgeKeys(nb.Edges), []string{"p1", "p2", "t3"}; !slices.Equal(got, want) {
		t.Errorf("fetch 1 outbound: edges %v, want %v", got, want)
	}
	for _, start := range nodeKeys(snap.Nodes) {
		for depth := 0; depth <= 3; depth++ {
			for _, dir := range []datasource.Direction{datasource.Any, datasource.Inbound, datasource.Outbound} {
				name := fmt.Sprintf("%s %d %s", start, depth, dir)
				got, err := h.src.Neighborhood(ctx, "tri", start, depth, dir)
				if err != nil {
					t.Fatalf("%s: arango: %v", name, err)
				}
				want, err := mem.Neighborhood(ctx, "tri", start, depth, dir)
				if err != nil {
					t.Fatalf("%s: memgraph: %v", name, err)
				}
				if got.Nodes[0].Key != start {
					t.Errorf("%s: first node %s, want the start node", name, got.Nodes[0].Key)
				}
				if g, w := nodeKeys(got.Nodes), nodeKeys(want.Nodes); !slices.Equal(g, w) {
					t.Errorf("%s: nodes %v, memgraph %v", name, g, w)
				}
				if g, w := edgeKeys(got.Edges), edgeKeys(want.Edges); !slices.Equal(g, w) {
					t.Errorf("%s: edges %v, memgraph %v", name, g, w)
				}
				for _, e := range got.Edges {
					if strings.HasPrefix(e.Key, "tri-") || strings.HasPrefix(e.Source, "tri-") || strings.HasPrefix(e.Target, "tri-") {
						t.Errorf("%s: edge %+v has storage keys", name, e)
					}
				}
			}
		}
	}
}

func TestMutations(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100)
	ctx := ctxT(t)
	src := h.src

	created, err := src.CreateNode(ctx, "g1", datasource.Node{Key: "load", Type: "api-call", Sheet: "0", Process: "save()", Data: map[string]any{"a": 1.0, "b": "x"}})
	if err != nil || created.Key != "load" {
		t.Fatalf("create node = %+v, %v", created, err)
	}
	if _, err := src.CreateNode(ctx, "g1", datasource.Node{Key: "load", Type: "api-call"}); err == nil {
		t.Error("creating a node twice succeeded")
	} else if ce, ok := fault.As(err); !ok || ce.Status != 409 {
		t.Errorf("duplicate node error = %v, want a 409 convo error", err)
	}
	gen, err := src.CreateNode(ctx, "g1", datasource.Node{Type: "api-call", Sheet: "0"})
	if err != nil || gen.Key == "" || strings.HasPrefix(gen.Key, "g1-") {
		t.Errorf("generated key = %q, %v", gen.Key, err)
	}

	upd, err := src.UpdateNode(ctx, "g1", "load", map[string]any{"data.b": "y", "process": "save(2)"})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := upd.Data.(map[string]any); fmt.Sprint(d["a"]) != "1" || d["b"] != "y" || upd.Process != "save(2)" {
		t.Errorf("updated node = %+v", upd)
	}
	if _, err := src.UpdateNode(ctx, "g1", "load", map[string]any{"_key": "x"}); err == nil {
		t.Error("changing _key was accepted")
	}
	if _, err := src.UpdateNode(ctx, "g1", "ghost", map[string]any{"process": "x"}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("update missing node: %v", err)
	}

	if err := src.MoveNode(ctx, "g1", "load", 300, 400); err != nil {
		t.Fatal(err)
	}
	if n, _ := src.Node(ctx, "g1", "load"); n.PosX != 300 || n.PosY != 400 || n.Process != "save(2)" {
		t.Errorf("moved node = %+v", n)
	}
	if err := src.MoveNode(ctx, "g1", "ghost", 1, 1); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("move missing node: %v", err)
	}

	e, err := src.CreateEdge(ctx, "g1", datasource.Edge{Key: "e9", Sheet: "0", Source: "out", SourceHandle: "0", Target: "load", TargetHandle: "0"})
	if err != nil || e.Key != "e9" || e.Source != "out" || e.Target != "load" {
		t.Fatalf("create edge = %+v, %v", e, err)
	}
	if _, err := src.CreateEdge(ctx, "g1", datasource.Edge{Source: "out", Target: "ghost"}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("edge to a missing node: %v", err)
	}
	nb, err := src.Neighborhood(ctx, "g1", "load", 1, datasource.Inbound)
	if err != nil || !slices.Equal(nodeKeys(nb.Nodes), []string{"load", "out"}) {
		t.Errorf("new edge not walkable: %v %v", nodeKeys(nb.Nodes), err)
	}

	removed, err := src.DeleteNode(ctx, "g1", "transform")
	if err != nil {
		t.Fatal(err)
	}
	if got := edgeKeys(removed); !slices.Equal(got, []string{"e2", "e3"}) {
		t.Errorf("delete node removed edges %v", got)
	}
	if _, err := src.Node(ctx, "g1", "transform"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("deleted node still there: %v", err)
	}
	if err := src.DeleteEdge(ctx, "g1", "e9"); err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteEdge(ctx, "g1", "e9"); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("second delete of an edge: %v", err)
	}
	edges, _ := src.Edges(ctx, "g1", "")
	if got := edgeKeys(edges); !slices.Equal(got, []string{"e1"}) {
		t.Errorf("edges after deletes = %v", got)
	}
	// The other workspace cannot be written through this source.
	if _, err := src.CreateNode(ctx, "other", datasource.Node{Key: "x"}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("create node in another workspace: %v", err)
	}
	// A whole proposal through datasource.Apply.
	res, err := datasource.Apply(ctx, src, "g1", datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
		{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "n2", TypeKey: "api-call", Sheet: "0"}},
		{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{EdgeKey: "e10", SourceKey: "root", TargetKey: "n2", Sheet: "0"}},
	}}})
	if err != nil || !slices.Equal(res.Created.Nodes, []string{"n2"}) || !slices.Equal(res.Created.Edges, []string{"e10"}) {
		t.Errorf("apply = %+v, %v", res, err)
	}
}

func TestEmbeddingsAndVectorSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100)
	ctx := ctxT(t)
	src := h.src
	err := src.SetEmbeddings(ctx, "g1", map[string]embedding.Update{
		"fetch-api": {Vector: []float32{1, 0, 0}, Hash: "m@aaa"},
		"transform": {Vector: []float32{0.8, 0.6, 0}, Hash: "m@bbb"},
		"out":       {Vector: []float32{0, 0, 1}, Hash: "m@ccc"},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := src.Node(ctx, "g1", "fetch-api")
	if err != nil || len(n.Embedding) != 3 || embedding.StoredHash(n) != "m@aaa" {
		t.Errorf("stored embedding = %v hash %q, %v", n.Embedding, embedding.StoredHash(n), err)
	}
	if n.Process != "const r = await fetch(url)" {
		t.Errorf("storing an embedding changed the node: %+v", n)
	}
	hits, err := src.VectorSearch(ctx, "g1", []float32{1, 0.1, 0}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Node.Key != "fetch-api" || hits[1].Node.Key != "transform" {
		t.Errorf("vector hits = %+v (out is below the 0.3 threshold)", hits)
	}
	if _, err := src.VectorSearch(ctx, "g1", []float32{1, 0}, 5); err == nil {
		t.Error("a query vector of another size gave hits")
	}
	// Search uses the vectors when given an embedding, and text otherwise.
	sh, err := src.Search(ctx, "g1", "return", 5, []float32{0, 0.1, 1})
	if err != nil || len(sh) == 0 || sh[0].Node.Key != "out" {
		t.Errorf("search with embedding = %+v, %v", sh, err)
	}
	if err := src.SetEmbeddings(ctx, "g1", map[string]embedding.Update{"ghost": {Vector: []float32{1}, Hash: "h"}}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("embedding a missing node: %v", err)
	}
	if err := src.SetEmbeddings(ctx, "other", map[string]embedding.Update{"secret": {Vector: []float32{1}, Hash: "h"}}); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("embedding another workspace: %v", err)
	}
}

func TestEmbedRunOnArango(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 100)
	ctx := ctxT(t)
	emb := &countingEmbedder{}
	sum, err := embedding.Run(ctx, h.src, "g1", emb, embedding.Options{Batch: 2})
	if err != nil || sum.Embedded != 5 || sum.Skipped != 0 || sum.Failed != 0 {
		t.Fatalf("first run = %+v, %v", sum, err)
	}
	if err := h.src.MoveNode(ctx, "g1", "root", 999, 999); err != nil {
		t.Fatal(err)
	}
	if _, err := h.src.UpdateNode(ctx, "g1", "out", map[string]any{"process": "return 42"}); err != nil {
		t.Fatal(err)
	}
	sum, err = embedding.Run(ctx, h.src, "g1", emb, embedding.Options{Batch: 2})
	if err != nil || sum.Embedded != 1 || sum.Skipped != 4 {
		t.Errorf("second run = %+v, %v (only the changed node, not the moved one)", sum, err)
	}
}

type countingEmbedder struct{}

func (countingEmbedder) Model() string { return "test-model" }
func (countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = []float32{float32(len(s)), 1, 0}
	}
	return out, nil
}
