package file

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/ndex"
)

// typePayload is a node type export's payload as Nodius writes it: no _key, and
// node without type.
const typePayload = `{"displayName":"API Call","description":"Calls an HTTP API","category":"network","version":1,"content":{},"node":{"handles":{"L":{"position":"separate","point":[{"id":"0","type":"in","accept":"any"}]}},"size":{"width":240,"height":120,"dynamic":false},"process":"return fetchPlayers();"},"border":{},"alwaysRendered":false,"icon":"globe"}`

func TestTypeExportGivesAGraphExportItsCode(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	enc, err := ndex.Encode([]byte(typePayload), ndex.NodeConfig, ndex.DefaultSecret)
	if err != nil {
		t.Fatal(err)
	}
	typeFile := filepath.Join(dir, "api.ndex")
	payloadFile := filepath.Join(dir, "api.json")
	for p, b := range map[string][]byte{typeFile: enc, payloadFile: []byte(typePayload)} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, tf := range []string{typeFile, payloadFile} {
		doc, err := Load(ctx, "testdata/07-export-graph.ndex", Options{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := LoadTypeExport(ctx, tf, "api-call", "")
		if err != nil {
			t.Fatalf("%s: %v", tf, err)
		}
		if c.Key != "api-call" || c.DisplayName != "API Call" || string(c.NodeExtra["type"]) != `"api-call"` {
			t.Fatalf("%s: config %+v, want key and node.type api-call", tf, c)
		}
		if err := AddTypes(&doc, []datasource.NodeConfig{c}); err != nil {
			t.Fatal(err)
		}
		typed := 0
		for _, n := range doc.Nodes {
			if n.Type == "api-call" {
				typed++
				if n.Process != "return fetchPlayers();" {
					t.Fatalf("%s: node %s has code %q, want the type's", tf, n.Key, n.Process)
				}
			}
		}
		if typed == 0 {
			t.Fatalf("%s: the export has no api-call node: the check above checked nothing", tf)
		}
		for _, m := range doc.MissingTypes() {
			if m == "api-call" {
				t.Fatalf("%s: api-call still listed as missing", tf)
			}
		}
	}
}

func TestTypeExportRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	typeFile := filepath.Join(dir, "api.json")
	if err := os.WriteFile(typeFile, []byte(typePayload), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		name, path, key, secret, want string
	}{
		{"a graph export is not a type", "testdata/07-export-graph.ndex", "api-call", "", "not a node type's"},
		{"wrong secret", "testdata/07-export-graph.ndex", "api-call", "wrong", "secret is wrong"},
		{"graph payload holds no node", "testdata/07-export-graph.payload.json", "api-call", "", `no "node" object`},
		{"built-in type", typeFile, "starter", "", "custom node type"},
		{"missing file", filepath.Join(dir, "nope.ndex"), "api-call", "", "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadTypeExport(ctx, tt.path, tt.key, tt.secret)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
		})
	}
	doc, err := Load(ctx, "testdata/07-export-graph.ndex", Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadTypeExport(ctx, typeFile, "not-used", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := AddTypes(&doc, []datasource.NodeConfig{c}); err == nil || !strings.Contains(err.Error(), `no node of the graph has type "not-used"`) {
		t.Fatalf("AddTypes of an unused type: %v", err)
	}
	c.Key = "api-call"
	if err := AddTypes(&doc, []datasource.NodeConfig{c, c}); err == nil || !strings.Contains(err.Error(), "already has a config") {
		t.Fatalf("AddTypes twice: %v", err)
	}
}
