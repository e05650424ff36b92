package arango_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/rag"
)

// codeWord is written only in the code of a node type (node.process), never on a
// node: on Nodius's schema that is where a node's code is.
const codeWord = "computeEloRating"

// addRealSchemaGraph adds graph rs (workspace ws1) as the Nodius server stores it:
// sheetsList, nodes without code, the code in their type's node.process. Nodes
// score and rival are of type ranker (its code holds codeWord, whose words are
// nowhere else); report is of another type; ghost is of a type whose config
// lives in workspace ws2 (its code holds codeWord too, and must credit nothing
// seen from ws1).
func addRealSchemaGraph(t *testing.T, h *harness) {
	t.Helper()
	node := func(key, typ string) map[string]any {
		return map[string]any{"_key": "rs-" + key, "graphKey": "rs", "type": typ, "typeVersion": 1, "sheet": "0",
			"handles": map[string]any{}, "data": map[string]any{}, "posX": 0, "posY": 0, "size": map[string]any{"width": 200, "height": 100}}
	}
	edge := func(key, from, to string) map[string]any {
		return map[string]any{"_key": "rs-" + key, "graphKey": "rs", "sheet": "0",
			"_from": "nodius_nodes/rs-" + from, "_to": "nodius_nodes/rs-" + to,
			"source": from, "sourceHandle": "0", "target": to, "targetHandle": "0", "label": ""}
	}
	config := func(key, ws, name, process string) map[string]any {
		return map[string]any{"_key": key, "workspace": ws, "version": 1, "displayName": name, "description": "", "category": "custom",
			"node": map[string]any{"type": key, "handles": map[string]any{}, "size": map[string]any{"width": 200, "height": 100}, "process": process}}
	}
	docs := map[string][]map[string]any{
		arangotest.Graphs: {{"_key": "rs", "workspace": "ws1", "name": "Ratings", "sheetsList": map[string]any{"0": "main"}}},
		arangotest.Nodes:  {node("start", "starter"), node("score", "ranker"), node("rival", "ranker"), node("report", "report-writer"), node("ghost", "ghost-type")},
		arangotest.Edges:  {edge("e1", "start", "score"), edge("e2", "score", "report"), edge("e3", "start", "rival")},
		arangotest.Configs: {
			config("ranker", "ws1", "Ranker", "const k = 32;\nfunction "+codeWord+"(a, b) { return k * (a - b); }\nreturn "+codeWord+"(node.data.a, node.data.b);"),
			config("report-writer", "ws1", "Report", "return formatTable(incoming.rows);"),
			config("ghost-type", "ws2", "Ghost", "return "+codeWord+"(1, 2);"),
		},
	}
	if h.fake != nil {
		for coll, ds := range docs {
			for _, d := range ds {
				h.fake.Insert(coll, d)
			}
		}
		return
	}
	ctx := ctxT(t)
	db, err := h.src.Client().GetDatabase(ctx, h.cfg.Database, nil)
	if err != nil {
		t.Fatal(err)
	}
	for coll, ds := range docs {
		col, err := db.GetCollection(ctx, coll, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			if _, err := col.CreateDocument(ctx, d); err != nil {
				t.Fatalf("seed %s: %v", coll, err)
			}
		}
	}
}

