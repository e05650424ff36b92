package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/server/servertest"
)

// The same small graph is served by each kind of source (file, ArangoDB, the Nodius
// server), and `inspect context` must print
// the same thing for all of them: what a source stores (composite keys, _from/_to,
// duplicated edges, other workspaces) must never reach the retrieval context.

const (
	srcGraph = "nba"
	srcWS    = "acme"
	srcToken = "jwt-for-tests"
)

// sourceGraph is the graph in the file format's vocabulary (local keys). Nodes and
// edges are in key order, and sheet "0" comes first, so that every source lists them
// in the same order.
type sourceGraph struct {
	graph   map[string]any
	nodes   []map[string]any
	edges   []map[string]any
	configs []map[string]any
}

func nbaGraph() sourceGraph {
	handles := map[string]any{
		"L": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "any"}}},
		"R": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "out", "accept": "any"}}},
	}
	node := func(key, typ, sheet, process string, data map[string]any) map[string]any {
		return map[string]any{"_key": key, "type": typ, "sheet": sheet, "process": process, "handles": handles,
			"data": data, "posX": 100, "posY": 50, "size": map[string]any{"width": 200, "height": 100}}
	}
	edge := func(key, from, to, sheet string) map[string]any {
		return map[string]any{"_key": key, "sheet": sheet, "source": from, "sourceHandle": "0", "target": to, "targetHandle": "0", "label": ""}
	}
	return sourceGraph{
		graph: map[string]any{"_key": srcGraph, "name": "NBA stats", "description": "games of the season", "workspace": srcWS,
			"sheets": map[string]any{"0": "main", "1": "reports"}, "metadata": map[string]any{}},
		nodes: []map[string]any{
			node("fetch-api", "api-call", "0", "const res = await fetch(url); return res.json();", map[string]any{"url": "https://stats.example/games", "method": "GET"}),
			node("filter-games", "js-filter", "0", "return games.filter(g => g.home);", map[string]any{}),
			node("render-table", "html", "0", "<table></table>", map[string]any{}),
			node("root", "starter", "0", "", map[string]any{}),
			node("season-report", "report", "1", "summarize(games)", map[string]any{}),
		},
		edges: []map[string]any{
			edge("e1", "root", "fetch-api", "0"),
			edge("e2", "fetch-api", "filter-games", "0"),
			edge("e3", "filter-games", "render-table", "0"),
			edge("e4", "render-table", "season-report", "1"),
		},
		configs: []map[string]any{
			{"_key": "api-call", "displayName": "API Call", "description": "calls an HTTP API", "category": "network", "icon": "globe", "handles": map[string]any{}},
			{"_key": "js-filter", "displayName": "Filter", "description": "keeps matching items", "category": "data", "icon": "filter", "handles": map[string]any{}},
			{"_key": "report", "displayName": "Report", "description": "writes a report", "category": "output", "icon": "file", "handles": map[string]any{}},
		},
	}
}

// writeFile writes the graph as a file: source.
func (g sourceGraph) writeFile(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"graph": g.graph, "nodes": g.nodes, "edges": g.edges, "nodeConfigs": g.configs})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nba.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadArango stores the graph as the Nodius server does: composite keys {graphKey}-{localKey}
// and graphKey on nodes and edges, edges that name their ends only by _from/_to,
// configs by workspace. A graph, node and config of another workspace sit next to
// it.
func (g sourceGraph) loadArango(fa *arangotest.Server) {
	fa.Insert(arangotest.Graphs, g.graph)
	for _, n := range g.nodes {
		d := cloneMap(n)
		d["_key"], d["graphKey"] = srcGraph+"-"+n["_key"].(string), srcGraph
		fa.Insert(arangotest.Nodes, d)
	}
	for _, e := range g.edges {
		d := cloneMap(e)
		d["_key"], d["graphKey"] = srcGraph+"-"+e["_key"].(string), srcGraph
		d["_from"] = arangotest.Nodes + "/" + srcGraph + "-" + e["source"].(string)
		d["_to"] = arangotest.Nodes + "/" + srcGraph + "-" + e["target"].(string)
		delete(d, "source")
		delete(d, "target")
		fa.Insert(arangotest.Edges, d)
	}
	for _, c := range g.configs {
		d := cloneMap(c)
		d["workspace"] = srcWS
		fa.Insert(arangotest.Configs, d)
	}
	fa.Insert(arangotest.Graphs, map[string]any{"_key": "rival", "name": "Rival", "workspace": "other", "sheets": map[string]any{"0": "main"}})
	fa.Insert(arangotest.Nodes, map[string]any{"_key": "rival-fetch-api", "graphKey": "rival", "type": "api-call", "sheet": "0", "process": "fetch api secret"})
	fa.Insert(arangotest.Configs, map[string]any{"_key": "hidden", "workspace": "other", "displayName": "Hidden"})
}

