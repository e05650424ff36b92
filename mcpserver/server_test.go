package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/prompt"
	"github.com/nodius/nodius-ai/agent/tools"
	"github.com/nodius/nodius-ai/config"
	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/mcpserver"
	"github.com/nodius/nodius-ai/threads"
)

var readTools = []string{tools.ReadGraphOverview, tools.SearchNodes, tools.ExploreNeighborhood, tools.ReadNodeDetail,
	tools.ReadNodeConfig, tools.ListAvailableNodeTypes, tools.ListNodeEdges, tools.ReadSubgraph}

var writeTools = []string{tools.ProposeCreateNode, tools.ProposeUpdateNode, tools.ProposeMoveNode, tools.ProposeDeleteNode,
	tools.ProposeCreateEdge, tools.ProposeDeleteEdge, tools.ProposeBatch, tools.ProposeCreateNodeWithEdges,
	tools.ProposeConfigureNodeType, tools.ProposeReorganizeLayout}

func toolNames(t *testing.T, f *fixture) map[string]*mcp.Tool {
	t.Helper()
	res, err := f.cs.ListTools(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		m[tl.Name] = tl
	}
	return m
}

// TestListToolsAndResources: an editor is offered graph_context, the seven read tools
// and the seven propose_* tools, each with exactly the schema the built-in assistant
// gets; the graph and each of its nodes are resources, and nodes have a template.
func TestListToolsAndResources(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{})
	got := toolNames(t, f)
	want := append(append([]string{mcpserver.GraphContext}, readTools...), writeTools...)
	if len(got) != len(want) {
		t.Errorf("%d tools, want %d: %v", len(got), len(want), slices.Collect(mapsKeys(got)))
	}
	agentDefs := map[string]json.RawMessage{}
	for _, d := range tools.ToolDefs(tools.RoleEditor, nil) {
		agentDefs[d.Name] = d.Parameters
	}
	for _, name := range want {
		tl, ok := got[name]
		if !ok {
			t.Errorf("tool %s not offered", name)
			continue
		}
		if name == mcpserver.GraphContext {
			continue
		}
		if !sameJSON(t, tl.InputSchema, agentDefs[name]) {
			b, _ := json.Marshal(tl.InputSchema)
			t.Errorf("%s schema differs from the agent's:\n got %s\nwant %s", name, b, agentDefs[name])
		}
		if ro := tl.Annotations != nil && tl.Annotations.ReadOnlyHint; ro == tools.IsWriteTool(name) {
			t.Errorf("%s: readOnlyHint %v", name, ro)
		}
	}
	if s, _ := json.Marshal(got[tools.ProposeCreateNode].InputSchema); !strings.Contains(string(s), `"additionalProperties":false`) {
		t.Errorf("propose_create_node schema is not strict: %s", s)
	}

	res, err := f.cs.ListResources(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	uris := map[string]string{}
	for _, r := range res.Resources {
		uris[r.URI] = r.MIMEType
	}
	snap, err := datasource.LoadSnapshot(f.ctx, f.src, "demo")
	if err != nil {
		t.Fatal(err)
	}
	if len(uris) != 1+len(snap.Nodes) || uris["nodius://graph/demo"] != "application/json" {
		t.Errorf("resources %v, want the graph and its %d nodes", uris, len(snap.Nodes))
	}
	for _, n := range snap.Nodes {
		if _, ok := uris[mcpserver.NodeURI("demo", n.Key)]; !ok {
			t.Errorf("node %s is not a resource", n.Key)
		}
	}
	tpl, err := f.cs.ListResourceTemplates(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var templates []string
	for _, rt := range tpl.ResourceTemplates {
		templates = append(templates, rt.URITemplate)
	}
	if !slices.Equal(templates, []string{"nodius://graph/{graph}/node/{node}", "nodius://graph/{graph}/page/{page}"}) &&
		!slices.Equal(templates, []string{"nodius://graph/{graph}/page/{page}", "nodius://graph/{graph}/node/{node}"}) {
		t.Errorf("templates %v", templates)
	}
	init := f.cs.InitializeResult()
	if init == nil || init.Capabilities.Resources == nil || !init.Capabilities.Resources.Subscribe {
		t.Errorf("resources subscribe capability not advertised: %+v", init)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func sameJSON(t *testing.T, a any, b json.RawMessage) bool {
	t.Helper()
	ab, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var x, y any
	if json.Unmarshal(ab, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}

// TestReadTools: every read tool answers through MCP exactly what it answers the
// built-in assistant (same executor, same TOON).
func TestReadTools(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{})
	exec := tools.NewExecutor(f.src, "demo")
	tests := []struct {
		tool, args, want string
	}{
		{tools.ReadGraphOverview, `{"graphKey":"demo"}`, "sheets"},
		{tools.SearchNodes, `{"query":"fetch api","maxResults":3}`, "fetch-api"},
		{tools.ExploreNeighborhood, `{"nodeKey":"fetch-api","maxDepth":2,"direction":"outbound"}`, "filter-active"},
		{tools.ReadNodeDetail, `{"nodeKey":"fetch-api"}`, "key: fetch-api"},
		{tools.ReadNodeConfig, `{"typeKey":"api-call"}`, "API Call"},
		{tools.ListAvailableNodeTypes, ``, "starter"},
		{tools.ListNodeEdges, `{"nodeKey":"fetch-api","direction":"any"}`, "error-handler"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res := f.call(tc.tool, tc.args)
			if res.IsError {
				t.Fatalf("error result: %s", text(res))
			}
			want, err := exec.Run(f.ctx, tc.tool, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if got := text(res); got != want || !strings.Contains(got, tc.want) {
				t.Errorf("result differs from the agent's executor or lacks %q:\n got %s\nwant %s", tc.want, got, want)
			}
		})
	}
}

// TestGraphContext: graph_context is the context message the assistant gets for the
// same question (retrieval, then TOON).
func TestGraphContext(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{})
	for _, args := range []string{`{"question":"what happens when the API call fails?"}`, `{"question":"totals","mentions":["sort-stats"]}`} {
		var a struct {
			Question string   `json:"question"`
			Mentions []string `json:"mentions"`
		}
		_ = json.Unmarshal([]byte(args), &a)
		res := f.call(mcpserver.GraphContext, args)
		if res.IsError {
			t.Fatalf("%s: %s", args, text(res))
		}
		rc, err := f.rt.RetrieveWith(f.ctx, "demo", a.Question, a.Mentions)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := text(res), prompt.ContextMessage(rc); got != want {
			t.Errorf("%s:\n got %s\nwant %s", args, got, want)
		}
		for _, m := range a.Mentions {
			if !strings.Contains(text(res), m) {
				t.Errorf("mentioned node %s missing from the context", m)
			}
		}
	}
	if got := text(f.call(mcpserver.GraphContext, `{"question":"error handling"}`)); !strings.Contains(got, "error-handler") {
		t.Errorf("context for 'error handling' lacks error-handler: %s", got)
	}
}

// TestMalformedArguments: every bad call is a tool error with one sentence the client
// can act on; nothing is stored as a proposal, nothing changes, and the server keeps
// answering.
func TestMalformedArguments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{})
	tests := []struct {
		name, tool, args, want string
	}{
		{"missing required", tools.ReadNodeDetail, `{}`, `missing required argument "nodeKey"`},
		{"wrong type", tools.ReadNodeDetail, `{"nodeKey":42}`, `"nodeKey" must be a string`},
		{"not an object", tools.ReadNodeDetail, `["fetch-api"]`, "must be a JSON object"},
		{"unknown node, with a suggestion", tools.ReadNodeDetail, `{"nodeKey":"fetch-apu"}`, "fetch-api"},
		{"out of range", tools.SearchNodes, `{"query":"x","maxResults":500}`, "between 1 and 50"},
		{"bad enum", tools.ListNodeEdges, `{"nodeKey":"fetch-api","direction":"sideways"}`, "must be one of any, inbound, outbound"},
		{"context without question", mcpserver.GraphContext, `{}`, `missing required argument "question"`},
		{"context unknown argument", mcpserver.GraphContext, `{"question":"x","graph":"other"}`, `unknown argument "graph"`},
		{"context empty question", mcpserver.GraphContext, `{"question":"  "}`, "must not be empty"},
		{"context mentions not strings", mcpserver.GraphContext, `{"question":"x","mentions":[1]}`, "array of node keys"},
		{"proposal with an unknown argument", tools.ProposeMoveNode, `{"nodeKey":"fetch-api","posX":1,"posY":2,"reason":"r","force":true}`, `unknown argument "force"`},
		{"proposal on an unknown node", tools.ProposeDeleteNode, `{"nodeKey":"nope","reason":"r"}`, "nope"},
		{"proposal without reason", tools.ProposeMoveNode, `{"nodeKey":"fetch-api","posX":1,"posY":2}`, `missing required argument "reason"`},
		{"proposal of an unknown type", tools.ProposeCreateNode, `{"typeKey":"warp-drive","sheet":"0","posX":0,"posY":0,"reason":"r"}`, "warp-drive"},
		{"batch not an array", tools.ProposeBatch, `{"actions":{},"reason":"r"}`, `"actions" must be an array`},
	}
	before := fileNodes(t, f.path)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := f.call(tc.tool, tc.args)
			msg := text(res)
			if !res.IsError || !strings.Contains(msg, tc.want) {
				t.Fatalf("IsError %v, message %q; want an error containing %q", res.IsError, msg, tc.want)
			}
			if strings.Contains(strings.TrimSpace(msg), "\n") {
				t.Errorf("message spans several lines: %q", msg)
			}
		})
	}
	// A tool that does not exist is the SDK's protocol error, and the server lives on.
	if _, err := f.cs.CallTool(f.ctx, &mcp.CallToolParams{Name: "drop_graph", Arguments: map[string]any{}}); err == nil {
		t.Error("calling an unknown tool succeeded")
	}
	if res := f.call(tools.ReadNodeDetail, `{"nodeKey":"root"}`); res.IsError {
		t.Errorf("server broken after bad calls: %s", text(res))
	}
	if after := fileNodes(t, f.path); len(after) != len(before) {
		t.Errorf("the graph changed: %d nodes, was %d", len(after), len(before))
	}
	ths, err := f.store.List(f.ctx, threads.ListOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ths {
		if p, _ := f.store.PendingProposal(f.ctx, th.ID); p != nil {
			t.Errorf("a refused call left a pending proposal: %+v", p)
		}
	}
}

