package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
)

// TestConfigureNodeTypeProposals: what a type proposal carries — a key made from
// the name, the type as it is (Before) and its nodes for an update, the HtmlObject
// an html update gives — and what is refused in a file of the earlier format.
func TestConfigureNodeTypeProposals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, err := demo.New()
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := ParseProposal(ctx, src, "demo", ProposeConfigureNodeType, `{"mode":"create","displayName":"API Call","process":"x","reason":"r"}`)
	if err != nil {
		t.Fatal(err)
	}
	if k := a.ConfigureNodeType.TypeKey; k != "api-call-2" {
		t.Errorf("a new type named like api-call got key %q", k)
	}
	a, _, err = ParseProposal(ctx, src, "demo", ProposeConfigureNodeType, `{"mode":"update","typeKey":"api-call","displayName":"API Call","size":{"width":300,"height":100},"reason":"r"}`)
	if err != nil {
		t.Fatal(err)
	}
	p := a.ConfigureNodeType
	if p.Before["displayName"] != "API Call" || len(p.Nodes) != 1 || p.Nodes[0] != "fetch-api" || p.Process != "" {
		t.Errorf("update: before %v, nodes %v, process %q", p.Before, p.Nodes, p.Process)
	}
	if ch := datasource.TypeChanges(*p); len(ch) != 1 || ch[0].Field != "size" {
		t.Errorf("changes: %+v", ch)
	}
	a, _, err = ParseProposal(ctx, src, "demo", ProposeUpdateNode, `{"nodeKey":"display-html","updates":{"html":"<p>Hi</p>"},"reason":"r"}`)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := a.UpdateNode.Changes["data"].(map[string]any); d["type"] != "text" || d["tag"] != "p" {
		t.Errorf("html update: %v", a.UpdateNode.Changes)
	}
	if _, _, err := ParseProposal(ctx, src, "demo", ProposeUpdateNode, `{"nodeKey":"display-html","updates":{"html":"  "},"reason":"r"}`); err == nil {
		t.Error("empty html accepted")
	}

	path := filepath.Join(t.TempDir(), "e.json")
	if err := os.WriteFile(path, []byte(`{"graph":{"_key":"g","sheets":{"0":"main"}},"nodes":[{"_key":"a","type":"t1","sheet":"0","process":"x"}],"edges":[],"nodeConfigs":[{"_key":"t1","displayName":"T1","handles":{}},{"_key":"t2","displayName":"T2","handles":{}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	earlier, err := file.OpenLazy(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		`{"mode":"create","displayName":"X","process":"y","reason":"r"}`,
		`{"mode":"update","typeKey":"t2","displayName":"T2","process":"y","reason":"r"}`,
	} {
		if _, _, err := ParseProposal(ctx, earlier, "g", ProposeConfigureNodeType, args); err == nil || !strings.Contains(err.Error(), "graph convert") {
			t.Errorf("%s in the earlier format: %v", args, err)
		}
	}
	if _, _, err := ParseProposal(ctx, earlier, "g", ProposeConfigureNodeType, `{"mode":"update","typeKey":"t1","displayName":"T1","process":"y","reason":"r"}`); err != nil {
		t.Errorf("new code for a type with nodes in the earlier format: %v", err)
	}
}