func cloneMap(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// nodiusServer is a stand-in Nodius server (its WebSocket on the HTTP port + 2000,
// where the CLI looks) holding the graph as /api/graph/get answers it (sheetsList,
// _sheets with graphKey on nodes and edges), its node types and one of another
// workspace, for the user of srcToken.
func nodiusServer(t *testing.T, g sourceGraph) *servertest.Server {
	t.Helper()
	s, err := servertest.New(servertest.Options{PairedPorts: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	doc := cloneMap(g.graph)
	doc["sheetsList"] = doc["sheets"]
	delete(doc, "sheets")
	doc["lastUpdatedTime"] = 1
	sheets := map[string]map[string][]any{}
	for id := range g.graph["sheets"].(map[string]any) {
		sheets[id] = map[string][]any{"nodes": {}, "edges": {}}
	}
	for _, n := range g.nodes {
		d := cloneMap(n)
		d["graphKey"] = srcGraph
		sheets[n["sheet"].(string)]["nodes"] = append(sheets[n["sheet"].(string)]["nodes"], d)
	}
	for _, e := range g.edges {
		d := cloneMap(e)
		d["graphKey"] = srcGraph
		sheets[e["sheet"].(string)]["edges"] = append(sheets[e["sheet"].(string)]["edges"], d)
	}
	doc["_sheets"] = sheets
	body, _ := json.Marshal(doc)
	if err := s.AddGraph(body); err != nil {
		t.Fatal(err)
	}
	var configs []json.RawMessage
	for _, c := range append(slices.Clone(g.configs), map[string]any{"_key": "hidden", "workspace": "other", "displayName": "Hidden"}) {
		d := cloneMap(c)
		if d["workspace"] == nil {
			d["workspace"] = srcWS
		}
		b, _ := json.Marshal(d)
		configs = append(configs, b)
	}
	s.SetNodeConfigs(configs)
	s.AddUser(srcToken, servertest.User{ID: "u1", Name: "alice", Workspaces: []string{srcWS}})
	return s
}

// contextOut is `inspect context --format json`, as scripts read it.
type contextOut struct {
	Graph string `json:"graph"`
	Query string `json:"query"`
	Hits  []struct {
		Key   string  `json:"key"`
		Score float64 `json:"score"`
	} `json:"hits"`
	Nodes   []struct{ Key, Type, Sheet string }      `json:"nodes"`
	Edges   []struct{ Source, Target, Label string } `json:"edges"`
	Configs []string                                 `json:"configs"`
	TOON    string                                   `json:"toon"`
	Tokens  struct{ TOON, JSON int }                 `json:"tokens"`
}

func decodeContext(t *testing.T, out string) contextOut {
	t.Helper()
	var c contextOut
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("inspect context output: %v\n%s", err, out)
	}
	return c
}

const srcQuery = "fetch api"

// TestInspectContextSources: the arango:// and server: sources (held in memory, or
// through the Arango fallback) give exactly what the file source gives for the same
// graph; a graph the source may not show is "graph not found".
func TestInspectContextSources(t *testing.T) {
	t.Parallel()
	g := nbaGraph()
	file := g.writeFile(t)
	want, errOut, code := runCLI(t, "", nil, "inspect", "context", "--source", "file:"+file, "--graph", srcGraph, "--format", "json", srcQuery)
	if code != 0 {
		t.Fatalf("file source: exit %d, %s", code, errOut)
	}
	base := decodeContext(t, want)
	if base.Graph != srcGraph || len(base.Hits) == 0 || base.Hits[0].Key != "fetch-api" || base.Nodes[0].Key != "fetch-api" {
		t.Fatalf("file source context: graph %q hits %+v nodes %+v", base.Graph, base.Hits, base.Nodes)
	}
	if len(base.Nodes) < 3 || len(base.Edges) < 2 || !slices.Contains(base.Configs, "api-call") {
		t.Fatalf("file source context too small to compare: %+v", base)
	}

	// A Nodius server drops an edge whose ends are not both nodes of its sheet (e4
	// goes from sheet 0 to sheet 1) when it loads the graph to edit it, and so does
	// the server: source: it answers as the file source does for the graph without it.
	live := g
	live.edges = slices.DeleteFunc(slices.Clone(g.edges), func(e map[string]any) bool { return e["_key"] == "e4" })
	wantLive, errOut, code := runCLI(t, "", nil, "inspect", "context", "--source", "file:"+live.writeFile(t), "--graph", srcGraph, "--format", "json", srcQuery)
	if code != 0 || wantLive == want {
		t.Fatalf("file source without the cross-sheet edge: exit %d, %s (same output: %v)", code, errOut, wantLive == want)
	}

	fa := arangotest.New(t)
	g.loadArango(fa)
	nodius := nodiusServer(t, g)

	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
		arango bool // the fake ArangoDB is asked for the graph
	}{
		{"arango", []string{"--source", fa.URL(srcWS)}, 0, "", true},
		{"arango, workspace from --workspace", []string{"--source", strings.TrimSuffix(fa.URL(srcWS), "?workspace="+srcWS), "--workspace", srcWS}, 0, "", true},
		{"arango, graph of another workspace", []string{"--source", fa.URL("other")}, 2, `no graph "` + srcGraph + `"`, true},
		{"server", []string{"--source", "server:" + nodius.URL, "--token", srcToken}, 0, "", false},
		{"server, --fallback ignored", []string{"--source", "server:" + nodius.URL, "--token", srcToken, "--fallback", fa.URL(srcWS)}, 0, "--fallback is ignored", false},
		{"server, no token", []string{"--source", "server:" + nodius.URL}, 1, "401", false},
	}
	// Not parallel: each case tells by the fake's query count whether ArangoDB was asked.
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(fa.Queries())
			args := append([]string{"inspect", "context"}, tc.args...)
			out, errOut, code := runCLI(t, "", nil, append(args, "--graph", srcGraph, "--format", "json", srcQuery)...)
			if code != tc.code || !strings.Contains(errOut, tc.stderr) {
				t.Fatalf("exit %d (want %d), stderr %q (want %q)", code, tc.code, errOut, tc.stderr)
			}
			if asked := len(fa.Queries()) > before; asked != tc.arango {
				t.Errorf("ArangoDB asked = %v, want %v", asked, tc.arango)
			}
			if strings.Contains(errOut, arangotest.Password) || strings.Contains(errOut, srcToken) {
				t.Errorf("stderr shows a secret: %q", errOut)
			}
			if tc.code != 0 {
				if out != "" {
					t.Errorf("stdout %q on failure", out)
				}
				return
			}
			expect := want
			if !tc.arango && strings.HasPrefix(tc.name, "server") {
				expect = wantLive
			}
			if out != expect {
				t.Errorf("output differs from the file source's:\n got: %s\nwant: %s", out, expect)
			}
			got := decodeContext(t, out)
			for _, n := range got.Nodes {
				if strings.HasPrefix(n.Key, srcGraph+"-") || strings.Contains(n.Key, "/") {
					t.Errorf("node key %q is a storage key", n.Key)
				}
			}
			for _, e := range got.Edges {
				if strings.Contains(e.Source+e.Target, "/") || strings.HasPrefix(e.Source, srcGraph+"-") || strings.HasPrefix(e.Target, srcGraph+"-") {
					t.Errorf("edge %s -> %s has storage keys", e.Source, e.Target)
				}
			}
			if strings.Contains(got.TOON, "rival") || strings.Contains(got.TOON, "secret") || slices.Contains(got.Configs, "hidden") {
				t.Errorf("another workspace leaked into the context: %s", got.TOON)
			}
		})
	}
	if unknown := fa.Unknown(); len(unknown) > 0 {
		t.Errorf("queries outside arango.Queries(): %q", unknown)
	}
	checkBindOnly(t, fa, srcGraph, srcWS, "other", "fetch")
}