// TestProposalPendingThenApproved: a proposal ends pending in a thread titled with the
// client's name, changes nothing, blocks a second one; the built `nodius-ai approve`
// applies it to the graph file; the server notices, tells the subscribed client, and
// serves the new node.
func TestProposalPendingThenApproved(t *testing.T) {
	t.Parallel()
	bin := binary(t)
	f := newFixture(t, fixOpts{client: "Claude Code"})
	if err := f.cs.Subscribe(f.ctx, &mcp.SubscribeParams{URI: "nodius://graph/demo"}); err != nil {
		t.Fatal(err)
	}
	res := f.call(tools.ProposeCreateNode, `{"nodeKey":"log-result","typeKey":"html","sheet":"0","posX":900,"posY":100,"reason":"show the result"}`)
	if res.IsError {
		t.Fatalf("proposal refused: %s", text(res))
	}
	sc := structured(t, res)
	threadID, _ := sc["thread"].(string)
	if sc["status"] != "pending" || threadID == "" || sc["tool"] != tools.ProposeCreateNode {
		t.Fatalf("structured content %v", sc)
	}
	msg := text(res)
	for _, want := range []string{"not applied", "nodius-ai approve " + threadID + " --proposal ", "--digest ", "nodius-ai reject " + threadID, "nodius-ai chat"} {
		if !strings.Contains(msg, want) {
			t.Errorf("result lacks %q: %s", want, msg)
		}
	}
	if _, ok := fileNodes(t, f.path)["log-result"]; ok {
		t.Fatal("the node was written before approval")
	}
	th, err := f.store.Thread(f.ctx, threadID)
	if err != nil {
		t.Fatal(err)
	}
	if th.Title != "Claude Code (MCP)" || th.Provider != convo.ProviderMCP || th.GraphKey != "demo" {
		t.Errorf("thread %+v", th)
	}
	p, err := f.store.PendingProposal(f.ctx, threadID)
	if err != nil || p == nil || p.Action.Type != datasource.CreateNodeAction {
		t.Fatalf("pending proposal %+v, %v", p, err)
	}
	// One decision at a time per thread.
	second := f.call(tools.ProposeMoveNode, `{"nodeKey":"root","posX":1,"posY":1,"reason":"r"}`)
	if !second.IsError || !strings.Contains(text(second), "waiting for a decision") {
		t.Errorf("second proposal: IsError %v, %s", second.IsError, text(second))
	}

	printed := strings.Fields(sc["approve"].(string)) // the command as the client was told it
	if len(printed) < 2 || printed[0] != "nodius-ai" {
		t.Fatalf("approve command %q", sc["approve"])
	}
	cmd := exec.Command(bin, printed[1:]...)
	cmd.Env = isolatedEnv(t)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("nodius-ai approve: %v\nstdout %s\nstderr %s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "Approved and applied") || !strings.Contains(out.String(), "log-result") {
		t.Errorf("approve printed %q", out.String())
	}
	if _, ok := fileNodes(t, f.path)["log-result"]; !ok {
		t.Fatal("approve did not write the node to the graph file")
	}

	f.waitUpdate("nodius://graph/demo")
	var doc struct {
		Nodes []struct {
			Key string `json:"_key"`
		} `json:"nodes"`
	}
	f.readJSON("nodius://graph/demo", &doc)
	if !slices.ContainsFunc(doc.Nodes, func(n struct {
		Key string `json:"_key"`
	}) bool {
		return n.Key == "log-result"
	}) {
		t.Errorf("graph resource lacks the approved node: %+v", doc.Nodes)
	}
	var node struct {
		Graph string          `json:"graph"`
		Node  datasource.Node `json:"node"`
	}
	f.readJSON(mcpserver.NodeURI("demo", "log-result"), &node)
	if node.Node.Type != "html" || node.Graph != "demo" {
		t.Errorf("node resource %+v", node)
	}
	list, err := f.cs.ListResources(f.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Resources, func(r *mcp.Resource) bool { return r.URI == mcpserver.NodeURI("demo", "log-result") }) {
		t.Error("the new node is not listed as a resource")
	}
	// The thread now takes the next proposal.
	if res := f.call(tools.ProposeMoveNode, `{"nodeKey":"root","posX":1,"posY":1,"reason":"r"}`); res.IsError {
		t.Errorf("proposal after the decision: %s", text(res))
	}
}

