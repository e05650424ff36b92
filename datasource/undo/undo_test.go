package undo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// graphFile writes the demo graph to a file and rewrites it once through the file
// source (a move to where the node already is), so the bytes are the writer's.
func graphFile(t *testing.T) (string, *file.Source) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "g.json")
	if err := os.WriteFile(path, demo.JSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := src.MoveNode(context.Background(), "demo", "root", 300, 0); err != nil {
		t.Fatal(err)
	}
	return path, src
}

func act(t *testing.T, s string) datasource.Action {
	t.Helper()
	var a datasource.Action
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		t.Fatal(err)
	}
	return datasource.AssignKeys(a, "op1")
}

// canonical is the graph file with its nodes and edges sorted by key: the same
// document, node order aside.
func canonical(t *testing.T, data []byte) string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("graph file does not parse: %v", err)
	}
	for _, k := range []string{"nodes", "edges"} {
		list, _ := m[k].([]any)
		sort.Slice(list, func(i, j int) bool {
			return list[i].(map[string]any)["_key"].(string) < list[j].(map[string]any)["_key"].(string)
		})
	}
	b, _ := json.MarshalIndent(m, "", " ")
	return string(b)
}

// undoRestores checks that the applied action changed the graph file, undoes it
// with rev, and checks that the file is back to before, node order aside. It
// returns the file as the undo left it; what names the state expected in a failure.
func undoRestores(t *testing.T, src *file.Source, path string, before []byte, rev undo.Reversal, what string) []byte {
	t.Helper()
	changed, _ := os.ReadFile(path)
	if bytes.Equal(changed, before) {
		t.Fatal("the action changed nothing")
	}
	rep, err := undo.Apply(context.Background(), src, "demo", rev)
	if err != nil {
		t.Fatalf("undo: %v (report %+v)", err, rep)
	}
	after, _ := os.ReadFile(path)
	if canonical(t, after) != canonical(t, before) {
		t.Fatalf("undo did not restore %s:\nbefore %s\nafter  %s", what, canonical(t, before), canonical(t, after))
	}
	return after
}

var kinds = []struct {
	name, action string
	sameOrder    bool // undoing keeps the file byte for byte, order included
}{
	{"create_node", `{"type":"create_node","payload":{"typeKey":"log-node","sheet":"0","posX":10,"posY":20,"data":{"level":"info"}}}`, true},
	{"create_edge", `{"type":"create_edge","payload":{"sourceKey":"filter-active","sourceHandle":"0","targetKey":"error-handler","targetHandle":"0","sheet":"0"}}`, true},
	{"update_node", `{"type":"update_node","payload":{"nodeKey":"fetch-api","changes":{"data.url":"https://x.test","data.newField":7,"process":"return 1"}}}`, true},
	{"move_node", `{"type":"move_node","payload":{"nodeKey":"filter-active","posX":5,"posY":6}}`, true},
	{"delete_node", `{"type":"delete_node","payload":{"nodeKey":"fetch-api"}}`, false},
	{"delete_edge", `{"type":"delete_edge","payload":{"edgeKey":"e3"}}`, false},
	{"batch", `{"type":"batch","payload":{"actions":[
		{"type":"create_node","payload":{"typeKey":"log-node","sheet":"0","posX":1,"posY":2}},
		{"type":"create_edge","payload":{"sourceKey":"root","sourceHandle":"0","targetKey":"filter-active","targetHandle":"0","sheet":"0"}},
		{"type":"update_node","payload":{"nodeKey":"fetch-api","changes":{"data.url":"u2"}}},
		{"type":"update_node","payload":{"nodeKey":"fetch-api","changes":{"process":"p2"}}},
		{"type":"move_node","payload":{"nodeKey":"root","posX":9,"posY":9}},
		{"type":"delete_edge","payload":{"edgeKey":"e5"}},
		{"type":"delete_node","payload":{"nodeKey":"error-handler"}}]}}`, false},
}

// TestUndoRestoresFile applies each kind of action, and a batch, to a graph file,
// undoes it, and compares the file with what it was.
func TestUndoRestoresFile(t *testing.T) {
	t.Parallel()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			path, src := graphFile(t)
			before, _ := os.ReadFile(path)
			a := act(t, k.action)
			rev, err := undo.Plan(ctx, src, "demo", a)
			if err != nil {
				t.Fatal(err)
			}
			// The reversal survives being stored.
			b, _ := json.Marshal(rev)
			rev = undo.Reversal{}
			if err := json.Unmarshal(b, &rev); err != nil {
				t.Fatal(err)
			}
			if _, err := datasource.Apply(ctx, src, "demo", a); err != nil {
				t.Fatal(err)
			}
			after := undoRestores(t, src, path, before, rev, "the file")
			if k.sameOrder && !bytes.Equal(after, before) {
				t.Fatalf("undo did not restore the file byte for byte:\n%s\n---\n%s", before, after)
			}
			// Undoing again finds everything already reversed and changes nothing.
			rep, err := undo.Apply(ctx, src, "demo", rev)
			if err != nil || len(rep.Reversed) != 0 || len(rep.Already) != len(rev.Steps) {
				t.Fatalf("second undo: %v %+v", err, rep)
			}
			again, _ := os.ReadFile(path)
			if canonical(t, again) != canonical(t, before) {
				t.Fatal("a second undo changed the file")
			}
		})
	}
}

