package arango_test

import (
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/internal/fault"
	"github.com/nodius/nodius-ai/rag"
)

// searchUntil runs TextSearch until it finds something: a real ArangoDB indexes a
// new View in the background (on the fake the first answer is final).
func searchUntil(t *testing.T, h *harness, graph, query string, limit int) []datasource.ScoredNode {
	t.Helper()
	ctx := ctxT(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		hits, err := h.src.TextSearch(ctx, graph, query, limit)
		if err != nil {
			t.Fatalf("text search %q: %v", query, err)
		}
		if len(hits) > 0 || h.fake != nil || time.Now().After(deadline) {
			return hits
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func hitKeys(hits []datasource.ScoredNode) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Node.Key
	}
	return out
}

// The behaviour suite of text search in ArangoDB: runs on the fake, and on a real
// ArangoDB when NODIUS_AI_TEST_ARANGO is set.
func TestSearchSetupAndSearch(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := ctxT(t)

	ready, err := h.src.SearchReady(ctx)
	if err != nil || ready {
		t.Fatalf("before setup: ready = %v, %v; want false", ready, err)
	}
	if _, err := h.src.TextSearch(ctx, "g1", "fetch", 5); !errors.Is(err, datasource.ErrNoTextIndex) {
		t.Fatalf("text search without the view: %v, want ErrNoTextIndex", err)
	}

	first, err := h.src.SetupSearch(ctx)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	want := []string{
		"analyzer nodius_text_en: created", "analyzer nodius_text_fr: created", "view nodius_nodes_search: created",
	}
	if got := stepStrings(first); !slices.Equal(got, want) {
		t.Errorf("first setup = %q, want %q", got, want)
	}
	again, err := h.src.SetupSearch(ctx)
	if err != nil {
		t.Fatalf("second setup: %v", err)
	}
	for i := range want {
		want[i] = strings.Replace(want[i], "created", "already there", 1)
	}
	if got := stepStrings(again); !slices.Equal(got, want) {
		t.Errorf("second setup = %q, want %q (idempotent)", got, want)
	}
	if ready, err := h.src.SearchReady(ctx); err != nil || !ready {
		t.Errorf("after setup: ready = %v, %v", ready, err)
	}

	// A fresh Source (another process) sees the view.
	other, err := arango.Open(ctx, h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if ready, err := other.SearchReady(ctx); err != nil || !ready {
		t.Errorf("another source after setup: ready = %v, %v", ready, err)
	}

	hits := searchUntil(t, h, "g1", "fetch api", 3)
	if len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Fatalf("search fetch api = %v, want fetch-api first", hitKeys(hits))
	}
	if hits[0].Node.Type != "api-call" || hits[0].Node.Process == "" {
		t.Errorf("hit node not read in full: %+v", hits[0].Node)
	}
	if hits[0].Score <= 0 {
		t.Errorf("hit score %v", hits[0].Score)
	}
	// snake_case and code words are found; another workspace's graph is not.
	if hits := searchUntil(t, h, "g1", "transform", 5); len(hits) == 0 || hits[0].Node.Key != "transform" {
		t.Errorf("search transform = %v", hitKeys(hits))
	}
	if hits := searchUntil(t, h, "g1", "await", 5); len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Errorf("search await (in the code) = %v", hitKeys(hits))
	}
	if _, err := h.src.TextSearch(ctx, "other", "classified", 5); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("search in another workspace: %v, want not found", err)
	}
	for _, hit := range searchUntil(t, h, "g1", "fetch", 10) {
		if hit.Node.Key == "secret" || strings.HasPrefix(hit.Node.Key, "g1-") {
			t.Errorf("hit %q: another graph's node, or a storage key", hit.Node.Key)
		}
	}
	// The type's display name lives in the configs: "API Call" finds its nodes.
	if hits := searchUntil(t, h, "g1", "HTTP", 5); len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Errorf("search by the type's description = %v", hitKeys(hits))
	}
	if hits, err := h.src.TextSearch(ctx, "g1", "the of", 5); err != nil || len(hits) != 0 {
		t.Errorf("stop words only: %v, %v; want no hits", hitKeys(hits), err)
	}

	// Search (the read tools' entry) goes through the view too.
	res, err := h.src.Search(ctx, "g1", "fetch api", 1, nil)
	if err != nil || len(res) != 1 || res[0].Node.Key != "fetch-api" {
		t.Errorf("Search = %v, %v", hitKeys(res), err)
	}
}

func stepStrings(steps []arango.SetupStep) []string {
	out := make([]string, len(steps))
	for i, s := range steps {
		out[i] = s.String()
	}
	return out
}

