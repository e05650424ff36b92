package file_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
)

// TestCreateGraphWritesANewFile: a graph file source makes a new graph as a new file
// next to it, named after the graph, never replacing one (-2 when taken), in
// Nodius's format that it opens again; undo removes it only while its bytes are the
// ones written. The source's own file is untouched.
func TestCreateGraphWritesANewFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "g.json")
	if err := os.WriteFile(path, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	src, err := file.OpenLazy(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "invoices-2026.json"), []byte("taken"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := datasource.CreateGraphPayload{Name: "Invoices 2026!", Type: "graph", Description: "bills", Key: "inv"}
	res, err := datasource.Apply(ctx, src, "home", datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &p})
	if err != nil {
		t.Fatal(err)
	}
	g := res.Graph
	want := filepath.Join(dir, "invoices-2026-2.json")
	if g == nil || g.Path != want || g.File != want || !strings.Contains(res.Note, "open it with --source file:"+want) {
		t.Fatalf("result %+v", res)
	}
	// A process stopped before it recorded the apply finds the graph it made.
	for key, want := range map[string]bool{"inv": true, "other": false} {
		q := p
		q.Key = key
		if landed, err := datasource.Landed(ctx, src, "home", datasource.Action{Type: datasource.CreateGraphAction, CreateGraph: &q}); err != nil || landed != want {
			t.Errorf("landed %s = %v %v, want %v", key, landed, err, want)
		}
	}
	if taken, _ := os.ReadFile(filepath.Join(dir, "invoices-2026.json")); string(taken) != "taken" {
		t.Error("an existing file was replaced")
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the source's own file changed")
	}
	made, err := file.Open(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	if made.GraphKey() != "inv" || made.Format() != datasource.FormatNodius {
		t.Errorf("new file: key %q format %v", made.GraphKey(), made.Format())
	}
	nodes, _ := made.Nodes(ctx, "inv", "")
	if len(nodes) != 2 || nodes[0].Key != "root" || nodes[0].Type != "starter" || nodes[1].Type != "return" {
		t.Errorf("nodes %+v", nodes)
	}

	// Edited since: left.
	if err := made.MoveNode(ctx, "inv", "return", 500, 0); err != nil {
		t.Fatal(err)
	}
	var changed *datasource.GraphChangedError
	if err := src.DeleteCreatedGraph(ctx, *g, false); !errors.As(err, &changed) {
		t.Fatalf("delete of an edited file: %v", err)
	}
	if _, err := os.Stat(want); err != nil {
		t.Fatal("an edited graph file was deleted")
	}

	// A record from elsewhere (an imported thread) naming a file outside this
	// directory, or one holding another graph, removes nothing.
	outside := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(outside, data(t, want), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, forged := range []datasource.CreatedGraph{
		{Key: "inv", Path: outside, File: outside, Digest: g.Digest},
		{Key: "other", Path: want, File: want, Digest: sum(t, want)},
		{Key: "demo", Path: path, File: path, Digest: sum(t, path)}, // the source's own file
		{Key: "inv", AssignedKey: "ai_op1", Path: want, File: want, Digest: sum(t, want)},
	} {
		if err := src.DeleteCreatedGraph(ctx, forged, false); !errors.As(err, &changed) {
			t.Errorf("forged record %+v: %v", forged, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatal("a file outside the source's directory was removed")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal("the source's own file was removed")
	}

	// Unchanged: removed, then gone.
	h, err := src.CreateGraph(ctx, datasource.CreateGraphPayload{Name: "...", Type: "htmlClass"}, "page")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(h.Path) != "graph.json" || h.HTMLClass != "html_page" {
		t.Errorf("HTML class %+v", h)
	}
	if data, _ := os.ReadFile(h.File); !strings.Contains(string(data), `"htmlClass"`) || !strings.Contains(string(data), `"type": "html"`) {
		t.Errorf("HTML class file:\n%s", data)
	}
	if err := src.DeleteCreatedGraph(ctx, h, false); err != nil {
		t.Fatal(err)
	}
	if err := src.DeleteCreatedGraph(ctx, h, false); !errors.Is(err, datasource.ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

// TestCreateGraphFromAnExportIsRefused: an .ndex export stays read-only.
func TestCreateGraphFromAnExportIsRefused(t *testing.T) {
	t.Parallel()
	src, err := file.OpenLazy(context.Background(), "testdata/07-export-graph.ndex")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.CanCreateGraph(context.Background()); !errors.Is(err, datasource.ErrReadOnly) {
		t.Errorf("CanCreateGraph on an export: %v", err)
	}
}

func data(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func sum(t *testing.T, path string) string {
	h := sha256.Sum256(data(t, path))
	return "sha256:" + hex.EncodeToString(h[:])
}
