package datasource_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/memgraph"
)

// TestTypeChangeLanded: a type change whose apply was interrupted is recognised
// as landed, or not, from the types of the graph (so it is neither lost nor made
// twice); AssignKeys keeps it whole and gives a created type without key one.
func TestTypeChangeLanded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	snap := datasource.Snapshot{Graph: datasource.Graph{Key: "g"},
		Configs: []datasource.NodeConfig{{Key: "fmt", DisplayName: "Formatter", Process: "old"}}}
	store, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		t.Fatal(err)
	}
	create := datasource.AssignKeys(datasource.Action{Type: datasource.ConfigureNodeTypeAction,
		ConfigureNodeType: &datasource.ConfigureNodeTypePayload{Mode: "create", DisplayName: "New"}}, "op9")
	if create.Type != datasource.ConfigureNodeTypeAction || create.ConfigureNodeType.TypeKey != "ai_op9_1" {
		t.Fatalf("assigned: %+v", create.ConfigureNodeType)
	}
	update := datasource.AssignKeys(datasource.Action{Type: datasource.ConfigureNodeTypeAction,
		ConfigureNodeType: &datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "fmt", DisplayName: "Formatter", Process: "new"}}, "op10")
	// An update of the look alone (no code, no name) is not landed until the type
	// has that look: reconcile would otherwise record it applied and lose it.
	look := datasource.AssignKeys(datasource.Action{Type: datasource.ConfigureNodeTypeAction,
		ConfigureNodeType: &datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "fmt",
			Size: map[string]any{"width": 320, "height": 90}, Border: map[string]any{"normalColor": "red"}}}, "op11")
	for _, a := range []datasource.Action{create, update, look} {
		if landed, err := datasource.Landed(ctx, store, "g", a); err != nil || landed {
			t.Errorf("%s landed before it was applied (%v)", datasource.Describe(a), err)
		}
		if _, err := datasource.Apply(ctx, store, "g", a); err != nil {
			t.Fatal(err)
		}
		if landed, err := datasource.Landed(ctx, store, "g", a); err != nil || !landed {
			t.Errorf("%s not landed after it was applied (%v)", datasource.Describe(a), err)
		}
	}
}

// TestTypeCodeOnNodesLanded: where the type's code lives on its nodes (a file of
// the earlier format), a code change is landed once every node of the type has it.
func TestTypeCodeOnNodesLanded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	snap := datasource.Snapshot{Graph: datasource.Graph{Key: "g"},
		Nodes:   []datasource.Node{{Key: "a", Type: "fmt", Process: "old", Size: datasource.Size{Width: 1, Height: 1}}, {Key: "b", Type: "fmt", Process: "old", Size: datasource.Size{Width: 1, Height: 1}}},
		Configs: []datasource.NodeConfig{{Key: "fmt", DisplayName: "Formatter"}}}
	store, err := memgraph.New([]datasource.Snapshot{snap})
	if err != nil {
		t.Fatal(err)
	}
	a := datasource.AssignKeys(datasource.Action{Type: datasource.ConfigureNodeTypeAction,
		ConfigureNodeType: &datasource.ConfigureNodeTypePayload{Mode: "update", TypeKey: "fmt", Process: "new", Nodes: []string{"a", "b"}}}, "op1")
	if landed, err := datasource.Landed(ctx, store, "g", a); err != nil || landed {
		t.Fatalf("landed before it was applied (%v)", err)
	}
	if _, err := datasource.Apply(ctx, store, "g", a); err != nil {
		t.Fatal(err)
	}
	if landed, err := datasource.Landed(ctx, store, "g", a); err != nil || !landed {
		t.Fatalf("not landed after it was applied (%v)", err)
	}
	after, err := store.Node(ctx, "g", "b")
	if err != nil || after.Process != "new" {
		t.Fatalf("node b: %+v, %v", after, err)
	}
}

// TestFlatConfigNodeMembers: a flat config of the earlier format keeps the node
// members a type change gives it (size, type, posX, posY) beside its others; read
// back they are its node's, so the file is written back flat as it was, and a
// conversion to Nodius's format puts them in config.node, where Nodius reads a new
// node's size.
func TestFlatConfigNodeMembers(t *testing.T) {
	t.Parallel()
	earlier := `{"graph":{"_key":"g","sheets":{"0":"main"}},"nodes":[],"edges":[],"nodeConfigs":[{"_key":"t","displayName":"T","handles":{},"type":"t","posX":0,"posY":0,"size":{"width":120,"height":60},"icon2":"x"}]}`
	doc, _, err := datasource.DecodeDocument([]byte(earlier))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != datasource.FormatEarlier {
		t.Fatalf("format %v", doc.Format)
	}
	if s, ok := doc.NodeConfigs[0].NodeSize(); !ok || s.Width != 120 || s.Height != 60 {
		t.Errorf("size %+v %v", s, ok)
	}
	members := func(b []byte) (top, node map[string]json.RawMessage) {
		t.Helper()
		var m struct {
			NodeConfigs []map[string]json.RawMessage `json:"nodeConfigs"`
		}
		if err := json.Unmarshal(b, &m); err != nil || len(m.NodeConfigs) != 1 {
			t.Fatalf("%v\n%s", err, b)
		}
		top = m.NodeConfigs[0]
		_ = json.Unmarshal(top["node"], &node)
		return top, node
	}
	back, err := datasource.EncodeDocument(doc)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := members(back)
	for _, k := range []string{"type", "posX", "posY", "size", "icon2", "handles"} {
		if _, ok := top[k]; !ok {
			t.Errorf("written back without %s beside the others:\n%s", k, back)
		}
	}
	if _, ok := top["node"]; ok {
		t.Errorf("written back nested:\n%s", back)
	}
	conv, err := doc.ToNodius()
	if err != nil {
		t.Fatal(err)
	}
	out, err := datasource.EncodeDocument(conv)
	if err != nil {
		t.Fatal(err)
	}
	top, node := members(out)
	for _, k := range []string{"type", "posX", "posY", "size"} {
		if _, ok := node[k]; !ok {
			t.Errorf("converted without node.%s:\n%s", k, out)
		}
		if _, ok := top[k]; ok {
			t.Errorf("converted with %s beside node:\n%s", k, out)
		}
	}
	if _, ok := top["icon2"]; !ok {
		t.Errorf("converted without its own member icon2:\n%s", out)
	}
}