// TestUndoRefusesDrift: when the graph changed since the change, undo names what
// changed and changes nothing; forced, it reverses what still matches and lists
// what it left.
func TestUndoRefusesDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name, action string
		edit         func(*file.Source) error
		want         string // in the refusal
		left         int    // steps left when forced
	}{
		{"edited node", `{"type":"update_node","payload":{"nodeKey":"fetch-api","changes":{"data.url":"u"}}}`,
			func(s *file.Source) error {
				_, err := s.UpdateNode(ctx, "demo", "fetch-api", map[string]any{"data.url": "by hand"})
				return err
			}, "node fetch-api was edited since (data)", 1},
		{"created node got edges", `{"type":"batch","payload":{"actions":[
			{"type":"create_node","payload":{"nodeKey":"n1","typeKey":"log-node","sheet":"0","posX":1,"posY":2}},
			{"type":"move_node","payload":{"nodeKey":"root","posX":9,"posY":9}}]}}`,
			func(s *file.Source) error {
				_, err := s.CreateEdge(ctx, "demo", datasource.Edge{Key: "hand", Sheet: "0", Source: "fetch-api", SourceHandle: "0", Target: "n1", TargetHandle: "0"})
				return err
			}, "node n1 got new edges since (hand)", 1},
		{"moved node", `{"type":"move_node","payload":{"nodeKey":"root","posX":9,"posY":9}}`,
			func(s *file.Source) error { return s.MoveNode(ctx, "demo", "root", 50, 50) },
			"node root was moved since (now at 50, 50)", 1},
		{"deleted node back", `{"type":"delete_node","payload":{"nodeKey":"return"}}`,
			func(s *file.Source) error {
				_, err := s.DeleteNode(ctx, "demo", "display-html")
				return err
			}, "edge e6 cannot come back: node display-html is gone", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path, src := graphFile(t)
			a := act(t, c.action)
			rev, err := undo.Plan(ctx, src, "demo", a)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := datasource.Apply(ctx, src, "demo", a); err != nil {
				t.Fatal(err)
			}
			if err := c.edit(src); err != nil {
				t.Fatal(err)
			}
			edited, _ := os.ReadFile(path)
			_, err = undo.Check(ctx, src, "demo", rev, false)
			d, ok := undo.IsDrift(err)
			if !ok || !strings.Contains(d.Error(), c.want) {
				t.Fatalf("check: got %v, want a refusal naming %q", err, c.want)
			}
			_, err = undo.Apply(ctx, src, "demo", rev)
			if _, ok := undo.IsDrift(err); !ok {
				t.Fatalf("apply: got %v, want a refusal", err)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, edited) {
				t.Fatal("a refused undo changed the file")
			}
			rep, err := undo.Check(ctx, src, "demo", rev, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Left) != c.left || !strings.Contains(strings.Join(rep.Left, "\n"), c.want) {
				t.Fatalf("forced: left %q, want %d naming %q", rep.Left, c.left, c.want)
			}
			rep2, err := undo.Apply(ctx, src, "demo", rep.Plan)
			if err != nil || !reflect.DeepEqual(rep2.Reversed, rep.Reversed) {
				t.Fatalf("forced apply: %v, reversed %q want %q", err, rep2.Reversed, rep.Reversed)
			}
		})
	}
}

// TestRecordedReversalSeesTheGraphItChanged: another process changes the graph file
// after the undo was planned and before the apply (the file source still holds the
// graph as it read it). The reversal the apply records under the file's lock puts
// back the graph as the other process left it, for every kind of action, where the
// planned one reverts the other process's change or refuses it as drift.
func TestRecordedReversalSeesTheGraphItChanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			path, src := graphFile(t)
			a := act(t, k.action)
			planned, err := undo.Plan(ctx, src, "demo", a)
			if err != nil {
				t.Fatal(err)
			}

			// Another writer edits the nodes the actions change, in fields they
			// leave alone, and moves those they move.
			other, err := file.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := other.UpdateNode(ctx, "demo", "fetch-api", map[string]any{"data.retries": 7}); err != nil {
				t.Fatal(err)
			}
			if _, err := other.UpdateNode(ctx, "demo", "error-handler", map[string]any{"process": "// edited meanwhile"}); err != nil {
				t.Fatal(err)
			}
			if err := other.MoveNode(ctx, "demo", "root", 55, 66); err != nil {
				t.Fatal(err)
			}
			if err := other.MoveNode(ctx, "demo", "filter-active", 44, 33); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(path)

			rec := undo.NewRecorder()
			if _, err := datasource.Apply(ctx, src, "demo", a, datasource.Record(rec)); err != nil {
				t.Fatal(err)
			}
			rev, err := rec.Reversal()
			if err != nil {
				t.Fatal(err)
			}
			undoRestores(t, src, path, before, rev, "the file as the other writer left it")
			// What was planned before the other writer came differs wherever the
			// action touched what it changed.
			if k.name != "create_node" && k.name != "create_edge" && k.name != "delete_edge" && reflect.DeepEqual(planned, rev) {
				t.Fatalf("the planned reversal already knew the other writer's change: %+v", planned)
			}
		})
	}
}