// TestPolicyAuto: only the action types the person set to auto are applied at once,
// through the agent's apply path (recorded in the thread, resources updated); the
// others wait; a denied type is not even offered.
func TestPolicyAuto(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{policy: map[datasource.ActionType]config.Policy{
		datasource.MoveNodeAction: config.PolicyAuto, datasource.DeleteNodeAction: config.PolicyDeny}})
	if err := f.cs.Subscribe(f.ctx, &mcp.SubscribeParams{URI: mcpserver.NodeURI("demo", "root")}); err != nil {
		t.Fatal(err)
	}
	res := f.call(tools.ProposeMoveNode, `{"nodeKey":"root","posX":-40,"posY":75,"reason":"align"}`)
	if res.IsError || structured(t, res)["status"] != "applied" || !strings.Contains(text(res), "Applied at once") {
		t.Fatalf("auto move: IsError %v, %s", res.IsError, text(res))
	}
	if n := fileNodes(t, f.path)["root"]; n["posX"] != -40.0 || n["posY"] != 75.0 {
		t.Errorf("root after the auto move: %v", n)
	}
	f.waitUpdate(mcpserver.NodeURI("demo", "root"))
	threadID := structured(t, res)["thread"].(string)
	tr, err := f.store.Transcript(f.ctx, threadID)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Proposals) != 1 || tr.Proposals[0].Decision != convo.Approved || tr.Proposals[0].Result == nil || !tr.Proposals[0].Result.Applied {
		t.Errorf("the auto-approved proposal is not recorded as applied: %+v", tr.Proposals)
	}

	res = f.call(tools.ProposeCreateEdge, `{"sheet":"0","sourceKey":"root","sourceHandle":"0","targetKey":"display-html","targetHandle":"1","reason":"r"}`)
	if res.IsError || structured(t, res)["status"] != "pending" {
		t.Errorf("create_edge under policy ask: IsError %v, %s", res.IsError, text(res))
	}
	if _, ok := toolNames(t, f)[tools.ProposeDeleteNode]; ok {
		t.Error("propose_delete_node is offered although the policy denies it")
	}
	if _, err := f.cs.CallTool(f.ctx, &mcp.CallToolParams{Name: tools.ProposeDeleteNode, Arguments: map[string]any{"nodeKey": "root", "reason": "r"}}); err == nil {
		t.Error("a denied tool was accepted")
	}
	if _, ok := fileNodes(t, f.path)["root"]; !ok {
		t.Error("root was deleted")
	}
}