// A text search sends fixed queries only, with the question, the data paths, the
// sheets and the types in bind variables, and never reads the whole graph.
func TestTextSearchSendsOnlyTheFixedQuery(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	// A data key and a sheet name shaped like AQL reach the server only as values.
	evilKey := `x" OR true RETURN 1 //`
	h.fake.Update(arangotest.Nodes, "g1-side", map[string]any{"data": map[string]any{evilKey: "archived sidebar"}})
	h.fake.Update(arangotest.Graphs, "g1", map[string]any{"sheets": map[string]any{"0": "main", "1": `archive" RETURN 2 //`}})
	evil := `fetch" OR true OR "' RETURN 1 // archive`
	before := len(h.fake.Queries())
	if _, err := h.src.TextSearch(ctx, "g1", evil, 7); err != nil {
		t.Fatal(err)
	}
	if _, err := h.src.Search(ctx, "g1", "fetch api", 7, nil); err != nil {
		t.Fatal(err)
	}
	sent := h.fake.Queries()[before:]
	if u := h.fake.Unknown(); len(u) > 0 {
		t.Errorf("queries outside the fixed set: %q", u)
	}
	var search []arangotest.Sent
	paths := 0
	for _, q := range sent {
		switch q.Query {
		case arango.QTextSearch:
			search = append(search, q)
		case arango.QDataPaths:
			paths++
		case arango.QGraph, arango.QConfigs:
		default:
			t.Errorf("text search sent %.60q…, want only the graph check, the configs, the data paths and the search", q.Query)
		}
		for _, w := range []string{"RETURN 1", "RETURN 2", "fetch", "archive", "sidebar"} {
			if strings.Contains(q.Query, w) {
				t.Errorf("%q is inside the query text: %s", w, q.Query)
			}
		}
	}
	if len(search) != 2 {
		t.Fatalf("%d search queries, want 2", len(search))
	}
	if paths != 1 {
		t.Errorf("data paths read %d times for two questions, want once (kept)", paths)
	}
	b := search[0].BindVars
	if b["gk"] != "g1" || b["limit"] != float64(7) || !strings.Contains(b["q"].(string), "fetch") {
		t.Errorf("bind variables = %v", b)
	}
	if strings.ContainsAny(b["q"].(string), `"'/`) {
		t.Errorf("q = %q: the question's punctuation reached the server", b["q"])
	}
	if s, _ := b["sheets"].([]any); len(s) != 1 || s[0] != "1" {
		t.Errorf("sheets = %#v, want the id of the sheet the question names", b["sheets"])
	}
	// The data paths are bound as attribute paths: the graph's, most common first,
	// then a field nothing indexes.
	var bound []string
	for i := range 16 {
		p, ok := b["d"+strconv.Itoa(i)].([]any)
		if !ok || len(p) == 0 {
			t.Fatalf("d%d = %#v, want an attribute path", i, b["d"+strconv.Itoa(i)])
		}
		parts := make([]string, len(p))
		for j, x := range p {
			parts[j] = x.(string)
		}
		bound = append(bound, strings.Join(parts, "."))
	}
	want := []string{"data.fields.label", "data.method", "data.title", "data.url", "data." + evilKey}
	if !slices.Equal(bound[:len(want)], want) || bound[len(want)] != "nodiusAiUnindexed" || bound[15] != "nodiusAiUnindexed" {
		t.Errorf("data paths bound = %q, want %q then unindexed slots", bound, want)
	}
	if b := search[1].BindVars; b["q"] != "fetch api fetchapi" {
		t.Errorf("q = %q, want the words and their joined form", b["q"])
	}
	if _, ok := b["types"].([]any); !ok {
		t.Errorf("types = %#v, want a list", b["types"])
	}
}

// Without the view, text search falls back to ranking in process; a view dropped
// after it was seen is noticed at the next search.
func TestTextSearchFallsBackWithoutView(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	hits, err := h.src.Search(ctx, "g1", "fetch api", 3, nil)
	if err != nil || len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Fatalf("in-process search = %v, %v", hitKeys(hits), err)
	}
	sentNodes := false
	for _, q := range h.fake.Queries() {
		sentNodes = sentNodes || q.Query == arango.QNodes
		if q.Query == arango.QTextSearch {
			t.Error("search query sent although the view is absent")
		}
	}
	if !sentNodes {
		t.Error("the in-process fallback did not read the nodes")
	}

	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	h.fake.DropView(arango.SearchView)
	if _, err := h.src.TextSearch(ctx, "g1", "fetch", 3); !errors.Is(err, datasource.ErrNoTextIndex) {
		t.Fatalf("search after the view was dropped: %v, want ErrNoTextIndex", err)
	}
	if ready, _ := h.src.SearchReady(ctx); ready {
		t.Error("still ready after the view was found missing")
	}
	if hits, err := h.src.Search(ctx, "g1", "fetch api", 3, nil); err != nil || len(hits) == 0 || hits[0].Node.Key != "fetch-api" {
		t.Errorf("Search after the view was dropped = %v, %v", hitKeys(hits), err)
	}
}

