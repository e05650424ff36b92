package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/server"
)

func TestReadToolDefs(t *testing.T) {
	t.Parallel()
	defs := ReadToolDefs()
	want := []string{ReadGraphOverview, SearchNodes, ExploreNeighborhood, ReadNodeDetail, ReadNodeConfig, ListAvailableNodeTypes, ListNodeEdges, ReadSubgraph}
	if len(defs) != len(want) {
		t.Fatalf("got %d read tools, want %d", len(defs), len(want))
	}
	for i, d := range defs {
		if d.Name != want[i] {
			t.Errorf("tool %d is %q, want %q", i, d.Name, want[i])
		}
		if len(d.Description) < 40 {
			t.Errorf("%s: description too short to guide the model: %q", d.Name, d.Description)
		}
		checkSchema(t, d.Name, d.Parameters, false)
	}
}

// checkSchema checks a tool's parameters are an object schema whose required names
// are all properties, with additionalProperties false exactly for strict tools.
func checkSchema(t *testing.T, name string, raw json.RawMessage, strict bool) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: parameters are not JSON: %v", name, err)
	}
	if s["type"] != "object" {
		t.Errorf("%s: schema type %v, want object", name, s["type"])
	}
	props, _ := s["properties"].(map[string]any)
	req, ok := s["required"].([]any)
	if !ok {
		t.Errorf("%s: required must be an array (even empty), got %T", name, s["required"])
	}
	for _, r := range req {
		if _, ok := props[r.(string)]; !ok {
			t.Errorf("%s: required %q is not a property", name, r)
		}
	}
	if ap, has := s["additionalProperties"]; strict && ap != false || !strict && has {
		t.Errorf("%s: additionalProperties = %v (present %v), strict %v", name, ap, has, strict)
	}
	return s
}

