package arango_test

import (
	"context"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// TestRealSchemaCodeAndSheets: on the documents the Nodius server writes (sheet
// names in sheetsList, nodes without code, the code in the node type's
// node.process), a snapshot has the sheet names and gives each node its type's code.
func TestRealSchemaCodeAndSheets(t *testing.T) {
	t.Parallel()
	f := arangotest.New(t)
	f.Insert(arangotest.Graphs, map[string]any{"_key": "rg", "workspace": "ws1", "name": "Real", "sheetsList": map[string]any{"0": "main", "1": "reports"}})
	f.Insert(arangotest.Nodes, map[string]any{"_key": "rg-fetch", "graphKey": "rg", "type": "api-call", "typeVersion": 1, "sheet": "0",
		"handles": map[string]any{}, "posX": 0, "posY": 0, "size": map[string]any{"width": 200, "height": 100}})
	f.Insert(arangotest.Configs, map[string]any{"_key": "api-call", "workspace": "ws1", "displayName": "API Call", "version": 1,
		"node": map[string]any{"type": "api-call", "handles": map[string]any{}, "size": map[string]any{"width": 200, "height": 100},
			"process": "const res = await fetch(node.data.url);"}})
	// Nodius reads types of the workspace and of "root", its shared one; another
	// workspace's type of the same name is not ours.
	f.Insert(arangotest.Nodes, map[string]any{"_key": "rg-log", "graphKey": "rg", "type": "shared-log", "sheet": "1",
		"handles": map[string]any{}, "posX": 0, "posY": 0, "size": map[string]any{"width": 200, "height": 100}})
	f.Insert(arangotest.Configs, map[string]any{"_key": "shared-log", "workspace": "root", "displayName": "Logger",
		"node": map[string]any{"type": "shared-log", "handles": map[string]any{}, "process": "console.log(incoming);"}})
	f.Insert(arangotest.Configs, map[string]any{"_key": "other-ws-type", "workspace": "ws2", "displayName": "Not ours",
		"node": map[string]any{"type": "other-ws-type", "process": "secret();"}})
	cfg, err := arango.ParseURL(f.URL("ws1"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := arango.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	snap, err := src.Snapshot(context.Background(), "rg")
	if err != nil {
		t.Fatal(err)
	}
	if snap.Graph.Sheets["1"] != "reports" {
		t.Errorf("sheet names %v, want sheetsList's", snap.Graph.Sheets)
	}
	code := map[string]string{}
	for _, n := range snap.Nodes {
		code[n.Key] = n.Process
	}
	if len(snap.Nodes) != 2 || !strings.Contains(code["fetch"], "fetch(node.data.url)") || code["log"] != "console.log(incoming);" {
		t.Errorf("nodes %+v: want each type's code, the root workspace's included", snap.Nodes)
	}
	for _, c := range snap.Configs {
		if c.Key == "other-ws-type" {
			t.Errorf("a type of another workspace was read: %+v", c)
		}
	}
}