// A recorder that an apply did not run, or whose apply failed, has no reversal.
func TestRecorderWithoutAnApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := undo.NewRecorder().Reversal(); !errors.Is(err, undo.ErrNotRecorded) {
		t.Fatalf("never run: %v", err)
	}
	_, src := graphFile(t)
	rec := undo.NewRecorder()
	a := act(t, `{"type":"batch","payload":{"actions":[
		{"type":"move_node","payload":{"nodeKey":"root","posX":9,"posY":9}},
		{"type":"delete_node","payload":{"nodeKey":"no-such-node"}}]}}`)
	if _, err := datasource.Apply(ctx, src, "demo", a, datasource.Record(rec)); err == nil {
		t.Fatal("the batch applied")
	}
	if _, err := rec.Reversal(); !errors.Is(err, undo.ErrNotRecorded) || !strings.Contains(err.Error(), "no-such-node") {
		t.Fatalf("failed apply: %v", err)
	}
}

// TestBelongs: the reversal an apply records belongs to its action; a reversal that
// names anything else (an imported thread's undo record, say) does not.
func TestBelongs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, src := graphFile(t)
	for _, k := range kinds {
		a := act(t, k.action)
		rev, err := undo.Plan(ctx, src, "demo", a)
		if err != nil {
			t.Fatal(err)
		}
		if err := undo.Belongs(rev, a); err != nil {
			t.Errorf("%s: its own reversal: %v", k.name, err)
		}
	}
	create := act(t, kinds[0].action)
	foreign := []undo.Step{
		{Op: undo.RemoveNode, Key: "fetch-api"},
		{Op: undo.RemoveEdge, Key: "e3"},
		{Op: undo.RestoreFields, Key: "root", Before: map[string]any{"process": "x"}},
		{Op: undo.RestorePosition, Key: "root", To: &undo.Pos{X: 1, Y: 2}},
		{Op: undo.RestoreNode, Key: "z", Node: &datasource.Node{Key: "z"}},
		{Op: undo.RestoreEdge, Key: "z", Edge: &datasource.Edge{Key: "z", Source: "root", Target: "fetch-api"}},
	}
	own, _ := undo.Plan(ctx, src, "demo", create)
	for _, s := range foreign {
		rev := undo.Reversal{Steps: append(append([]undo.Step(nil), own.Steps...), s)}
		if err := undo.Belongs(rev, create); err == nil || !strings.Contains(err.Error(), "not part of the change") {
			t.Errorf("%s %s with a create_node: %v, want refused", s.Op, s.Key, err)
		}
	}
	// A deleted node's edges come back with it; another edge does not.
	del := act(t, `{"type":"delete_node","payload":{"nodeKey":"fetch-api"}}`)
	rev := undo.Reversal{Steps: []undo.Step{{Op: undo.RestoreEdge, Key: "x", Edge: &datasource.Edge{Key: "x", Source: "root", Target: "filter-active"}}}}
	if err := undo.Belongs(rev, del); err == nil {
		t.Error("an edge between two other nodes was taken as part of a delete_node")
	}
}

// TestUndoRestoresAnEdgeBetweenSheets: a deleted node's edge to a node of another
// sheet comes back with it (undo used to call it drift, and --force lost it).
func TestUndoRestoresAnEdgeBetweenSheets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path, _ := graphFile(t)
	var doc map[string]any
	b, _ := os.ReadFile(path)
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	doc["edges"] = append(doc["edges"].([]any), map[string]any{"_key": "across", "sheet": "0",
		"source": "filter-active", "sourceHandle": "0", "target": "sort-stats", "targetHandle": "0", "label": ""})
	b, _ = json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	for _, key := range []string{"sort-stats", "filter-active"} {
		a := act(t, `{"type":"delete_node","payload":{"nodeKey":"`+key+`"}}`)
		rec := undo.NewRecorder()
		if _, err := datasource.Apply(ctx, src, "demo", a, datasource.Record(rec)); err != nil {
			t.Fatal(err)
		}
		rev, err := rec.Reversal()
		if err != nil {
			t.Fatal(err)
		}
		if err := undo.Belongs(rev, a); err != nil {
			t.Errorf("delete %s: %v", key, err)
		}
		if rep, err := undo.Check(ctx, src, "demo", rev, false); err != nil {
			t.Fatalf("delete %s, undo check: %v (%+v)", key, err, rep)
		}
		undoRestores(t, src, path, before, rev, "the node and its edge across sheets")
		if e, err := src.Edges(ctx, "demo", ""); err != nil || !hasEdge(e, "across") {
			t.Fatalf("delete %s: the edge across sheets is not back (%v)", key, err)
		}
	}
}

func hasEdge(edges []datasource.Edge, key string) bool {
	for _, e := range edges {
		if e.Key == key {
			return true
		}
	}
	return false
}
