package undo_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// A graph file in Nodius's format: type fmt holds the code of nodes a and b.
const nodiusTypes = `{
  "graph": {"_key": "g", "name": "G", "description": "", "workspace": "w", "sheetsList": {"0": "main"}, "metadata": {}},
  "nodes": [
    {"_key": "a", "graphKey": "g", "type": "fmt", "typeVersion": 1, "sheet": "0", "handles": {}, "data": {}, "posX": 0, "posY": 0, "size": {"width": 300, "height": 80}},
    {"_key": "b", "graphKey": "g", "type": "fmt", "typeVersion": 1, "sheet": "0", "handles": {}, "data": {}, "posX": 400, "posY": 0, "size": {"width": 300, "height": 80}},
    {"_key": "page", "graphKey": "g", "type": "html", "typeVersion": 1, "sheet": "0", "handles": {}, "data": {}, "posX": 800, "posY": 0, "size": {"width": 640, "height": 360}}
  ],
  "edges": [{"_key": "e1", "graphKey": "g", "sheet": "0", "source": "a", "sourceHandle": "0", "target": "b", "targetHandle": "0", "label": ""}],
  "nodeConfigs": [{"_key": "fmt", "workspace": "w", "version": 1, "displayName": "Formatter", "description": "Formats.", "category": "data", "icon": "code",
    "node": {"type": "fmt", "handles": {"L": {"position": "separate", "point": [{"id": "0", "type": "in", "accept": "any"}]}, "R": {"position": "separate", "point": [{"id": "0", "type": "out", "accept": "any"}]}},
             "size": {"width": 300, "height": 80}, "process": "return 1;"},
    "border": {"radius": 10, "width": 1, "type": "solid", "normal": {"color": "black"}, "hover": {"color": "grey"}}}]
}`

// The same graph in this project's earlier format: code on nodes, flat config.
const earlierTypes = `{
  "graph": {"_key": "g", "name": "G", "description": "", "workspace": "w", "sheets": {"0": "main"}, "metadata": {}},
  "nodes": [
    {"_key": "a", "type": "fmt", "sheet": "0", "process": "return 1;", "handles": {}, "data": {}, "posX": 0, "posY": 0, "size": {"width": 300, "height": 80}},
    {"_key": "b", "type": "fmt", "sheet": "0", "process": "return 1;", "handles": {}, "data": {}, "posX": 400, "posY": 0, "size": {"width": 300, "height": 80}}
  ],
  "edges": [],
  "nodeConfigs": [{"_key": "fmt", "displayName": "Formatter", "description": "Formats.", "category": "data", "icon": "code", "handles": {}}]
}`

func typeFile(t *testing.T, body string) (string, *file.Source) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return path, src
}

func configOf(t *testing.T, src datasource.Source, key string) (datasource.NodeConfig, bool) {
	t.Helper()
	cfgs, err := src.Configs(context.Background(), "g")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cfgs {
		if c.Key == key {
			return c, true
		}
	}
	return datasource.NodeConfig{}, false
}

func beforeOf(t *testing.T, src datasource.Source, key string) string {
	c, _ := configOf(t, src, key)
	b, _ := json.Marshal(datasource.TypeFields(c))
	return string(b)
}

