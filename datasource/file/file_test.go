package file_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
)

// rich has unknown fields at every level, numbers that float64 would change, and
// HTML in process code.
const rich = `{
  "graph": {"_key": "g1", "name": "Orders", "description": "d", "workspace": "w",
            "sheets": {"0": "main"}, "metadata": {"rev": 12345678901234567890}, "owner": "u-1"},
  "nodes": [
    {"_key": "a", "type": "starter", "sheet": "0", "process": "",
     "handles": {"R": {"position": "separate", "point": [{"id": "0", "type": "out", "accept": "any", "color": "#f00"}], "gap": 2}},
     "data": {"price": 1.10, "qty": 3}, "posX": 0, "posY": 0, "size": {"width": 200, "height": 100}, "_rev": "_abc"},
    {"_key": "b", "type": "custom", "sheet": "0", "process": "render('<b>hi</b>' && x > 1)",
     "handles": {"L": {"position": "separate", "point": [{"id": "0", "type": "in", "accept": "any"}]},
                 "R": {"position": "separate", "point": [{"id": "0", "type": "out", "accept": "any"}]}},
     "data": {}, "posX": 300, "posY": 0, "size": {"width": 200, "height": 100}, "embedding": [0.5, 0.25]}
  ],
  "edges": [{"_key": "e1", "sheet": "0", "source": "a", "sourceHandle": "0", "target": "b", "targetHandle": "0", "label": "", "animated": true}],
  "nodeConfigs": [{"_key": "custom", "displayName": "Custom", "description": "", "category": "misc", "icon": "box", "handles": {}, "border": {"radius": 4}}],
  "exportedBy": "nodius 2.3",
  "schemaVersion": 4
}
`

func writeFile(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func decodeGeneric(t *testing.T, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
	return m
}

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, rich, 0o640)
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.MoveNode(ctx, "g1", "b", 310, 5); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := decodeGeneric(t, []byte(rich))
	node := want["nodes"].([]any)[1].(map[string]any)
	node["posX"], node["posY"] = json.Number("310"), json.Number("5")
	if g := decodeGeneric(t, got); !reflect.DeepEqual(g, want) {
		t.Errorf("file after move:\n%s", got)
	}
	for _, s := range []string{`"price": 1.10`, `"rev": 12345678901234567890`, `render('<b>hi</b>' && x > 1)`} {
		if !strings.Contains(string(got), s) {
			t.Errorf("file lost %s:\n%s", s, got)
		}
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 { // the graph alone: no temporary file, no lock file
		t.Errorf("temp files left behind: %v", entries)
	}
	if src.Describe() != "file:"+path || src.GraphKey() != "g1" {
		t.Errorf("Describe = %q, key = %q", src.Describe(), src.GraphKey())
	}
}

func TestDemoFileRoundTripsByteForByte(t *testing.T) {
	t.Parallel()
	doc, err := demo.Document()
	if err != nil {
		t.Fatal(err)
	}
	out, err := file.Encode(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, demo.JSON()) {
		t.Errorf("demo.json does not re-encode identically")
	}
}

func TestMalformedFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, want string
	}{
		{"empty", "", "graph.json: the file is empty"},
		{"syntax", "{\n  \"graph\": {\"_key\": \"g\"},\n  \"nodes\": [,]\n}", "graph.json:3:13: invalid JSON: invalid character ','"},
		{"truncated", "{\"graph\": {\"_key\": \"g\"}", "graph.json:1:24: invalid JSON: unexpected end of JSON input"},
		{"not an object", "[1, 2]", "graph.json:1:1: expected object, got array"},
		{"posX string", "{\"graph\": {\"_key\": \"g\"},\n \"nodes\": [\n  {\"_key\": \"a\"},\n  {\"_key\": \"b\"},\n  {\"_key\": \"c\",\n   \"posX\": \"12\"}]}",
			"graph.json:6:12: nodes[2].posX: expected number, got string"},
		{"handle id", "{\"graph\": {\"_key\": \"g\"}, \"nodes\": [{\"_key\": \"a\", \"handles\": {\"L\": {\"point\": [{\"id\": true}]}}}]}",
			"graph.json:1:85: nodes[0].handles.L.point[0].id: expected string, got boolean"},
		{"sheetsList", "{\"graph\": {\"_key\": \"g\", \"sheetsList\": [\"main\"]}}", "graph.json:1:39: graph.sheetsList: expected object, got array"},
		{"no graph", "{\"nodes\": []}", "graph.json:1:1: graph._key: missing or empty"},
		{"graph without key", "{\"graph\": {\"name\": \"x\"}}", "graph.json:1:11: graph._key: missing or empty"},
		{"node without key", "{\"graph\": {\"_key\": \"g\"}, \"nodes\": [{\"type\": \"html\"}]}", "graph.json:1:36: nodes[0]._key: missing or empty"},
		{"duplicate node", "{\"graph\": {\"_key\": \"g\"}, \"nodes\": [{\"_key\": \"a\"}, {\"_key\": \"a\"}]}", "graph.json:1:60: nodes[1]._key: node key \"a\" is already used by nodes[0]"},
		{"dangling edge", "{\"graph\": {\"_key\": \"g\"}, \"nodes\": [{\"_key\": \"a\"}],\n\"edges\": [{\"_key\": \"e\", \"source\": \"a\", \"target\": \"zz\"}]}",
			"graph.json:2:50: edges[0].target: node \"zz\" does not exist in this file"},
		{"duplicate edge", "{\"graph\": {\"_key\": \"g\"}, \"nodes\": [{\"_key\": \"a\"}], \"edges\": [{\"_key\": \"e\", \"source\": \"a\", \"target\": \"a\"}, {\"_key\": \"e\", \"source\": \"a\", \"target\": \"a\"}]}",
			"nodes[0]"},
		{"edges not array", "{\"graph\": {\"_key\": \"g\"}, \"edges\": {}}", "graph.json:1:35: edges: expected array, got object"},
		{"utf8 column", "{\"graph\": {\"_key\": \"g\", \"name\": \"é\", \"workspace\": 1}}", "graph.json:1:51: graph.workspace: expected string, got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, tt.content, 0o644)
			_, err := file.Open(context.Background(), path)
			if err == nil {
				t.Fatal("no error")
			}
			msg := strings.ReplaceAll(err.Error(), path, "graph.json")
			if tt.name == "duplicate edge" {
				tt.want = "edges[1]._key: edge key \"e\" is already used by edges[0]"
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error\n got %s\nwant %s", msg, tt.want)
			}
			var pe *file.ParseError
			if !errors.As(err, &pe) {
				t.Errorf("%T is not a *ParseError", err)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	if _, err := file.Open(ctx, filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json does not exist") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := file.Open(ctx, dir); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
	if _, err := file.Open(ctx, ""); err == nil {
		t.Error("empty path accepted")
	}
}

func TestApplyEachAction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	create := datasource.Action{Type: datasource.CreateNodeAction, CreateNode: &datasource.CreateNodePayload{NodeKey: "log-2", TypeKey: "log-node", Sheet: "0", PosX: 1, PosY: 2, Process: "console.log(1)"}}
	tests := []struct {
		name   string
		action datasource.Action
		check  func(t *testing.T, s datasource.Snapshot)
	}{
		{"create_node", create, func(t *testing.T, s datasource.Snapshot) {
			if len(s.Nodes) != 10 || s.Nodes[9].Key != "log-2" || s.Nodes[9].Process != "console.log(1)" {
				t.Errorf("nodes: %d", len(s.Nodes))
			}
		}},
		{"update_node", datasource.Action{Type: datasource.UpdateNodeAction, UpdateNode: &datasource.UpdateNodePayload{NodeKey: "fetch-api",
			Changes: map[string]any{"data.season": json.Number("2025")}}}, func(t *testing.T, s datasource.Snapshot) {
			if s.Nodes[2].Data.(map[string]any)["season"] != json.Number("2025") {
				t.Errorf("data = %v", s.Nodes[2].Data)
			}
		}},
		{"move_node", datasource.Action{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: -5, PosY: 7.5}},
			func(t *testing.T, s datasource.Snapshot) {
				if s.Nodes[1].PosX != -5 || s.Nodes[1].PosY != 7.5 {
					t.Errorf("root at %v,%v", s.Nodes[1].PosX, s.Nodes[1].PosY)
				}
			}},
		{"delete_node", datasource.Action{Type: datasource.DeleteNodeAction, DeleteNode: &datasource.DeleteNodePayload{NodeKey: "fetch-api"}},
			func(t *testing.T, s datasource.Snapshot) {
				if len(s.Nodes) != 8 || len(s.Edges) != 3 {
					t.Errorf("%d nodes, %d edges", len(s.Nodes), len(s.Edges))
				}
			}},
		{"create_edge", datasource.Action{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{EdgeKey: "e7",
			SourceKey: "fetch-api", SourceHandle: "1", TargetKey: "return", TargetHandle: "0", Sheet: "0", Label: "error"}},
			func(t *testing.T, s datasource.Snapshot) {
				if len(s.Edges) != 7 || s.Edges[6].Key != "e7" || s.Edges[6].Label != "error" {
					t.Errorf("edges: %v", s.Edges)
				}
			}},
		{"delete_edge", datasource.Action{Type: datasource.DeleteEdgeAction, DeleteEdge: &datasource.DeleteEdgePayload{EdgeKey: "e4"}},
			func(t *testing.T, s datasource.Snapshot) {
				if len(s.Edges) != 5 {
					t.Errorf("edges: %d", len(s.Edges))
				}
			}},
		{"batch", datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{create,
			{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{SourceKey: "fetch-api", SourceHandle: "1", TargetKey: "log-2"}}}}},
			func(t *testing.T, s datasource.Snapshot) {
				if len(s.Nodes) != 10 || len(s.Edges) != 7 || s.Edges[6].Target != "log-2" {
					t.Errorf("%d nodes, %d edges", len(s.Nodes), len(s.Edges))
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, string(demo.JSON()), 0o600)
			src, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			res, err := datasource.Apply(ctx, src, demo.GraphKey, tt.action)
			if err != nil || !res.Applied {
				t.Fatalf("apply: %+v %v", res, err)
			}
			// What is on disk, read by a fresh source, shows the change.
			fresh, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := fresh.Snapshot(ctx, demo.GraphKey)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, snap)
			if v, _ := src.Store().Version(demo.GraphKey); v != 2 {
				t.Errorf("version %d: an action must be one write", v)
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 { // the graph alone: no temporary file, no lock file
				t.Errorf("temp files left behind: %v", entries)
			}
		})
	}
}

func TestFailedBatchLeavesFileAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, string(demo.JSON()), 0o644)
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	bad := datasource.Action{Type: datasource.BatchAction, Batch: &datasource.BatchPayload{Actions: []datasource.Action{
		{Type: datasource.MoveNodeAction, MoveNode: &datasource.MoveNodePayload{NodeKey: "root", PosX: 1, PosY: 1}},
		{Type: datasource.CreateEdgeAction, CreateEdge: &datasource.CreateEdgePayload{SourceKey: "return", TargetKey: "root"}},
	}}}
	if _, err := src.ApplyAction(ctx, demo.GraphKey, bad); err == nil || !strings.Contains(err.Error(), "batch step 2") {
		t.Fatalf("err = %v", err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, demo.JSON()) {
		t.Error("file changed by a failed batch")
	}
	if n, _ := src.Node(ctx, demo.GraphKey, "root"); n.PosX != 300 {
		t.Errorf("memory changed by a failed batch: %v", n.PosX)
	}
}

func TestReloadWhenChangedOnDisk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := writeFile(t, rich, 0o644)
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Another program adds node c.
	changed := strings.Replace(rich, `"nodes": [`, `"nodes": [{"_key": "c", "type": "html", "sheet": "0", "handles": {"L": {"point": [{"id": "0", "type": "in"}]}}},`, 1)
	if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(2 * time.Second)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Node(ctx, "g1", "c"); err != nil {
		t.Fatalf("external change not seen: %v", err)
	}
	// A write goes on top of the external change.
	if _, err := src.CreateEdge(ctx, "g1", datasource.Edge{Source: "a", Target: "c"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	doc, err := file.Parse(path, data)
	if err != nil || len(doc.Nodes) != 3 || len(doc.Edges) != 2 || doc.Extra["schemaVersion"] == nil {
		t.Errorf("after write: %d nodes, %d edges, %v", len(doc.Nodes), len(doc.Edges), err)
	}
	// A broken file is reported on the next read, with its place.
	if err := os.WriteFile(path, []byte(`{"graph": {`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Nodes(ctx, "g1", ""); err == nil || !strings.Contains(err.Error(), path+":1:") {
		t.Errorf("broken file: %v", err)
	}
}

func TestSymlinkWritesThrough(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	target := writeFile(t, rich, 0o644)
	link := filepath.Join(t.TempDir(), "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	src, err := file.Open(ctx, link)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.MoveNode(ctx, "g1", "a", 9, 9); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("symlink replaced: %v", err)
	}
	data, _ := os.ReadFile(target)
	if !strings.Contains(string(data), `"posX": 9`) {
		t.Errorf("target not written")
	}
}

func TestWriteFailureKeepsMemory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	ctx := context.Background()
	path := writeFile(t, rich, 0o644)
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	if err := src.MoveNode(ctx, "g1", "a", 50, 50); err == nil {
		t.Fatal("write into a read-only directory succeeded")
	}
	if n, _ := src.Node(ctx, "g1", "a"); n.PosX != 0 {
		t.Errorf("memory kept a change that was not saved")
	}
}

// The key of an unparsed file is read from its start: `ask` without --graph over a
// large graph the index cache answers does not parse it to learn its key.
func TestLazyGraphKeyReadsOnlyTheStart(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `{"graph": {"_key": "g1", "name": "x"}, "nodes": [{"_key": "a"}, `+strings.Repeat(" ", 1<<20)+`{"_key": 3}]}`, 0o600)
	src, err := file.OpenLazy(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if k := src.GraphKey(); k != "g1" || src.Opened() {
		t.Fatalf("key %q, parsed %v", k, src.Opened())
	}
	// A file whose start says nothing: the parse decides (and fails here).
	bad, err := file.OpenLazy(context.Background(), writeFile(t, `{"graph": {"name": "x"}, "nodes": [}`, 0o600))
	if err != nil {
		t.Fatal(err)
	}
	if k := bad.GraphKey(); k != "" {
		t.Fatalf("key %q from a malformed file", k)
	}
}

// The graph's metadata of an unparsed file is read from its start too: every
// command checks its graph exists before anything else.
func TestLazyGraphReadsOnlyTheStart(t *testing.T) {
	t.Parallel()
	path := writeFile(t, `{"graph": {"_key": "g1", "name": "Big", "sheets": {"0": "main"}}, "nodes": [{"_key": "a"}]}`, 0o600)
	src, err := file.OpenLazy(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	g, err := src.Graph(context.Background(), "g1")
	if err != nil || g.Name != "Big" || g.Sheets["0"] != "main" || src.Opened() {
		t.Fatalf("graph %+v, %v, parsed %v", g, err, src.Opened())
	}
	// Another key is looked up the usual way (parsing), with its usual error.
	if _, err := src.Graph(context.Background(), "other"); !errors.Is(err, datasource.ErrNotFound) {
		t.Fatalf("other graph: %v", err)
	}
}
