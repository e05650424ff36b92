package file_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/ndex"
	"github.com/nodius/nodius-ai/datasource/ndex/ndextest"
)

// The real server's graph export, and its decrypted payload, read as a graph
// keyed by the file's name, saying what they lack, and never written.
func TestExports(t *testing.T) {
	for _, name := range []string{"07-export-graph.ndex", "07-export-graph.payload.json"} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			path := copyFixture(t, name)
			before := mustRead(t, path)
			var notices []string
			src, err := file.OpenWith(ctx, path, file.Options{Notify: func(s string) { notices = append(notices, s) }})
			if err != nil {
				t.Fatal(err)
			}
			key := file.ExportKey(path)
			if src.GraphKey() != key || !strings.HasPrefix(key, "07-export-graph") {
				t.Errorf("graph key %q, want the file's name %q", src.GraphKey(), key)
			}
			nodes, err := src.Nodes(ctx, key, "")
			if err != nil || len(nodes) != 9 {
				t.Fatalf("%d nodes, %v; want 9", len(nodes), err)
			}
			g, _ := src.Graph(ctx, key)
			if g.SheetName("1") != "data-processing" {
				t.Errorf("sheet names lost: %v", g.Sheets)
			}
			n, err := src.Node(ctx, key, "filter_active")
			if err != nil || n.Process != "" {
				t.Errorf("filter_active: code %q, %v; want none (its type is not in the export)", n.Process, err)
			}
			all := strings.Join(notices, "\n")
			for _, want := range []string{"read-only", "no node types", `"filter"`, "unknown", "graph convert"} {
				if !strings.Contains(all, want) {
					t.Errorf("notices %q do not say %q", notices, want)
				}
			}
			_, err = src.UpdateNode(ctx, key, "filter_active", map[string]any{"data": map[string]any{"x": 1}})
			if !errors.Is(err, datasource.ErrReadOnly) || !strings.Contains(err.Error(), "graph convert") {
				t.Errorf("change to an export: %v, want read-only saying how to get a writable copy", err)
			}
			if !bytes.Equal(before, mustRead(t, path)) {
				t.Error("the export was written")
			}
		})
	}
}

// Contract: a wrong secret or a damaged export fails with a sentence naming the
// secret or the decryption — at once, even through the lazy opener.
func TestExportWrongSecretOrDamaged(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "07-export-graph.ndex")
	_, err := file.OpenLazyWith(ctx, path, file.Options{Secret: "wrong"})
	if !errors.Is(err, ndex.ErrDecrypt) || !strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "decrypt") {
		t.Errorf("wrong secret: %v", err)
	}
	data := mustRead(t, path)
	damaged := writeFile(t, string(data[:len(data)-7]), 0o600)
	if _, err := file.OpenLazyWith(ctx, damaged, file.Options{}); !errors.Is(err, ndex.ErrDamaged) {
		t.Errorf("truncated export: %v", err)
	}
}

// The real server's export holds the four built-in types with their own handles:
// datasource.DefaultHandles must give exactly those (sides, positions, ids, types,
// accepted data), and its edges into a starter or HTML node arrive at point "1".
// (datasource's TestDefaultHandlesMatchDemo holds the embedded demo graph to them.)
func TestBuiltinHandlesAreNodius(t *testing.T) {
	ctx := context.Background()
	path := copyFixture(t, "07-export-graph.payload.json")
	src, err := file.OpenWith(ctx, path, file.Options{Notify: func(string) {}})
	if err != nil {
		t.Fatal(err)
	}
	key := file.ExportKey(path)
	nodes, err := src.Nodes(ctx, key, "")
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	seen := map[string]bool{}
	for _, n := range nodes {
		types[n.Key] = n.Type
		if !datasource.IsBuiltinType(n.Type) {
			continue
		}
		seen[n.Type] = true
		if want := datasource.DefaultHandles(n.Type, nil); !reflect.DeepEqual(n.Handles, want) {
			t.Errorf("the real %s node %q has handles %+v; DefaultHandles gives %+v", n.Type, n.Key, n.Handles, want)
		}
	}
	if len(seen) != len(datasource.BuiltinTypes) {
		t.Errorf("the export has built-in types %v, want all of %v", seen, datasource.BuiltinTypes)
	}
	edges, err := src.Edges(ctx, key, "")
	if err != nil {
		t.Fatal(err)
	}
	into := 0
	for _, e := range edges {
		if typ := types[e.Target]; typ == "starter" || typ == "html" {
			into++
			if e.TargetHandle != "1" {
				t.Errorf("edge %s into the %s %q arrives at %q, want \"1\"", e.Key, typ, e.Target, e.TargetHandle)
			}
		}
	}
	if into != 2 {
		t.Errorf("%d edges into a starter or html node, want 2 (entry_form → root, filter_active → display_html)", into)
	}
}

// A decompression bomb (a valid 1 MB export whose payload inflates to about
// 1 GB) is refused with one sentence, having inflated no more than the bound.
func TestNdexBombRefused(t *testing.T) {
	t.Parallel()
	bomb, err := ndextest.Bomb(1000<<20, ndex.DefaultSecret)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bomb.ndex")
	if err := os.WriteFile(path, bomb, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = file.Load(context.Background(), path, file.Options{})
	if err == nil || !strings.Contains(err.Error(), "inflates past 64 MiB") || strings.Count(err.Error(), ". ") > 0 {
		t.Fatalf("Load(bomb) = %v; want one sentence saying the payload inflates past the bound", err)
	}
}

// An export whose payload is under the size bound but packs more than a Nodius
// export holds — two million empty nodes (6 MB), or two million tiny values in one
// node's data (4 MB) — is refused before it is decoded.
func TestPayloadWithTooManyValuesRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, payload, want string }{
		{"nodes", `{"graph":{"name":"x"},"nodes":[` + strings.Repeat(`{},`, 2_000_000) + `{}],"edges":[]}`, "more than 40000 nodes"},
		{"values", `{"graph":{"name":"x"},"nodes":[{"localKey":"a","data":[` + strings.Repeat(`0,`, 2_000_000) + `0]}],"edges":[]}`, "more than 1000000 JSON values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data, err := ndex.Encode([]byte(tc.payload), ndex.Graph, ndex.DefaultSecret)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "many.ndex")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = file.Load(context.Background(), path, file.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Load = %v; want %q", err, tc.want)
			}
		})
	}
}

// A node type export packing more values than an export holds (two million
// handle points) is refused before it is decoded.
func TestTypeExportWithTooManyValuesRefused(t *testing.T) {
	t.Parallel()
	payload := `{"node":{"type":"x","handles":{"L":{"position":"separate","point":[` + strings.Repeat(`{},`, 2_000_000) + `{}]}}}}`
	data, err := ndex.Encode([]byte(payload), ndex.NodeConfig, ndex.DefaultSecret)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "type.ndex")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = file.LoadTypeExport(context.Background(), path, "api-call", "")
	if err == nil || !strings.Contains(err.Error(), "more than 1000000 JSON values") {
		t.Fatalf("LoadTypeExport = %v; want the values bound", err)
	}
}
