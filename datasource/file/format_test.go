package file_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
)

func copyFixture(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Contract: a file in the earlier format keeps sheets, its flat nodeConfigs and
// code on nodes after an approved change; it is announced once.
func TestEarlierFormatWrittenBackAsRead(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, rich, 0o600)
	var notices []string
	src, err := file.OpenNotify(ctx, path, func(s string) { notices = append(notices, s) })
	if err != nil {
		t.Fatal(err)
	}
	if src.Format() != datasource.FormatEarlier {
		t.Fatalf("format %v, want earlier", src.Format())
	}
	if _, err := src.UpdateNode(ctx, "g1", "b", map[string]any{"process": "return 42;"}); err != nil {
		t.Fatal(err)
	}
	if err := src.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "earlier format") || !strings.Contains(notices[0], "graph convert") {
		t.Errorf("notices %q, want one saying earlier format and the convert command", notices)
	}
	m := decodeGeneric(t, mustRead(t, path))
	g := m["graph"].(map[string]any)
	if _, ok := g["sheets"]; !ok {
		t.Error("graph lost sheets")
	}
	if _, ok := g["sheetsList"]; ok {
		t.Error("graph got a sheetsList: converted behind the user's back")
	}
	nodes := m["nodes"].([]any)
	if p := nodes[1].(map[string]any)["process"]; p != "return 42;" {
		t.Errorf("node b's process %v, want the new code on the node", p)
	}
	c := m["nodeConfigs"].([]any)[0].(map[string]any)
	if _, nested := c["node"]; nested {
		t.Error("config became nested")
	}
	if _, flat := c["handles"]; !flat {
		t.Error("config lost its flat handles")
	}
}

// In Nodius's format a node's code is its type's: read from the type, and a code
// change through a node is written to the type, never onto the node.
func TestNodiusFormatCodeOnTypes(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "nba-nodius.json")
	var notices []string
	src, err := file.OpenNotify(ctx, path, func(s string) { notices = append(notices, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 0 {
		t.Errorf("notices %q for a complete Nodius file", notices)
	}
	const g = "testgraph001"
	n, err := src.Node(ctx, g, "error_handler")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.Process, "Error occurred") {
		t.Fatalf("error_handler's code %q, want its type log-node's", n.Process)
	}
	if _, _, _, ok := src.Spans(); ok {
		t.Error("Spans offered for a file whose node records hold no code")
	}
	if _, err := src.UpdateNode(ctx, g, "error_handler", map[string]any{"process": "log('new');"}); err != nil {
		t.Fatal(err)
	}
	// Every node of the type runs the new code.
	other, err := src.Node(ctx, g, "disconnected_note")
	if err != nil {
		t.Fatal(err)
	}
	if other.Process != "log('new');" {
		t.Errorf("the other log-node's code %q, want the type's new code", other.Process)
	}
	m := decodeGeneric(t, mustRead(t, path))
	for _, x := range m["nodes"].([]any) {
		if _, ok := x.(map[string]any)["process"]; ok {
			t.Errorf("node %v written with process", x.(map[string]any)["_key"])
		}
	}
	found := false
	for _, x := range m["nodeConfigs"].([]any) {
		c := x.(map[string]any)
		if c["_key"] == "log-node" {
			found = c["node"].(map[string]any)["process"] == "log('new');"
		}
	}
	if !found {
		t.Error("log-node's node.process was not changed")
	}
	if _, ok := m["graph"].(map[string]any)["sheetsList"]; !ok {
		t.Error("graph lost sheetsList")
	}
	// Code for a built-in type's node has nowhere to go.
	if _, err := src.UpdateNode(ctx, g, "root", map[string]any{"process": "x();"}); err == nil || !strings.Contains(err.Error(), "no config") {
		t.Errorf("code on a starter node: %v, want an error saying its type has no config", err)
	}
}

// A node whose type has no config: said once, and its code is empty, not invented.
func TestNodiusFormatMissingType(t *testing.T) {
	ctx := context.Background()
	path := writeFile(t, `{"graph": {"_key": "g", "sheetsList": {"0": "main"}},
	  "nodes": [{"_key": "a", "type": "mystery", "sheet": "0"}, {"_key": "b", "type": "starter", "sheet": "0"}], "edges": []}`, 0o600)
	var notices []string
	src, err := file.OpenNotify(ctx, path, func(s string) { notices = append(notices, s) })
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], `"mystery"`) || !strings.Contains(notices[0], "unknown") {
		t.Errorf("notices %q, want one naming mystery's code as unknown", notices)
	}
	n, err := src.Node(ctx, "g", "a")
	if err != nil {
		t.Fatal(err)
	}
	if n.Process != "" {
		t.Errorf("code %q invented for a type without config", n.Process)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A node and an edge made by nodius-ai in a Nodius file get the fields Nodius puts
// on every one (graphKey, typeVersion) when the file's others have them.
func TestNodiusFieldsOnNewRecords(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "nba-nodius.json")
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	const g = "testgraph001"
	if _, err := src.CreateNode(ctx, g, datasource.Node{Key: "n1", Type: "filter", Sheet: "0", Process: mustCode(t, src, g, "filter_active")}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.CreateEdge(ctx, g, datasource.Edge{Key: "en1", Sheet: "0", Source: "fetch_api", SourceHandle: "0", Target: "n1", TargetHandle: "0"}); err != nil {
		t.Fatal(err)
	}
	m := decodeGeneric(t, mustRead(t, path))
	for _, x := range m["nodes"].([]any) {
		if n := x.(map[string]any); n["_key"] == "n1" {
			if n["graphKey"] != g {
				t.Errorf("new node %v lacks graphKey", n)
			}
			if _, ok := n["typeVersion"]; ok {
				t.Errorf("new node %v got a typeVersion no other node of the file has", n)
			}
		}
	}
	for _, x := range m["edges"].([]any) {
		if e := x.(map[string]any); e["_key"] == "en1" && e["graphKey"] != g {
			t.Errorf("new edge %v lacks graphKey", e)
		}
	}
}

func mustCode(t *testing.T, src *file.Source, g, key string) string {
	t.Helper()
	n, err := src.Node(context.Background(), g, key)
	if err != nil {
		t.Fatal(err)
	}
	return n.Process
}
