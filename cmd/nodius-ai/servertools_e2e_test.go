package main_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// The proposal types the server's tools add go through ask → approve → undo on a
// graph file in Nodius's format: what approve writes is what was shown, and undo
// gives back the file's graph as it was.
func TestServerToolProposalsApproveAndUndo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, tool, args string
		shown            []string
		applied          func(t *testing.T, doc typedGraph)
	}{
		{name: "node with edges", tool: "propose_create_node_with_edges",
			args:  `{"typeKey":"log-node","posX":1300,"posY":500,"edges":[{"direction":"in","handleId":"0","targetNodeKey":"filter-active","targetHandleId":"0","label":"log"}],"reason":"log"}`,
			shown: []string{"create node (log-node) on sheet 0 at (1300, 500) with 1 edge(s)", "+ edge filter-active:0 → (new node):0 [log]"},
			applied: func(t *testing.T, doc typedGraph) {
				if len(doc.Nodes) != 10 || len(doc.Edges) != 7 {
					t.Errorf("%d nodes, %d edges after approve, want 10 and 7", len(doc.Nodes), len(doc.Edges))
				}
				if code := doc.typeCode("log-node"); code == "" {
					t.Error("a new node emptied its type's code")
				}
			}},
		{name: "type code", tool: "propose_configure_node_type",
			args:  `{"mode":"update","typeKey":"api-call","displayName":"API Call","processPatches":[{"search":"// Fetch season averages","replace":"// Fetch v2 season averages"}],"reason":"v2"}`,
			shown: []string{"update node type api-call (API Call)", "- // Fetch season averages", "+ // Fetch v2 season averages", "every node of this type changes with it: fetch-api"},
			applied: func(t *testing.T, doc typedGraph) {
				if code := doc.typeCode("api-call"); !strings.HasPrefix(code, "// Fetch v2 season averages") {
					t.Errorf("the type's node.process after approve: %q", code)
				}
			}},
		{name: "type create", tool: "propose_configure_node_type",
			args:  `{"mode":"create","displayName":"Score Check","description":"Checks scores.","category":"data","icon":"check","process":"if (incoming[0].data.pts > 0) next(incoming[0].data);","size":{"width":240,"height":90},"border":{"radius":6,"normalColor":"#336"},"reason":"a checker"}`,
			shown: []string{"+ create node type score-check (Score Check)", "displayName: \"Score Check\"", "size: {\"height\":90,\"width\":240}", "border: {", "+ if (incoming[0].data.pts > 0) next(incoming[0].data);"},
			applied: func(t *testing.T, doc typedGraph) {
				if code := doc.typeCode("score-check"); !strings.HasPrefix(code, "if (incoming") {
					t.Errorf("the new type's node.process: %q", code)
				}
				if c := doc.config("score-check"); c == nil || c["category"] != "data" || !strings.Contains(compact(c["node"]), `"size":{"height":90,"width":240}`) || !strings.Contains(compact(c["border"]), `"color":"#336"`) {
					t.Errorf("the new type: %v", c)
				}
			}},
		{name: "type update with look", tool: "propose_configure_node_type",
			args:  `{"mode":"update","typeKey":"api-call","displayName":"Season API","icon":"cloud","size":{"width":260,"height":120},"border":{"hoverColor":"red"},"handles":{"L":{"position":"separate","point":[{"id":"0","type":"in","accept":"any"}]},"R":{"position":"separate","point":[{"id":"0","type":"out","accept":"any"},{"id":"1","type":"out","accept":"any"},{"id":"2","type":"out","accept":"any"}]}},"reason":"look"}`,
			shown: []string{"update node type api-call (Season API)", "displayName: \"API Call\" → \"Season API\"", "size.width: 220 → 260", "handles: \"L:0:in, R:0:out, R:1:out\" → \"L:0:in, R:0:out, R:1:out, R:2:out\"", "every node of this type changes with it: fetch-api"},
			applied: func(t *testing.T, doc typedGraph) {
				c := doc.config("api-call")
				if c == nil || c["displayName"] != "Season API" || c["icon"] != "cloud" || !strings.Contains(compact(c["node"]), `"id":"2"`) || !strings.Contains(compact(c["border"]), `"hover":{"color":"red"}`) {
					t.Errorf("the type after approve: %v", c)
				}
				if code := doc.typeCode("api-call"); !strings.HasPrefix(code, "// Fetch season averages") {
					t.Errorf("a change of look changed the code: %q", code)
				}
			}},
		{name: "html node", tool: "propose_update_node",
			args:  `{"nodeKey":"display-html","updates":{"html":"<style>.t { color: navy }</style><div class=\"t\" onclick=\"pick()\"><h1>Stats</h1><p>Top <b>players</b></p></div>"},"reason":"a title"}`,
			shown: []string{"update node display-html: data"},
			applied: func(t *testing.T, doc typedGraph) {
				var data any
				for _, n := range doc.Nodes {
					if n["_key"] == "display-html" {
						data = n["data"]
					}
				}
				got := compact(data)
				for _, want := range []string{`"type":"list"`, `"name":"t"`, `"rules":[["color","navy"]]`, `{"call":"pick()","name":"click"}`, `"content":{"en":"Top <b>players</b>"}`} {
					if !strings.Contains(got, want) {
						t.Errorf("the html node's data lacks %s: %s", want, got)
					}
				}
			}},
		{name: "node sized by its type", tool: "propose_create_node",
			args:  `{"typeKey":"html","nodeKey":"board","posX":0,"posY":900,"reason":"a board"}`,
			shown: []string{"create node board (html)", "size: 640×360 (its type's)"},
			applied: func(t *testing.T, doc typedGraph) {
				for _, n := range doc.Nodes {
					if n["_key"] == "board" && compact(n["size"]) != `{"dynamic":true,"height":360,"width":640}` {
						t.Errorf("new html node's size: %s", compact(n["size"]))
					}
				}
			}},
		{name: "layout", tool: "propose_reorganize_layout", args: `{"nodeKeys":["root","fetch-api","filter-active"],"reason":"tidy"}`,
			shown: []string{"lay out 3 node(s) again", "~ move "},
			applied: func(t *testing.T, doc typedGraph) {
				if doc.pos("root")[0] >= doc.pos("fetch-api")[0] || doc.pos("fetch-api")[0] >= doc.pos("filter-active")[0] {
					t.Errorf("not left to right: %v %v %v", doc.pos("root"), doc.pos("fetch-api"), doc.pos("filter-active"))
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "p1", Name: tc.tool, Arguments: tc.args}}},
				llmtest.Turn{Text: "Done."})
			before := canonicalGraph(t, e.graph)
			r := e.run("", "ask", "--graph", "demo", "change it")
			if r.code != 3 {
				t.Fatalf("ask: %d %s", r.code, r.stderr)
			}
			for _, want := range tc.shown {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("ask shows no %q:\n%s", want, r.stderr)
				}
			}
			thread := strings.Fields(r.stderr[strings.Index(r.stderr, "nodius-ai approve ")+len("nodius-ai approve "):])[0]
			if r := e.run("", "approve", thread); r.code != 0 {
				t.Fatalf("approve: %d %s", r.code, r.stderr)
			}
			tc.applied(t, readTypedGraph(t, e.graph))
			if r := e.run("", "undo", thread); r.code != 0 {
				t.Fatalf("undo: %d %s%s", r.code, r.stdout, r.stderr)
			}
			if now := canonicalGraph(t, e.graph); now != before {
				t.Errorf("undo did not give the graph back:\nwant %s\ngot  %s", before, now)
			}
		})
	}
}

type typedGraph struct {
	Nodes []map[string]any `json:"nodes"`
	Edges []map[string]any `json:"edges"`
	Types []struct {
		Key  string `json:"_key"`
		Node struct {
			Process string `json:"process"`
		} `json:"node"`
	} `json:"nodeConfigs"`
	Configs []map[string]any `json:"-"`
}

// config is the type's config as the file holds it.
func (d typedGraph) config(key string) map[string]any {
	for _, c := range d.Configs {
		if c["_key"] == key {
			return c
		}
	}
	return nil
}

func compact(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(b.String())
}

func readTypedGraph(t *testing.T, path string) typedGraph {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d typedGraph
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		Configs []map[string]any `json:"nodeConfigs"`
	}
	_ = json.Unmarshal(b, &raw)
	d.Configs = raw.Configs
	return d
}

func (d typedGraph) typeCode(key string) string {
	for _, c := range d.Types {
		if c.Key == key {
			return c.Node.Process
		}
	}
	return ""
}

func (d typedGraph) pos(key string) [2]float64 {
	for _, n := range d.Nodes {
		if n["_key"] == key {
			x, _ := n["posX"].(float64)
			y, _ := n["posY"].(float64)
			return [2]float64{x, y}
		}
	}
	return [2]float64{}
}