// A view of an older setup, linked without a field the query needs, is updated;
// analyzers or views that are someone else's are refused with a sentence.
func TestSetupRepairsAndRefuses(t *testing.T) {
	t.Parallel()
	t.Run("older view is updated", func(t *testing.T) {
		t.Parallel()
		h := fakeOnly(t)
		ctx := ctxT(t)
		if _, err := h.src.SetupSearch(ctx); err != nil {
			t.Fatal(err)
		}
		h.fake.SetView(arango.SearchView, map[string]any{"type": "arangosearch", "links": map[string]any{
			"nodius_nodes": map[string]any{"fields": map[string]any{"_key": map[string]any{"analyzers": []any{"nodius_text_en"}}}}}})
		src2 := reopen(t, h)
		if ready, _ := src2.SearchReady(ctx); ready {
			t.Error("a view without the fields the query needs counts as ready")
		}
		steps, err := src2.SetupSearch(ctx)
		if err != nil || steps[2].State != "updated" {
			t.Fatalf("setup over an older view = %v, %v", stepStrings(steps), err)
		}
		if ready, _ := reopen(t, h).SearchReady(ctx); !ready {
			t.Error("not ready after the update")
		}
	})
	t.Run("foreign analyzer", func(t *testing.T) {
		t.Parallel()
		h := fakeOnly(t)
		h.fake.SetAnalyzer(arango.AnalyzerEN, map[string]any{"type": "identity", "properties": map[string]any{}})
		_, err := h.src.SetupSearch(ctxT(t))
		ce, ok := fault.As(err)
		if !ok || ce.Code != fault.InvalidRequest || !strings.Contains(ce.Message, "another definition") {
			t.Fatalf("err = %v, want a refusal naming the clash", err)
		}
	})
	t.Run("foreign view type", func(t *testing.T) {
		t.Parallel()
		h := fakeOnly(t)
		h.fake.SetView(arango.SearchView, map[string]any{"type": "search-alias"})
		_, err := h.src.SetupSearch(ctxT(t))
		if ce, ok := fault.As(err); !ok || ce.Code != fault.InvalidRequest || !strings.Contains(ce.Message, "search-alias") {
			t.Fatalf("err = %v", err)
		}
	})
}

func reopen(t *testing.T, h *harness) *arango.Source {
	t.Helper()
	src, err := arango.Open(ctxT(t), h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return src
}

// Setup and search failures are classified once, without the password.
func TestSearchErrorsAreClassified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fail func(r *http.Request) (int, int, bool)
		code fault.Code
	}{
		{"forbidden to create", func(r *http.Request) (int, int, bool) {
			return 403, 11, r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/_api/analyzer")
		}, fault.Auth},
		{"credentials rejected", func(r *http.Request) (int, int, bool) {
			return 401, 11, strings.Contains(r.URL.Path, "/_api/view")
		}, fault.Auth},
		{"server error", func(r *http.Request) (int, int, bool) {
			return 500, 4, strings.Contains(r.URL.Path, "/_api/view")
		}, fault.ServerError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := fakeOnly(t)
			h.fake.FailRequests(tc.fail)
			_, err := h.src.SetupSearch(ctxT(t))
			if ce, ok := fault.As(err); !ok || ce.Code != tc.code {
				t.Fatalf("setup err = %v, want %s", err, tc.code)
			}
			if strings.Contains(err.Error(), arangotest.Password) {
				t.Errorf("password in error: %v", err)
			}
		})
	}

	// The search query itself failing, and the server gone.
	h := fakeOnly(t)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	h.fake.FailQueries(func(q string, _ map[string]any) (int, int, bool) { return 503, 503, q == arango.QTextSearch })
	_, err := h.src.TextSearch(ctx, "g1", "fetch", 5)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.ServerError || !strings.Contains(ce.Message, "search the nodes") {
		t.Errorf("failed search = %v", err)
	}
	h.fake.Close()
	_, err = h.src.TextSearch(ctx, "g1", "fetch", 5)
	if ce, ok := fault.As(err); !ok || ce.Code != fault.Network || strings.Contains(err.Error(), arangotest.Password) {
		t.Errorf("search with the server gone = %v, want a network error without the password", err)
	}
}

// Retrieval over ArangoDB with the view: the context is built from the server's
// ranking and the hits' neighbourhoods. Runs on a real server too.
func TestRetrievalRanksInArangoDB(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	searchUntil(t, h, "g1", "transform", 5) // a real server indexes in the background
	opts := rag.DefaultOptions()
	opts.CacheTTL = 0
	before := 0
	if h.fake != nil {
		before = len(h.fake.Queries())
	}
	c, err := rag.New(h.src, opts, nil).Retrieve(ctx, "g1", "what transforms the data")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Retrieval.Server || len(c.Hits) == 0 || c.Hits[0].Key != "transform" {
		t.Fatalf("server ranking %v, hits %+v; want transform first", c.Retrieval.Server, c.Hits)
	}
	keys := map[string]bool{}
	for _, n := range c.Nodes {
		keys[n.Key] = true
	}
	for _, k := range []string{"transform", "fetch-api", "out", "root"} {
		if !keys[k] {
			t.Errorf("context lacks %s (two hops from transform): %v", k, c.Nodes)
		}
	}
	if keys["side"] || keys["secret"] {
		t.Errorf("context holds nodes not connected to the hits: %v", c.Nodes)
	}
	if len(c.Edges) != 3 {
		t.Errorf("edges = %+v, want the chain's 3", c.Edges)
	}
	if h.fake != nil {
		for _, q := range h.fake.Queries()[before:] {
			if q.Query == arango.QNodes {
				t.Error("retrieval read every node of the graph")
			}
		}
	}
}