// On Nodius's schema a question naming a word of a type's code finds the nodes of
// that type in ArangoDB itself (the View links the node types), with their type's
// code; a node that also matches by its key ranks above one that matches by its
// type's code alone; a type of another workspace credits nothing; retrieval builds
// its context from that ranking. Runs on a real ArangoDB too.
func TestSearchFindsNodesByTheirTypeCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	addRealSchemaGraph(t, h)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}

	hits := searchUntil(t, h, "rs", codeWord, 5)
	got := hitKeys(hits)
	if len(got) != 2 || !slices.Equal(slices.Sorted(slices.Values(got)), []string{"rival", "score"}) {
		t.Fatalf("TextSearch(%q) = %q, want the two nodes of the type whose code has it", codeWord, got)
	}
	for _, hit := range hits {
		if !strings.Contains(hit.Node.Process, "function "+codeWord) || hit.Score <= 0 {
			t.Errorf("hit %s: process %q, score %v; want its type's code and a score", hit.Node.Key, hit.Node.Process, hit.Score)
		}
	}
	// Scores add up: the key and the type's code beat the type's code alone.
	if got := hitKeys(searchUntil(t, h, "rs", "rival "+codeWord, 5)); len(got) < 2 || got[0] != "rival" || got[1] != "score" {
		t.Errorf("TextSearch(rival %s) = %q, want rival (key and code) then score (code)", codeWord, got)
	}
	// A word of another type's code finds that type's node only.
	if got := hitKeys(searchUntil(t, h, "rs", "formatTable", 5)); !slices.Equal(got, []string{"report"}) {
		t.Errorf("TextSearch(formatTable) = %q, want [report]", got)
	}

	// Search, the read tools' entry, the same way.
	res, err := h.src.Search(ctx, "rs", codeWord, 5, nil)
	if err != nil || len(res) != 2 || !strings.Contains(res[0].Node.Process, codeWord) {
		t.Errorf("Search(%q) = %q, %v; want the two nodes with their type's code", codeWord, hitKeys(res), err)
	}

	// Retrieval ranks in ArangoDB and shows the nodes with their type's code.
	opts := rag.DefaultOptions()
	opts.CacheTTL = 0
	c, err := rag.New(h.src, opts, nil).Retrieve(ctx, "rs", "where is "+codeWord+" computed?")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Retrieval.Server || len(c.Hits) == 0 || (c.Hits[0].Key != "score" && c.Hits[0].Key != "rival") {
		t.Fatalf("retrieval: server ranking %v, hits %+v; want a node of ranker first", c.Retrieval.Server, c.Hits)
	}
	// The hits' neighbours, read one by one, have their type's code too.
	code := map[string]string{"ranker": "function " + codeWord, "report-writer": "formatTable"}
	seen := 0
	for _, n := range c.Nodes {
		if want, ok := code[n.Type]; ok {
			seen++
			if !strings.Contains(n.Process, want) {
				t.Errorf("context node %s: process %q, want its type's code", n.Key, n.Process)
			}
		}
		if n.Key == "ghost" {
			t.Error("a node credited by a type of another workspace")
		}
	}
	if seen != 3 {
		t.Errorf("context nodes %+v: want score, rival and their neighbour report", c.Nodes)
	}
}

// Without the View (before arango setup), Search ranks in process over the nodes
// given their type's code, and finds them the same. Runs on a real ArangoDB too.
func TestSearchWithoutViewFindsTypeCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	addRealSchemaGraph(t, h)
	hits, err := h.src.Search(ctxT(t), "rs", codeWord, 5, nil)
	got := hitKeys(hits)
	if err != nil || len(got) != 2 || !slices.Equal(slices.Sorted(slices.Values(got)), []string{"rival", "score"}) {
		t.Fatalf("Search(%q) without the view = %q, %v; want rival and score", codeWord, got, err)
	}
	if !strings.Contains(hits[0].Node.Process, codeWord) {
		t.Errorf("hit %s without its type's code: %q", hits[0].Node.Key, hits[0].Node.Process)
	}
}

// The search over node types sends the fixed query only: the question, the
// workspace and the graph travel as bind variables, never inside the AQL.
func TestTypeCodeSearchUsesBindVariablesOnly(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	addRealSchemaGraph(t, h)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	question := codeWord + `" OR true RETURN 1 // ranker`
	before := len(h.fake.Queries())
	hits, err := h.src.TextSearch(ctx, "rs", question, 5)
	if err != nil || len(hits) == 0 {
		t.Fatalf("TextSearch = %q, %v", hitKeys(hits), err)
	}
	if u := h.fake.Unknown(); len(u) > 0 {
		t.Errorf("queries outside the fixed set: %q", u)
	}
	searched := false
	for _, q := range h.fake.Queries()[before:] {
		low := strings.ToLower(q.Query)
		for _, w := range []string{"computeelorating", "elo", "ranker", "return 1", "ws1", `"rs"`} {
			if strings.Contains(low, w) {
				t.Errorf("%q is inside the query text: %s", w, q.Query)
			}
		}
		if !strings.Contains(q.Query, "nodius_node_config") || !strings.Contains(q.Query, "SEARCH") {
			continue
		}
		searched = true
		b := q.BindVars
		if b["ws"] != "ws1" || b["gk"] != "rs" {
			t.Errorf("ws = %v, gk = %v; want ws1 and rs bound", b["ws"], b["gk"])
		}
		if qv, _ := b["q"].(string); !strings.Contains(qv, "computeelorating") || strings.ContainsAny(qv, `"'/`) {
			t.Errorf("q = %q, want the code word whole and no punctuation", qv)
		}
	}
	if !searched {
		t.Error("no search over the node types was sent")
	}
}