// TestTypeChangeApplyUndo: a type created or changed through a graph file lands in
// the file (nodeConfigs, node.process, node.size, border), reaches every node of
// the type, and is undone exactly.
func TestTypeChangeApplyUndo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name, body, action string
		check              func(t *testing.T, src *file.Source, raw string)
	}{
		{"create with look", nodiusTypes,
			`{"type":"configure_node_type","payload":{"mode":"create","typeKey":"checker","displayName":"Checker","process":"return 2;","size":{"width":120,"height":60},"border":{"radius":4},"content":{"type":"text","tag":"div","css":[{"selector":"&:hover","rules":[]}],"content":"<b>x</b>"}}}`,
			func(t *testing.T, src *file.Source, raw string) {
				c, ok := configOf(t, src, "checker")
				if !ok || c.Process != "return 2;" || c.Category != "custom" {
					t.Fatalf("config = %+v", c)
				}
				if s, ok := c.NodeSize(); !ok || s.Width != 120 || s.Height != 60 {
					t.Errorf("size = %+v", s)
				}
				for _, want := range []string{`"_key": "checker"`, `"process": "return 2;"`, `"radius": 4`, `"color": "var(--nodius-primary-dark)"`, `"width": 120`,
					`"selector": "&:hover"`, `"content": "<b>x</b>"`} { // written as the file's other text, not \u0026
					if !strings.Contains(raw, want) {
						t.Errorf("file lacks %s", want)
					}
				}
			}},
		{"update with look and code", nodiusTypes,
			`{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Format","process":"return 3;","border":{"normalColor":"red"},"size":{"width":320,"height":90},"nodes":["a","b"]}}`,
			func(t *testing.T, src *file.Source, raw string) {
				c, _ := configOf(t, src, "fmt")
				if c.DisplayName != "Format" || c.Process != "return 3;" || c.Description != "Formats." {
					t.Fatalf("config = %+v", c)
				}
				for _, k := range []string{"a", "b"} {
					if n, _ := src.Node(ctx, "g", k); n.Process != "return 3;" {
						t.Errorf("node %s runs %q", k, n.Process)
					}
				}
				if !strings.Contains(raw, `"color": "red"`) || !strings.Contains(raw, `"color": "grey"`) || strings.Count(raw, "return 3;") != 1 {
					t.Errorf("file:\n%s", raw)
				}
			}},
		{"earlier format: look on the flat config, code on the nodes", earlierTypes,
			`{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Format","process":"return 3;","size":{"width":320,"height":90},"nodes":["a","b"]}}`,
			func(t *testing.T, src *file.Source, raw string) {
				if strings.Contains(raw, `"node"`) || strings.Count(raw, `"process": "return 3;"`) != 2 || !strings.Contains(raw, `"sheets"`) {
					t.Errorf("file:\n%s", raw)
				}
				c, _ := configOf(t, src, "fmt")
				if s, ok := c.NodeSize(); !ok || s.Width != 320 || c.DisplayName != "Format" {
					t.Errorf("config = %+v", c)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path, src := typeFile(t, tc.body)
			before, _ := os.ReadFile(path)
			a := act(t, tc.action)
			if a.ConfigureNodeType.Mode == "update" {
				a.ConfigureNodeType.Before = datasource.TypeFields(mustConfig(t, src, "fmt"))
			}
			rec := undo.NewRecorder()
			if _, err := datasource.Apply(ctx, src, "g", a, datasource.Record(rec)); err != nil {
				t.Fatal(err)
			}
			raw, _ := os.ReadFile(path)
			tc.check(t, src, string(raw))
			rev, err := rec.Reversal()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(rev)
			stored, err := undo.Parse(b)
			if err != nil {
				t.Fatalf("reversal does not parse back: %v", err)
			}
			if err := undo.Belongs(rev, a); err != nil {
				t.Fatalf("reversal does not belong to the change: %v", err)
			}
			// Undone as the undo command does: another process, the reversal as
			// stored, the file read again.
			fresh, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := undo.Apply(ctx, fresh, "g", stored); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(path)
			if got, want := canonicalTypes(t, after), canonicalTypes(t, before); got != want {
				t.Errorf("undo left\n%s\nwant\n%s", got, want)
			}
		})
	}
}

func mustConfig(t *testing.T, src datasource.Source, key string) datasource.NodeConfig {
	t.Helper()
	c, ok := configOf(t, src, key)
	if !ok {
		t.Fatalf("no type %s", key)
	}
	return c
}

// canonicalTypes is the file without the type's timestamps, which a change stamps.
func canonicalTypes(t *testing.T, data []byte) string {
	s := canonical(t, data)
	var m map[string]any
	_ = json.Unmarshal([]byte(s), &m)
	for _, c := range m["nodeConfigs"].([]any) {
		delete(c.(map[string]any), "lastUpdatedTime")
	}
	b, _ := json.MarshalIndent(m, "", " ")
	return string(b)
}