// TestViewerRole: a viewer gets graph_context and the read tools only; no write tool
// can be called and no thread is created.
func TestViewerRole(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{role: "viewer"})
	got := toolNames(t, f)
	want := append([]string{mcpserver.GraphContext}, readTools...)
	if len(got) != len(want) {
		t.Errorf("viewer tools: %v", slices.Collect(mapsKeys(got)))
	}
	for _, w := range writeTools {
		if _, ok := got[w]; ok {
			t.Errorf("viewer is offered %s", w)
		}
		if _, err := f.cs.CallTool(f.ctx, &mcp.CallToolParams{Name: w, Arguments: map[string]any{"nodeKey": "root", "reason": "r"}}); err == nil {
			t.Errorf("viewer could call %s", w)
		}
	}
	if res := f.call(tools.ReadNodeDetail, `{"nodeKey":"root"}`); res.IsError {
		t.Errorf("viewer read: %s", text(res))
	}
	if ths, _ := f.store.List(f.ctx, threads.ListOptions{All: true}); len(ths) != 0 {
		t.Errorf("threads created for a viewer: %+v", ths)
	}
	if !strings.Contains(f.cs.InitializeResult().Instructions, "read-only") {
		t.Errorf("instructions: %s", f.cs.InitializeResult().Instructions)
	}
}

