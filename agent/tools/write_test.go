package tools

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

const why = `"reason":"because"`

func TestParseProposal(t *testing.T) {
	t.Parallel()
	src := loadDemo(t)
	tests := []struct {
		name, tool, args string
		errCode          string
		errHas           string
		check            func(t *testing.T, a datasource.Action)
	}{
		// create_node
		{name: "create node minimal", tool: ProposeCreateNode, args: `{"typeKey":"transform","sheet":"0","posX":10,"posY":-20.5,` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				p := a.CreateNode
				if a.Type != datasource.CreateNodeAction || p.TypeKey != "transform" || p.Sheet != "0" || p.PosY != -20.5 || p.NodeKey != "" {
					t.Errorf("payload = %+v", p)
				}
				if HandlesSummary(p.Handles) != "L:0:in, R:0:out" {
					t.Errorf("default handles = %q", HandlesSummary(p.Handles))
				}
			}},
		{name: "create builtin type", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"1","posX":1,"posY":1,` + why + `}`},
		{name: "create unknown type", tool: ProposeCreateNode, args: `{"typeKey":"api_call","sheet":"0","posX":0,"posY":0,` + why + `}`,
			errCode: CodeNotFound, errHas: `node type "api_call" does not exist; did you mean "api-call"?`},
		{name: "create unknown sheet", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"7","posX":0,"posY":0,` + why + `}`,
			errCode: CodeNotFound, errHas: `sheet "7" does not exist; give a sheet id: "0" (main), "1" (data-processing)`},
		{name: "create hallucinated key", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"0","posX":0,"posY":0,"color":"red",` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown argument "color"; the accepted arguments are: typeKey, sheet`},
		{name: "create two hallucinated keys", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"0","posX":0,"posY":0,"x":1,"label":"a",` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown arguments "label", "x"`},
		{name: "create posX string", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"0","posX":"100","posY":0,` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"posX" must be a number, got a string "100"`},
		{name: "create posX huge", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"0","posX":1e9,"posY":0,` + why + `}`,
			errCode: CodeInvalidArgument, errHas: "between -1000000 and 1000000"},
		{name: "create missing reason", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"0","posX":0,"posY":0}`,
			errCode: CodeInvalidArgument, errHas: `missing required argument "reason"`},
		{name: "create data array", tool: ProposeCreateNode, args: `{"typeKey":"html","sheet":"0","posX":0,"posY":0,"data":[1],` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"data" must be an object, got an array`},
		{name: "create existing key", tool: ProposeCreateNode, args: `{"nodeKey":"root","typeKey":"html","sheet":"0","posX":0,"posY":0,` + why + `}`,
			errCode: CodeInvalidAction, errHas: `a node with key "root" already exists`},
		{name: "create invalid key", tool: ProposeCreateNode, args: `{"nodeKey":"a b","typeKey":"html","sheet":"0","posX":0,"posY":0,` + why + `}`,
			errCode: CodeInvalidArgument, errHas: "not a valid key"},

		// create_edge
		{name: "edge valid", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"error-handler","targetHandle":"0","label":"empty",` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				want := datasource.CreateEdgePayload{SourceKey: "filter-active", SourceHandle: "0", TargetKey: "error-handler", TargetHandle: "0", Sheet: "0", Label: "empty"}
				if *a.CreateEdge != want {
					t.Errorf("payload = %+v", *a.CreateEdge)
				}
			}},
		{name: "edge side-qualified handles", tool: ProposeCreateEdge, args: `{"sourceKey":"fetch-api","sourceHandle":"R:1","targetKey":"display-html","targetHandle":"0-1","sheet":"0",` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				if a.CreateEdge.SourceHandle != "1" || a.CreateEdge.TargetHandle != "1" {
					t.Errorf("handles not normalised: %+v", a.CreateEdge)
				}
			}},
		{name: "edge source handle is input", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"display-html","sourceHandle":"1","targetKey":"error-handler","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidAction, errHas: `source handle "1" of node "display-html" is an input point, but the source of an edge must be an output point; its outputs are: "0" (side 0, accepts event[])`},
		{name: "edge source without outputs", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"error-handler","sourceHandle":"0","targetKey":"return","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidAction, errHas: `node "error-handler" has no output point`},
		{name: "edge target handle missing", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"return","targetHandle":"3",` + why + `}`,
			errCode: CodeInvalidAction, errHas: `node "return" has no input handle "3"; its inputs are: "0" (side L)`},
		{name: "edge target without inputs", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"root","sourceHandle":"0","targetKey":"entry-form","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidAction, errHas: `node "entry-form" has no input point`},
		{name: "edge unknown node", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"fetch","sourceHandle":"0","targetKey":"return","targetHandle":"0",` + why + `}`,
			errCode: CodeNotFound, errHas: `node "fetch" does not exist in this graph; did you mean "fetch-api"?`},
		{name: "edge cross sheet", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"sort-stats","sourceHandle":"0","targetKey":"return","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidAction, errHas: "same sheet"},
		{name: "edge sheet mismatch", tool: ProposeCreateEdge, args: `{"sourceKey":"filter-active","sourceHandle":"0","targetKey":"return","targetHandle":"0","sheet":"1",` + why + `}`,
			errCode: CodeInvalidAction, errHas: `both nodes are on sheet "0"`},
		{name: "edge duplicate", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"fetch-api","sourceHandle":"0","targetKey":"filter-active","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidAction, errHas: `this edge already exists (key "e3")`},
		{name: "edge self loop", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"display-html","sourceHandle":"0","targetKey":"display-html","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidAction, errHas: "to itself"},
		{name: "edge hallucinated key", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"return","targetHandle":"0","edgeKey":"e9",` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown argument "edgeKey"`},
		{name: "edge handle as number", tool: ProposeCreateEdge, args: `{"sheet":"0","sourceKey":"filter-active","sourceHandle":0,"targetKey":"return","targetHandle":"0",` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"sourceHandle" must be a string, got a number 0`},

		// delete_node
		{name: "delete node", tool: ProposeDeleteNode, args: `{"nodeKey":"fetch-api",` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				var keys []string
				for _, e := range a.DeleteNode.RemovedEdges {
					keys = append(keys, e.Key)
				}
				if a.DeleteNode.NodeKey != "fetch-api" || strings.Join(keys, ",") != "e2,e3,e4" {
					t.Errorf("payload = %+v", a.DeleteNode)
				}
			}},
		{name: "delete isolated node", tool: ProposeDeleteNode, args: `{"nodeKey":"disconnected-note",` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				if len(a.DeleteNode.RemovedEdges) != 0 {
					t.Errorf("removed edges = %v", a.DeleteNode.RemovedEdges)
				}
			}},
		{name: "delete missing node", tool: ProposeDeleteNode, args: `{"nodeKey":"display",` + why + `}`,
			errCode: CodeNotFound, errHas: `"display-html"`},
		{name: "delete node extra key", tool: ProposeDeleteNode, args: `{"nodeKey":"root","cascade":true,` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown argument "cascade"`},

		// update_node
		{name: "update unknown field", tool: ProposeUpdateNode, args: `{"nodeKey":"root","updates":{"color":"red"},` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown argument "updates.color"`},
		{name: "update empty changes", tool: ProposeUpdateNode, args: `{"nodeKey":"root","updates":{},` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"updates" is empty`},
		{name: "update changes not object", tool: ProposeUpdateNode, args: `{"nodeKey":"root","updates":"process=1",` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"updates" must be an object`},
		{name: "update no-op", tool: ProposeUpdateNode, args: `{"nodeKey":"root","updates":{"data":{}},` + why + `}`,
			errCode: CodeInvalidAction, errHas: "changes nothing"},

		// move_node
		{name: "move", tool: ProposeMoveNode, args: `{"nodeKey":"return","posX":1200,"posY":80,` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				if *a.MoveNode != (datasource.MoveNodePayload{NodeKey: "return", PosX: 1200, PosY: 80}) {
					t.Errorf("payload = %+v", a.MoveNode)
				}
			}},
		{name: "move bool", tool: ProposeMoveNode, args: `{"nodeKey":"return","posX":true,"posY":80,` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"posX" must be a number, got a boolean true`},

		// delete_edge
		{name: "delete edge", tool: ProposeDeleteEdge, args: `{"edgeKey":"e4",` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				if e := a.DeleteEdge.Edge; e == nil || e.Source != "fetch-api" || e.Label != "error" {
					t.Errorf("edge = %+v", e)
				}
			}},
		{name: "delete missing edge", tool: ProposeDeleteEdge, args: `{"edgeKey":"e44",` + why + `}`,
			errCode: CodeNotFound, errHas: `edge "e44" does not exist in this graph; did you mean "e4"`},

		// batch
		{name: "batch create and connect", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","nodeKey":"sorter","typeKey":"transform","sheet":"0","posX":900,"posY":0},
				{"type":"delete_edge","edgeKey":"e5"},
				{"type":"create_edge","sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"sorter","targetHandle":"0"},
				{"type":"create_edge","sheet":"0","sourceKey":"sorter","sourceHandle":"0","targetKey":"display-html","targetHandle":"1"}
			],` + why + `}`,
			check: func(t *testing.T, a datasource.Action) {
				if a.Type != datasource.BatchAction || len(a.Batch.Actions) != 4 || a.Batch.Actions[1].DeleteEdge.Edge == nil {
					t.Fatalf("batch = %+v", a)
				}
				if got := ActionTypes(a); len(got) != 4 {
					t.Errorf("ActionTypes = %v", got)
				}
			}},
		{name: "batch re-add deleted edge", tool: ProposeBatch, args: `{"actions":[
				{"type":"delete_edge","edgeKey":"e3"},
				{"type":"create_edge","sheet":"0","sourceKey":"fetch-api","sourceHandle":"0","targetKey":"filter-active","targetHandle":"0","label":"ok"}],` + why + `}`},
		{name: "batch refers to unnamed node", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_node","typeKey":"transform","sheet":"0","posX":0,"posY":0},
				{"type":"create_edge","sheet":"0","sourceKey":"transform-1","sourceHandle":"0","targetKey":"return","targetHandle":"0"}],` + why + `}`,
			errCode: CodeNotFound, errHas: `step 2 (create_edge): node "transform-1" does not exist`},
		{name: "batch uses deleted node", tool: ProposeBatch, args: `{"actions":[
				{"type":"delete_node","nodeKey":"return"},
				{"type":"move_node","nodeKey":"return","posX":0,"posY":0}],` + why + `}`,
			errCode: CodeNotFound, errHas: "step 2 (move_node)"},
		{name: "batch duplicate created edge", tool: ProposeBatch, args: `{"actions":[
				{"type":"create_edge","sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"return","targetHandle":"0"},
				{"type":"create_edge","sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"return","targetHandle":"0"}],` + why + `}`,
			errCode: CodeInvalidAction, errHas: "step 2 (create_edge): this edge already exists"},
		{name: "batch empty", tool: ProposeBatch, args: `{"actions":[],` + why + `}`, errCode: CodeInvalidArgument, errHas: "between 1 and 50 items, got 0"},
		{name: "batch step reason", tool: ProposeBatch, args: `{"actions":[{"type":"move_node","nodeKey":"root","posX":0,"posY":0,"reason":"x"}],` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown argument "actions[0].reason"`},
		{name: "batch step unknown key", tool: ProposeBatch, args: `{"actions":[{"type":"move_node","nodeKey":"root","posX":0,"posY":0,"z":1}],` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `unknown argument "actions[0].z"`},
		{name: "batch step unknown type", tool: ProposeBatch, args: `{"actions":[{"type":"rename_node"}],` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"actions[0].type" must be one of move_node`},
		{name: "batch step not object", tool: ProposeBatch, args: `{"actions":["create_node"],` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"actions"[0] must be an object`},
		{name: "batch actions object", tool: ProposeBatch, args: `{"actions":{},` + why + `}`,
			errCode: CodeInvalidArgument, errHas: `"actions" must be an array`},
		{name: "batch too many", tool: ProposeBatch, args: `{"actions":[` + strings.TrimSuffix(strings.Repeat(`{"type":"move_node","nodeKey":"root","posX":0,"posY":0},`, MaxBatchSteps+1), ",") + `],` + why + `}`,
			errCode: CodeInvalidArgument, errHas: "between 1 and 50 items"},

		// the call itself
		{name: "unknown write tool", tool: "propose_rename_node", args: `{}`, errCode: CodeUnknownTool, errHas: "propose_batch"},
		{name: "malformed json", tool: ProposeDeleteNode, args: `{"nodeKey":"root",`, errCode: CodeInvalidJSON, errHas: "not valid JSON"},
		{name: "string args", tool: ProposeDeleteNode, args: `"root"`, errCode: CodeInvalidJSON, errHas: "must be a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, reason, err := ParseProposal(context.Background(), src, "demo", tc.tool, tc.args)
			if tc.errCode != "" {
				var te *Error
				if !errors.As(err, &te) {
					t.Fatalf("want *Error %s, got %v (action %+v)", tc.errCode, err, a)
				}
				if te.Code != tc.errCode || !strings.Contains(te.Error(), tc.errHas) {
					t.Fatalf("error = [%s] %v\nwant [%s] containing %q", te.Code, te, tc.errCode, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseProposal: %v", err)
			}
			if reason != "because" {
				t.Errorf("reason = %q", reason)
			}
			if _, err := json.Marshal(a); err != nil {
				t.Errorf("action does not marshal: %v", err)
			}
			if tc.check != nil {
				tc.check(t, a)
			}
		})
	}
}

// TestProposalRoundTrip checks a parsed action survives the JSON form the thread store
// and the NDJSON output use.
func TestProposalRoundTrip(t *testing.T) {
	t.Parallel()
	a, _, err := ParseProposal(context.Background(), loadDemo(t), "demo", ProposeDeleteNode, `{"nodeKey":"filter-active",`+why+`}`)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(a)
	var back datasource.Action
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.DeleteNode == nil || len(back.DeleteNode.RemovedEdges) != 2 {
		t.Fatalf("round trip lost removed edges: %s", b)
	}
}

func TestParseProposalSourceError(t *testing.T) {
	t.Parallel()
	_, _, err := ParseProposal(context.Background(), loadDemo(t), "nope", ProposeDeleteNode, `{"nodeKey":"root",`+why+`}`)
	var te *Error
	if err == nil || errors.As(err, &te) || !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("want wrapped source error, got %v", err)
	}
}

func TestWriteToolDefs(t *testing.T) {
	t.Parallel()
	defs := WriteToolDefs(nil)
	if len(defs) != 10 {
		t.Fatalf("got %d write tools, want 10", len(defs))
	}
	specs := map[string]spec{}
	for _, ws := range writeSpecs() {
		specs[ws.spec.name] = ws.spec
	}
	specs[ProposeBatch] = batchSpec(allStepTypes())
	for _, d := range defs {
		if !IsWriteTool(d.Name) {
			t.Errorf("%s is not recognised as a write tool", d.Name)
		}
		s := checkSchema(t, d.Name, d.Parameters, true)
		// The schema names exactly the arguments the parser accepts, and requires reason.
		props := s["properties"].(map[string]any)
		var got, want []string
		for k := range props {
			got = append(got, k)
		}
		for _, p := range specs[d.Name].params {
			want = append(want, p.name)
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%s: schema properties %v, parser accepts %v", d.Name, got, want)
		}
		if !strings.Contains(string(d.Parameters), `"reason"`) {
			t.Errorf("%s has no reason", d.Name)
		}
	}
}

func TestToolDefsByRoleAndPolicy(t *testing.T) {
	t.Parallel()
	deny := func(types ...datasource.ActionType) func(datasource.ActionType) bool {
		return func(t datasource.ActionType) bool {
			for _, d := range types {
				if d == t {
					return false
				}
			}
			return true
		}
	}
	tests := []struct {
		name, role string
		allowed    func(datasource.ActionType) bool
		count      int
		has, lacks []string
	}{
		{name: "viewer", role: RoleViewer, count: 8, lacks: []string{ProposeCreateNode, ProposeBatch}},
		{name: "unknown role is read-only", role: "guest", count: 8, lacks: []string{ProposeCreateNode}},
		{name: "empty role is read-only", role: "", count: 8},
		{name: "editor", role: RoleEditor, count: 18, has: []string{ProposeCreateNode, ProposeBatch, ProposeDeleteEdge}},
		{name: "admin", role: RoleAdmin, count: 18},
		{name: "deny create_edge", role: RoleEditor, allowed: deny(datasource.CreateEdgeAction), count: 17,
			has: []string{ProposeBatch}, lacks: []string{ProposeCreateEdge, `"create_edge"`}},
		{name: "deny batch", role: RoleEditor, allowed: deny(datasource.BatchAction), count: 17, lacks: []string{ProposeBatch}},
		{name: "deny all", role: RoleEditor, allowed: func(datasource.ActionType) bool { return false }, count: 8, lacks: []string{ProposeBatch}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			defs := ToolDefs(tc.role, tc.allowed)
			if len(defs) != tc.count {
				t.Errorf("got %d tools, want %d", len(defs), tc.count)
			}
			// Tool names must match exactly; quoted strings are looked for in the
			// parameters (the batch step type enum).
			var text strings.Builder
			offered := map[string]bool{}
			for _, d := range defs {
				offered[d.Name] = true
				text.Write(d.Parameters)
			}
			find := func(s string) bool {
				if strings.HasPrefix(s, `"`) {
					return strings.Contains(text.String(), s)
				}
				return offered[s]
			}
			for _, h := range tc.has {
				if !find(h) {
					t.Errorf("missing %s", h)
				}
			}
			for _, l := range tc.lacks {
				if find(l) {
					t.Errorf("should not offer %s", l)
				}
			}
		})
	}
}

func TestIsWriteTool(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{ProposeBatch: true, "propose_anything": true, SearchNodes: false, "": false, "Propose_x": false} {
		if IsWriteTool(name) != want {
			t.Errorf("IsWriteTool(%q) != %v", name, want)
		}
	}
}

// FuzzParseProposal feeds random argument text to every write tool: it must return an
// action or an error, never panic.
func FuzzParseProposal(f *testing.F) {
	src := loadDemo(f)
	seeds := []string{``, `null`, `{}`, `[]`, `{"nodeKey":"root","reason":"r"}`, `{"actions":[{"type":"create_node","nodeKey":"a","typeKey":"html","sheet":"0","posX":0,"posY":0}],"reason":"r"}`,
		`{"nodeKey":"fetch-api","updates":{"data":{"a":1},"size":{"width":1,"height":2}},"reason":"r"}`,
		`{"sheet":"0","sourceKey":"root","sourceHandle":"R:0","targetKey":"fetch-api","targetHandle":"L-0","reason":"r"}`, `{"posX":1e400}`, "{\"nodeKey\":\"\xff\"}"}
	for i, s := range seeds {
		f.Add(uint8(i), s)
	}
	names := []string{ProposeCreateNode, ProposeUpdateNode, ProposeMoveNode, ProposeDeleteNode, ProposeCreateEdge, ProposeDeleteEdge, ProposeBatch}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		_, _, _ = ParseProposal(context.Background(), src, "demo", names[int(which)%len(names)], args)
	})
}

// FuzzRun does the same for the read tools.
func FuzzRun(f *testing.F) {
	x := NewExecutor(loadDemo(f), "demo")
	for i, s := range []string{``, `{}`, `{"query":"fetch","maxResults":50}`, `{"nodeKey":"root","maxDepth":3,"direction":"inbound"}`, `{"typeKey":"starter"}`, `{"maxResults":-0}`} {
		f.Add(uint8(i), s)
	}
	names := []string{ReadGraphOverview, SearchNodes, ExploreNeighborhood, ReadNodeDetail, ReadNodeConfig, ListAvailableNodeTypes, ListNodeEdges, ReadSubgraph}
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		_, _ = x.Run(context.Background(), names[int(which)%len(names)], args)
	})
}

func BenchmarkRunSearchNodes(b *testing.B) {
	x := NewExecutor(loadDemo(b), "demo")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Run(ctx, SearchNodes, `{"query":"fetch player stats api","maxResults":10}`); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseProposalBatch(b *testing.B) {
	src := loadDemo(b)
	args := `{"actions":[{"type":"create_node","nodeKey":"sorter","typeKey":"transform","sheet":"0","posX":900,"posY":0},` +
		`{"type":"create_edge","sheet":"0","sourceKey":"filter-active","sourceHandle":"0","targetKey":"sorter","targetHandle":"0"}],"reason":"r"}`
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseProposal(ctx, src, "demo", ProposeBatch, args); err != nil {
			b.Fatal(err)
		}
	}
}