// TestTypeChangeRefused: a type changed since the proposal was shown, a type with
// code in a file of the earlier format, and an undo after the type was edited
// again are refused, with nothing changed.
func TestTypeChangeRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	_, src := typeFile(t, nodiusTypes)
	a := act(t, `{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Format","nodes":["a","b"]}}`)
	a.ConfigureNodeType.Before = map[string]any{"displayName": "Someone else's"}
	_, err := datasource.Apply(ctx, src, "g", a)
	if !datasource.IsConflict(err) || !errors.Is(err, datasource.ErrTypeChanged) {
		t.Errorf("stale proposal: err = %v", err)
	}

	path, src := typeFile(t, earlierTypes)
	was, _ := os.ReadFile(path)
	_, err = datasource.Apply(ctx, src, "g", act(t, `{"type":"configure_node_type","payload":{"mode":"create","typeKey":"x","displayName":"X","process":"return 1;"}}`))
	if err == nil || !strings.Contains(err.Error(), "graph convert") {
		t.Errorf("earlier format create with code: err = %v", err)
	}
	if now, _ := os.ReadFile(path); string(now) != string(was) {
		t.Error("the refused change wrote the file")
	}

	_, src = typeFile(t, nodiusTypes)
	up := act(t, `{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Format","nodes":["a","b"]}}`)
	rec := undo.NewRecorder()
	if _, err := datasource.Apply(ctx, src, "g", up, datasource.Record(rec)); err != nil {
		t.Fatal(err)
	}
	rev, _ := rec.Reversal()
	again := act(t, `{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Formatter 2"}}`)
	if _, err := datasource.Apply(ctx, src, "g", again); err != nil {
		t.Fatal(err)
	}
	if _, err := undo.Apply(ctx, src, "g", rev); err == nil || !strings.Contains(err.Error(), "node type fmt was edited since (displayName)") {
		t.Errorf("undo after a later edit: err = %v", err)
	}
	if c := mustConfig(t, src, "fmt"); c.DisplayName != "Formatter 2" {
		t.Errorf("refused undo changed the type: %q", c.DisplayName)
	}

	// A member no proposal shows (alwaysRendered, node.posX…) edited since is
	// drift too: undo would put it back silently.
	for _, edit := range []func(c *datasource.NodeConfig){
		func(c *datasource.NodeConfig) { c.Extra["alwaysRendered"] = json.RawMessage(`true`) },
		func(c *datasource.NodeConfig) { c.NodeExtra["posX"] = json.RawMessage(`40`) },
	} {
		path, src := typeFile(t, nodiusTypes)
		rec := undo.NewRecorder()
		if _, err := datasource.Apply(ctx, src, "g", up, datasource.Record(rec)); err != nil {
			t.Fatal(err)
		}
		rev, _ := rec.Reversal()
		c := mustConfig(t, src, "fmt")
		c.Extra, c.NodeExtra = maps.Clone(c.Extra), maps.Clone(c.NodeExtra)
		if c.NodeExtra == nil {
			c.NodeExtra = map[string]json.RawMessage{}
		}
		edit(&c)
		if _, err := src.PutConfig(ctx, "g", c); err != nil {
			t.Fatal(err)
		}
		edited, _ := os.ReadFile(path)
		if _, err := undo.Apply(ctx, src, "g", rev); err == nil || !strings.Contains(err.Error(), "node type fmt was edited since") || strings.Contains(err.Error(), "#") {
			t.Errorf("undo after an edit of a member no proposal shows: err = %v", err)
		}
		if now, _ := os.ReadFile(path); string(now) != string(edited) {
			t.Error("the refused undo changed the file")
		}
	}

	// A created type that got a node is not removed by undo.
	_, src = typeFile(t, nodiusTypes)
	cr := act(t, `{"type":"configure_node_type","payload":{"mode":"create","typeKey":"checker","displayName":"Checker"}}`)
	rec = undo.NewRecorder()
	if _, err := datasource.Apply(ctx, src, "g", cr, datasource.Record(rec)); err != nil {
		t.Fatal(err)
	}
	rev, _ = rec.Reversal()
	if _, err := datasource.Apply(ctx, src, "g", act(t, `{"type":"create_node","payload":{"nodeKey":"n1","typeKey":"checker","sheet":"0"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := undo.Apply(ctx, src, "g", rev); err == nil || !strings.Contains(err.Error(), "still has 1 node") {
		t.Errorf("undo of a type in use: err = %v", err)
	}
}

// TestNewNodeSizeFromType: a new node takes its type's node.size; a built-in
// type's is Nodius's; a type that says none gives 200x100.
func TestNewNodeSizeFromType(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := typeFile(t, nodiusTypes)
	if _, err := datasource.Apply(ctx, src, "g", act(t, `{"type":"configure_node_type","payload":{"mode":"create","typeKey":"plain","displayName":"Plain"}}`)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		typ  string
		want datasource.Size
	}{
		{"fmt", datasource.Size{Width: 300, Height: 80}},
		{"html", datasource.Size{Width: 640, Height: 360, Dynamic: true}},
		{"starter", datasource.Size{Width: 150, Height: 150, Dynamic: true}},
		{"plain", datasource.Size{Width: 200, Height: 100, Dynamic: true}},
	}
	for i, tc := range tests {
		key := "n" + string(rune('a'+i))
		var a datasource.Action
		if err := json.Unmarshal([]byte(`{"type":"create_node_with_edges","payload":{"typeKey":"`+tc.typ+`","edges":[]}}`), &a); err != nil {
			t.Fatal(err)
		}
		a = datasource.AssignKeys(a, "s"+key)
		res, err := datasource.Apply(ctx, src, "g", a)
		if err != nil {
			t.Fatal(err)
		}
		n, err := src.Node(ctx, "g", res.Created.Nodes[0])
		if err != nil {
			t.Fatal(err)
		}
		if n.Size != tc.want {
			t.Errorf("%s: size = %+v, want %+v", tc.typ, n.Size, tc.want)
		}
	}
	if got := datasource.DefaultSize("unknown", nil); got != (datasource.Size{Width: 200, Height: 100}) {
		t.Errorf("no type: %+v", got)
	}
}