// TestControlSequencesAreData: escape sequences in graph content reach the client as
// data — escaped in TOON, exact in the JSON resources — and a client name full of
// them is cleaned before it titles a thread.
func TestControlSequencesAreData(t *testing.T) {
	t.Parallel()
	const evil = "return 1; \x1b]0;pwned\x07\x1b[2J\x1b[31mred\u009b31m"
	g := map[string]any{
		"graph": map[string]any{"_key": "g", "name": "G", "workspace": "default", "sheets": map[string]any{"0": "main"}},
		"nodes": []any{map[string]any{"_key": "evil", "type": "html", "sheet": "0", "process": evil, "data": map[string]any{"note": evil}, "posX": 0, "posY": 0}},
		"edges": []any{},
	}
	b, _ := json.Marshal(g)
	f := newFixture(t, fixOpts{graphJSON: b, client: "bad\x1b]0;title\x07 client\x1b[2J"})
	res := f.call(tools.ReadNodeDetail, `{"nodeKey":"evil"}`)
	if res.IsError {
		t.Fatal(text(res))
	}
	got := text(res)
	// C0 controls are escaped by TOON; the text is data for the client, never
	// written to a terminal by the server.
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, `\u001b]0;pwned\u0007`) {
		t.Errorf("read_node_detail: control characters not escaped as data: %q", got)
	}
	var node struct {
		Node datasource.Node `json:"node"`
	}
	f.readJSON(mcpserver.NodeURI("g", "evil"), &node)
	if node.Node.Process != evil {
		t.Errorf("node resource process %q, want the exact bytes %q", node.Node.Process, evil)
	}
	res = f.call(tools.ProposeMoveNode, `{"nodeKey":"evil","posX":5,"posY":5,"reason":"move \u001b[2J it"}`)
	if res.IsError {
		t.Fatal(text(res))
	}
	th, err := f.store.Thread(f.ctx, structured(t, res)["thread"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if th.Title != "bad client (MCP)" {
		t.Errorf("thread title %q", th.Title)
	}
}

// TestHTTPBearer: over streamable HTTP the SDK client works with the token and is
// turned away without it or with a wrong one.
func TestHTTPBearer(t *testing.T) {
	t.Parallel()
	f := newFixture(t, fixOpts{})
	const token = "s3cret-token"
	srv := startHTTP(t, mcpserver.RequireBearer(token, f.srv.Handler()))
	for _, tc := range []struct {
		name, header string
		ok           bool
	}{
		{"with the token", "Bearer " + token, true},
		{"without a token", "", false},
		{"with a wrong token", "Bearer nope", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			hc := &httpClient{header: tc.header}
			client := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv + "/mcp", HTTPClient: hc.client(), MaxRetries: -1}, nil)
			if !tc.ok {
				if err == nil {
					cs.Close()
					t.Fatal("connected without the right token")
				}
				if !strings.Contains(err.Error(), "401") && !strings.Contains(strings.ToLower(err.Error()), "unauthorized") {
					t.Errorf("error %v does not say 401", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadNodeDetail, Arguments: map[string]any{"nodeKey": "fetch-api"}})
			if err != nil || res.IsError || !strings.Contains(text(res), "key: fetch-api") {
				t.Fatalf("call over HTTP: %v %+v", err, res)
			}
		})
	}
}

func TestCheckLoopback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8765", true}, {"127.0.0.2:1", true}, {"[::1]:8765", true}, {"localhost:0", true},
		{"0.0.0.0:8765", false}, {":8765", false}, {"192.168.1.4:8765", false}, {"[::]:8765", false},
		{"example.com:80", false}, {"127.0.0.1", false}, {"", false},
	} {
		err := mcpserver.CheckLoopback(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok %v", tc.addr, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "127.0.0.1:") {
			t.Errorf("CheckLoopback(%q): %q does not say what to type", tc.addr, err)
		}
	}
}