// A View made before node types were searched (nodes and edges only) counts as
// missing, so questions rank in process; setup adds the node types and says so.
// Runs on a real ArangoDB too.
func TestSetupAddsNodeTypesToThePreviousView(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	addRealSchemaGraph(t, h)
	ctx := ctxT(t)
	if err := h.src.SetupPreviousViewForTest(ctx); err != nil {
		t.Fatal(err)
	}
	old := reopen(t, h)
	if ready, err := old.SearchReady(ctx); err != nil || ready {
		t.Fatalf("view without node types: ready = %v, %v; want not ready", ready, err)
	}
	steps, err := old.SetupSearch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := stepStrings(steps); got[2] != "view nodius_nodes_search: updated (now also indexes node type code)" {
		t.Errorf("setup over the previous view = %q", got)
	}
	if got := hitKeys(searchUntil(t, h, "rs", "formatTable", 5)); !slices.Equal(got, []string{"report"}) {
		t.Errorf("after the update, formatTable = %q, want [report]", got)
	}
}

// recordingEmbedder gives every text the same vector and keeps the texts.
type recordingEmbedder struct {
	mu    sync.Mutex
	texts []string
}

func (e *recordingEmbedder) Model() string { return "test-embed" }

func (e *recordingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.texts = append(e.texts, texts...)
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0}
	}
	return out, nil
}

// The text embedded for a node on Nodius's schema holds its type's code (the
// same text builder as every source), and a change of the type's code re-embeds
// the nodes of that type only. Runs on a real ArangoDB too.
func TestEmbedTextHoldsTheTypeCode(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	addRealSchemaGraph(t, h)
	ctx := ctxT(t)
	emb := &recordingEmbedder{}
	sum, err := embedding.Run(ctx, h.src, "rs", emb, embedding.Options{})
	if err != nil || sum.Embedded != 5 || sum.Failed != 0 {
		t.Fatalf("embed = %+v, %v; want the 5 nodes", sum, err)
	}
	withCode := 0
	for _, text := range emb.texts {
		if strings.Contains(text, "node: score\n") || strings.Contains(text, "node: rival\n") {
			if !strings.Contains(text, "function "+codeWord) {
				t.Errorf("embedded text without the type's code:\n%s", text)
			}
			withCode++
		}
	}
	if withCode != 2 {
		t.Errorf("%d texts of ranker nodes, want 2", withCode)
	}

	// The type's code changes: its two nodes are embedded again, the rest skipped.
	changed := map[string]any{"type": "ranker", "handles": map[string]any{}, "size": map[string]any{"width": 200, "height": 100},
		"process": "return " + codeWord + "(node.data.a, node.data.b) * 2;"}
	if h.fake != nil {
		h.fake.Update(arangotest.Configs, "ranker", map[string]any{"node": changed})
	} else {
		db, err := h.src.Client().GetDatabase(ctx, h.cfg.Database, nil)
		if err != nil {
			t.Fatal(err)
		}
		col, err := db.GetCollection(ctx, arangotest.Configs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := col.UpdateDocument(ctx, "ranker", map[string]any{"node": changed}); err != nil {
			t.Fatal(err)
		}
	}
	emb.texts = nil
	sum, err = embedding.Run(ctx, h.src, "rs", emb, embedding.Options{})
	if err != nil || sum.Embedded != 2 || sum.Skipped != 3 {
		t.Fatalf("embed after the type's code changed = %+v, %v; want its 2 nodes again, 3 skipped", sum, err)
	}
	for _, text := range emb.texts {
		if !strings.Contains(text, "* 2;") {
			t.Errorf("re-embedded text without the new code:\n%s", text)
		}
	}
}

// The fake's View is faithful for node types too: a View whose link to the node
// types lacks node.process finds nothing by a type's code.
func TestFakeViewFindsTypeCodeOnlyWhenIndexed(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	addRealSchemaGraph(t, h)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	if got := hitKeys(searchUntil(t, h, "rs", "formatTable", 5)); !slices.Equal(got, []string{"report"}) {
		t.Fatalf("formatTable = %q, want [report]", got)
	}
	view := h.fake.View(arango.SearchView)
	links := view["links"].(map[string]any)
	configs := links[arangotest.Configs].(map[string]any)
	delete(configs["fields"].(map[string]any), "node")
	h.fake.SetView(arango.SearchView, view)
	src := reopen(t, h)
	src.SetSearchReadyForTest(true) // as a View read before it changed
	if hits, err := src.TextSearch(ctx, "rs", "formatTable", 5); err != nil || len(hits) != 0 {
		t.Errorf("formatTable on a view without node.process = %q, %v; want nothing", hitKeys(hits), err)
	}
}