func TestRunReadTools(t *testing.T) {
	t.Parallel()
	x := NewExecutor(loadDemo(t), "demo")
	tests := []struct {
		name, tool, args string
		want             []string // substrings of the result
		notWant          []string
		errCode          string // *Error code expected, "" for success
		errHas           string
	}{
		{name: "overview", tool: ReadGraphOverview, args: `{"graphKey":"demo"}`,
			want: []string{"NBA Stats Workflow", "sheets[2]{id,name,nodes,edges}", `"0",main,7,6`, "data-processing,2,0", "api-call,API Call,false,1", "html,html,true,2"}},
		{name: "overview same graph key", tool: ReadGraphOverview, args: `{"graphKey":"demo"}`, want: []string{"nodes: 9", "edges: 6"}},
		{name: "overview without graphKey", tool: ReadGraphOverview, args: ``, errCode: CodeInvalidArgument, errHas: `missing required argument "graphKey"`},
		{name: "overview other graph reads the current one", tool: ReadGraphOverview, args: `{"graphKey":"other"}`, want: []string{"nodes: 9"}},
		{name: "overview lenient unknown key", tool: ReadGraphOverview, args: `{"graphKey":"demo","verbose":true}`, want: []string{"nodes: 9"}},
		{name: "subgraph", tool: ReadSubgraph, args: `{"nodeKeys":["fetch-api","root","nope"]}`,
			want: []string{"nodes[2]{_key,type,sheet,posX,posY}", "notFound: nope", "configs[1]", `e2,"root:0","fetch-api:0"`}},
		{name: "subgraph fields", tool: ReadSubgraph, args: `{"nodeKeys":["fetch-api"],"fields":["_key","data"],"includeEdges":false,"includeConfigs":false}`,
			want: []string{"nodes[1]{_key,data}", "fetch-api,", "balldontlie"}},
		{name: "subgraph bad field", tool: ReadSubgraph, args: `{"nodeKeys":["root"],"fields":["color"]}`, errCode: CodeInvalidArgument, errHas: `unknown field "color"`},
		{name: "subgraph keys not strings", tool: ReadSubgraph, args: `{"nodeKeys":[1]}`, errCode: CodeInvalidArgument, errHas: `must be a string`},
		{name: "config has the type's code", tool: ReadNodeConfig, args: `{"typeKey":"api-call"}`, want: []string{"process:", "fetchWithRetry"}},
		{name: "search", tool: SearchNodes, args: `{"query":"fetch api","maxResults":3}`,
			want: []string{"query: fetch api", "results[", "{key,type,sheet,score,preview}", "fetch-api,api-call (API Call),main"}},
		{name: "search sheet filter", tool: SearchNodes, args: `{"query":"sort stats incoming","sheetId":"1"}`,
			want: []string{"sort-stats,transform (Transform),data-processing"}, notWant: []string{"fetch-api"}},
		{name: "search sheet by name", tool: SearchNodes, args: `{"query":"sort","sheetId":"data-processing"}`, want: []string{"sort-stats"}},
		{name: "search unknown sheet", tool: SearchNodes, args: `{"query":"x","sheetId":"9"}`, errCode: CodeInvalidArgument, errHas: `"0" (main)`},
		{name: "search no match", tool: SearchNodes, args: `{"query":"zzzqqq"}`, want: []string{"results: []", "hint:"}},
		{name: "search null optional", tool: SearchNodes, args: `{"query":"fetch","maxResults":null,"sheetId":null}`, want: []string{"fetch-api"}},
		{name: "search missing query", tool: SearchNodes, args: `{}`, errCode: CodeInvalidArgument, errHas: `missing required argument "query"`},
		{name: "search empty query", tool: SearchNodes, args: `{"query":"  "}`, errCode: CodeInvalidArgument, errHas: "must not be empty"},
		{name: "search query wrong type", tool: SearchNodes, args: `{"query":42}`, errCode: CodeInvalidArgument, errHas: "must be a string, got a number 42"},
		{name: "search maxResults too big", tool: SearchNodes, args: `{"query":"a","maxResults":51}`, errCode: CodeInvalidArgument, errHas: "between 1 and 50"},
		{name: "search maxResults fraction", tool: SearchNodes, args: `{"query":"a","maxResults":2.5}`, errCode: CodeInvalidArgument, errHas: "integer"},
		{name: "search maxResults string", tool: SearchNodes, args: `{"query":"a","maxResults":"5"}`, errCode: CodeInvalidArgument, errHas: `must be an integer, got a string "5"`},
		{name: "search integral float ok", tool: SearchNodes, args: `{"query":"fetch","maxResults":2.0}`, want: []string{"fetch-api"}},
		{name: "explore", tool: ExploreNeighborhood, args: `{"nodeKey":"fetch-api"}`,
			want: []string{"start: fetch-api", "direction: any", "depth: 2", "nodes[6]", "edges[5]{key,from,to,label}", `e4,"fetch-api:1","error-handler:0",error`}},
		{name: "explore outbound depth 3", tool: ExploreNeighborhood, args: `{"nodeKey":"root","maxDepth":3,"direction":"outbound"}`,
			want: []string{"display-html", "error-handler"}, notWant: []string{"entry-form,"}},
		{name: "explore depth out of range", tool: ExploreNeighborhood, args: `{"nodeKey":"root","maxDepth":4}`, errCode: CodeInvalidArgument, errHas: "between 1 and 3"},
		{name: "explore bad direction", tool: ExploreNeighborhood, args: `{"nodeKey":"root","direction":"up"}`, errCode: CodeInvalidArgument, errHas: "any, inbound, outbound"},
		{name: "explore unknown node", tool: ExploreNeighborhood, args: `{"nodeKey":"fetchapi"}`, errCode: CodeNotFound, errHas: `did you mean "fetch-api"`},
		{name: "detail", tool: ReadNodeDetail, args: `{"nodeKey":"fetch-api"}`,
			want: []string{"key: fetch-api", "type: api-call (API Call)", "sheetName: main", `handles: "L:0:in, R:0:out, R:1:out"`, "url: \"https://api.balldontlie.io", "outbound[2]"}},
		{name: "detail unknown node no hint", tool: ReadNodeDetail, args: `{"nodeKey":"completely-different-thing"}`, errCode: CodeNotFound, errHas: "use search_nodes"},
		{name: "detail case hint", tool: ReadNodeDetail, args: `{"nodeKey":"Fetch-API"}`, errCode: CodeNotFound, errHas: `"fetch-api"`},
		{name: "detail not json", tool: ReadNodeDetail, args: `{"nodeKey":`, errCode: CodeInvalidJSON, errHas: "not valid JSON"},
		{name: "detail array args", tool: ReadNodeDetail, args: `["fetch-api"]`, errCode: CodeInvalidJSON, errHas: "must be a JSON object"},
		{name: "config custom", tool: ReadNodeConfig, args: `{"typeKey":"api-call"}`, want: []string{"displayName: API Call", "category: network", "builtin: false", "defaultSize:", "width: 220"}},
		{name: "config builtin", tool: ReadNodeConfig, args: `{"typeKey":"starter"}`, want: []string{"builtin: true", "R:0:out"}},
		{name: "config unknown", tool: ReadNodeConfig, args: `{"typeKey":"api_call"}`, errCode: CodeNotFound, errHas: `did you mean "api-call"`},
		{name: "types", tool: ListAvailableNodeTypes, args: `{}`,
			want: []string{"builtin[4]{type,handles,description}", "entryType", "custom[4]", "log-node,Log Node,utility", "L:0:in(array)"}},
		{name: "edges any", tool: ListNodeEdges, args: `{"nodeKey":"fetch-api"}`,
			want: []string{"edges[3]{key,direction,from,to,label,sheet}", `e2,in,"root:0","fetch-api:0"`, `e3,out,"fetch-api:0","filter-active:0",success`}},
		{name: "edges inbound", tool: ListNodeEdges, args: `{"nodeKey":"fetch-api","direction":"inbound"}`, want: []string{"edges[1]"}, notWant: []string{"e3"}},
		{name: "edges isolated", tool: ListNodeEdges, args: `{"nodeKey":"disconnected-note"}`, want: []string{"edges: []"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, err := x.Run(context.Background(), tc.tool, tc.args)
			if tc.errCode != "" {
				var te *Error
				if !errors.As(err, &te) {
					t.Fatalf("want *Error %s, got %v (result %q)", tc.errCode, err, out)
				}
				if te.Code != tc.errCode || !strings.Contains(te.Error(), tc.errHas) {
					t.Fatalf("error = [%s] %v, want [%s] containing %q", te.Code, te, tc.errCode, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("result lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(out, w) {
					t.Errorf("result has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestRunUnknownTool(t *testing.T) {
	t.Parallel()
	x := NewExecutor(loadDemo(t), "demo")
	for _, name := range []string{"delete_everything", "", ProposeCreateNode} {
		_, err := x.Run(context.Background(), name, `{}`)
		var te *Error
		if !errors.As(err, &te) || te.Code != CodeUnknownTool || !strings.Contains(te.Msg, SearchNodes) {
			t.Errorf("Run(%q) = %v, want unknown_tool listing the read tools", name, err)
		}
	}
}

func TestRunSourceErrorIsNotToolError(t *testing.T) {
	t.Parallel()
	x := NewExecutor(loadDemo(t), "missing-graph")
	_, err := x.Run(context.Background(), ReadGraphOverview, `{"graphKey":"demo"}`)
	var te *Error
	if err == nil || errors.As(err, &te) || !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("want a wrapped source error, got %v", err)
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := NewExecutor(loadDemo(t), "demo").Run(ctx, SearchNodes, `{"query":"x"}`)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

func TestTruncateAndPreview(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 10)
	if got := truncate(long, 4); !strings.HasPrefix(got, "éééé… [truncated, 10 characters") {
		t.Errorf("truncate = %q", got)
	}
	if got := truncate("abc", 4); got != "abc" {
		t.Errorf("truncate short = %q", got)
	}
	if got := preview("a\n\t  b   c", 10); got != "a b c" {
		t.Errorf("preview = %q", got)
	}
	if got := preview("abcdef", 3); got != "abc…" {
		t.Errorf("preview cut = %q", got)
	}
}

func TestCloseKeys(t *testing.T) {
	t.Parallel()
	keys := []string{"fetch-api", "filter-active", "display-html", "return", "root"}
	tests := []struct {
		want string
		out  []string
	}{
		{"fetch_api", []string{"fetch-api"}},
		{"FETCH-API", []string{"fetch-api"}},
		{"filter", []string{"filter-active"}},
		{"roots", []string{"root"}},
		{"zzzzzzzzzzzz", nil},
	}
	for _, tc := range tests {
		got := closeKeys(tc.want, keys, 3)
		if len(tc.out) == 0 && len(got) != 0 || len(tc.out) > 0 && (len(got) == 0 || got[0] != tc.out[0]) {
			t.Errorf("closeKeys(%q) = %v, want first %v", tc.want, got, tc.out)
		}
	}
}

func TestHandlesSummaryOrder(t *testing.T) {
	t.Parallel()
	h := map[string]datasource.HandleGroup{
		"B": {Point: []datasource.HandlePoint{{ID: "2", Type: "out", Accept: "any"}}},
		"R": {Point: []datasource.HandlePoint{{ID: "0", Type: "out", Accept: "json"}}},
		"L": {Point: []datasource.HandlePoint{{ID: "0", Type: "in"}}},
	}
	if got, want := HandlesSummary(h), "L:0:in, R:0:out(json), B:2:out"; got != want {
		t.Errorf("HandlesSummary = %q, want %q", got, want)
	}
}

func TestBuiltinsMatchDatasource(t *testing.T) {
	t.Parallel()
	var got []string
	for _, b := range Builtins() {
		got = append(got, b.Type)
	}
	want := append([]string(nil), datasource.BuiltinTypes...)
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Builtins %v, datasource.BuiltinTypes %v", got, want)
	}
}

// TestListsAreBounded checks a hub node's lists are cut and say so.
func TestListsAreBounded(t *testing.T) {
	t.Parallel()
	out := datasource.HandleGroup{Point: []datasource.HandlePoint{{ID: "0", Type: "out"}}}
	in := datasource.HandleGroup{Point: []datasource.HandlePoint{{ID: "0", Type: "in"}}}
	snap := datasource.Snapshot{Graph: datasource.Graph{Key: "g", Sheets: map[string]string{"0": "main"}},
		Nodes: []datasource.Node{{Key: "hub", Type: "starter", Sheet: "0", Handles: map[string]datasource.HandleGroup{"R": out}}}}
	for i := 0; i < MaxListEdges+20; i++ {
		k := fmt.Sprintf("n%03d", i)
		snap.Nodes = append(snap.Nodes, datasource.Node{Key: k, Type: "return", Sheet: "0", Handles: map[string]datasource.HandleGroup{"L": in}})
		snap.Edges = append(snap.Edges, datasource.Edge{Key: "e" + k, Sheet: "0", Source: "hub", SourceHandle: "0", Target: k, TargetHandle: "0"})
	}
	x := NewExecutor(&fakeSource{snap: snap}, "g")
	for _, c := range [][2]string{{ListNodeEdges, `{"nodeKey":"hub"}`}, {ExploreNeighborhood, `{"nodeKey":"hub"}`}} {
		res, err := x.Run(context.Background(), c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res, "truncated:") || strings.Count(res, "\n  ") > MaxListNodes+MaxListEdges {
			t.Errorf("%s not bounded:\n%.300s", c[0], res)
		}
	}
}

// viewSource is a source whose own reads all fail: every read of a tool call must go
// through the one View it hands out.
type viewSource struct {
	datasource.Source
	view  datasource.Source
	err   error
	views int
}

func (v *viewSource) View(context.Context, string) (datasource.Source, error) {
	v.views++
	return v.view, v.err
}

// The server source is the viewer the executor is written for: if its View changed
// shape, tool calls would silently go back to one fetch per read.
var _ viewer = (*server.Source)(nil)

func TestRunReadsThroughOneView(t *testing.T) {
	t.Parallel()
	failing := &fakeSource{snap: datasource.Snapshot{Graph: datasource.Graph{Key: "other"}}} // every read of "demo": not found
	for _, tc := range []struct{ tool, args string }{
		{ReadGraphOverview, `{"graphKey":"demo"}`}, {SearchNodes, `{"query":"fetch"}`}, {ExploreNeighborhood, `{"nodeKey":"fetch-api"}`},
		{ReadNodeDetail, `{"nodeKey":"fetch-api"}`}, {ListNodeEdges, `{"nodeKey":"fetch-api"}`},
	} {
		src := &viewSource{Source: failing, view: loadFakeDemo(t)}
		if _, err := NewExecutor(src, "demo").Run(context.Background(), tc.tool, tc.args); err != nil {
			t.Errorf("%s: %v", tc.tool, err)
		}
		if src.views != 1 {
			t.Errorf("%s: %d views, want 1 per call", tc.tool, src.views)
		}
	}
	src := &viewSource{Source: failing, err: &datasource.NotFoundError{Kind: "graph", Key: "demo"}}
	_, err := NewExecutor(src, "demo").Run(context.Background(), ReadNodeDetail, `{"nodeKey":"fetch-api"}`)
	var te *Error
	if !errors.Is(err, datasource.ErrNotFound) || errors.As(err, &te) {
		t.Errorf("view failure = %v, want the source's error, wrapped", err)
	}
}