// checkBindOnly: no query text sent holds any of words (keys, workspaces, user
// input); they travel as bind variables, and every text is one of the package's.
func checkBindOnly(t *testing.T, fa *arangotest.Server, words ...string) {
	t.Helper()
	sent := fa.Queries()
	if len(sent) == 0 {
		t.Fatal("no query reached the fake ArangoDB")
	}
	for _, q := range sent {
		if !slices.Contains(arango.Queries(), q.Query) {
			t.Errorf("query outside arango.Queries(): %s", q.Query)
		}
		for _, w := range words {
			if strings.Contains(q.Query, w) {
				t.Errorf("%q inside the query text: %s", w, q.Query)
			}
		}
	}
}

// TestAskApproveOnArango: a proposal made over an arango:// source is applied to the
// database when approved: the node document gets the composite key and graphKey,
// written through a fixed query with bind variables.
func TestAskApproveOnArango(t *testing.T) {
	t.Parallel()
	fa := arangotest.New(t)
	nbaGraph().loadArango(fa)
	llm := llmtest.Start(t,
		llmtest.Turn{Text: "I suggest a report node.", ToolCalls: []llmtest.ToolCall{{ID: "p1", Name: "propose_create_node",
			Arguments: `{"nodeKey":"log-result","typeKey":"report","sheet":"1","posX":900,"posY":100,"reason":"log the season"}`}}},
		llmtest.Turn{Text: "Created log-result."},
	)
	env := map[string]string{
		"NODIUS_AI_BASE_URL": llm.OpenAIURL(), "NODIUS_AI_API_KEY": "x", "NODIUS_AI_MODEL": "fake-model",
		"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db"), "NODIUS_AI_SOURCE": fa.URL(srcWS),
	}
	const stored = srcGraph + "-log-result"

	out, errOut, code := runCLI(t, "", env, "ask", "--source", fa.URL(srcWS), "--graph", srcGraph, "--format", "json", "add a report node")
	if code != ExitProposal {
		t.Fatalf("ask: exit %d (want %d), stderr %q", code, ExitProposal, errOut)
	}
	var first struct {
		Type     string `json:"type"`
		ThreadID string `json:"thread_id"`
		Graph    string `json:"graph"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Type != "thread" || first.Graph != srcGraph {
		t.Fatalf("first event %q: %v", lines[0], err)
	}
	if !strings.Contains(lines[len(lines)-1], `"type":"proposal"`) {
		t.Errorf("last event %q, want the proposal", lines[len(lines)-1])
	}
	if fa.Doc(arangotest.Nodes, stored) != nil {
		t.Fatal("the node was written before approval")
	}

	out, errOut, code = runCLI(t, "", env, "approve", first.ThreadID)
	if code != 0 || out != "Created log-result.\n" {
		t.Fatalf("approve: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	doc := fa.Doc(arangotest.Nodes, stored)
	if doc == nil {
		t.Fatalf("no document %s; nodes: %v", stored, docKeys(fa.Docs(arangotest.Nodes)))
	}
	if doc["graphKey"] != srcGraph || doc["type"] != "report" || doc["sheet"] != "1" {
		t.Errorf("stored node = %v", doc)
	}
	if fa.Doc(arangotest.Nodes, "log-result") != nil {
		t.Error("the node was stored under its local key")
	}
	var insert *arangotest.Sent
	for _, q := range fa.Queries() {
		if d, ok := q.BindVars["doc"].(map[string]any); ok && d["_key"] == stored {
			insert = &q
		}
	}
	if insert == nil {
		t.Fatal("no query carried the new node as the @doc bind variable")
	}
	if !strings.Contains(insert.Query, "@doc") || !strings.Contains(insert.Query, arangotest.Nodes) {
		t.Errorf("insert query %q", insert.Query)
	}
	// The model saw the decision under its call id.
	reqs := llm.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests, want 2", len(reqs))
	}
	if m := reqs[1].Messages[len(reqs[1].Messages)-1]; m.ToolCallID != "p1" || !strings.Contains(m.Content, "approved") {
		t.Errorf("decision sent as %+v", m)
	}
	if unknown := fa.Unknown(); len(unknown) > 0 {
		t.Errorf("queries outside arango.Queries(): %q", unknown)
	}
	checkBindOnly(t, fa, srcGraph, srcWS, "log-result", "report")

	// The thread recorded its source without the password (the approval above found
	// it in the environment), and the database holds the password nowhere.
	shown, _, _ := runCLI(t, "", env, "threads", "show", first.ThreadID, "--format", "json")
	var th struct {
		Thread struct {
			Source string `json:"source"`
		} `json:"thread"`
	}
	if err := json.Unmarshal([]byte(shown), &th); err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(fa.URL(srcWS), arangotest.User+":"+arangotest.Password+"@", arangotest.User+"@", 1); th.Thread.Source != want {
		t.Errorf("recorded source %q, want %q", th.Thread.Source, want)
	}
	for _, f := range []string{env["NODIUS_AI_DB"], env["NODIUS_AI_DB"] + "-wal"} {
		if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), arangotest.Password) {
			t.Errorf("%s holds the ArangoDB password", filepath.Base(f))
		}
	}
}

func docKeys(docs []map[string]any) []string {
	var out []string
	for _, d := range docs {
		out = append(out, fmt.Sprint(d["_key"]))
	}
	return out
}
