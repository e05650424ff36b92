package undo_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// arangoGraph is a small graph on the fake ArangoDB: a → b → c, every node with an
// input and an output point.
func arangoGraph(t *testing.T) (*arangotest.Server, *arango.Source) {
	t.Helper()
	f := arangotest.New(t)
	f.Insert(arangotest.Graphs, map[string]any{"_key": "g1", "workspace": "ws1", "name": "g", "sheets": map[string]any{"0": "main"}})
	handles := map[string]any{
		"L": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "in", "accept": "any"}}},
		"R": map[string]any{"position": "separate", "point": []any{map[string]any{"id": "0", "type": "out", "accept": "any"}}},
	}
	for i, k := range []string{"a", "b", "c"} {
		f.Insert(arangotest.Nodes, map[string]any{"_key": "g1-" + k, "graphKey": "g1", "type": "html", "sheet": "0",
			"process": "p" + k, "data": map[string]any{"n": i}, "posX": float64(100 * i), "posY": 0,
			"size": map[string]any{"width": 200, "height": 100}, "handles": handles})
	}
	for _, e := range [][3]string{{"e1", "a", "b"}, {"e2", "b", "c"}} {
		f.Insert(arangotest.Edges, map[string]any{"_key": "g1-" + e[0], "graphKey": "g1", "sheet": "0",
			"_from": "nodius_nodes/g1-" + e[1], "_to": "nodius_nodes/g1-" + e[2],
			"source": e[1], "sourceHandle": "0", "target": e[2], "targetHandle": "0", "label": ""})
	}
	cfg, err := arango.ParseURL(f.URL("ws1"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := arango.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Close() })
	return f, src
}

// docs is the graph's nodes and edges as stored, without the fields ArangoDB keeps
// for itself, sorted by key.
func docs(f *arangotest.Server) string {
	var out []string
	for _, coll := range []string{arangotest.Nodes, arangotest.Edges} {
		for _, d := range f.Docs(coll) {
			delete(d, "_rev")
			delete(d, "_id")
			b, _ := json.Marshal(d)
			out = append(out, coll+" "+string(b))
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// Undo over ArangoDB restores the documents and sends only the fixed queries, with
// every value a bind variable.
func TestUndoOverArango(t *testing.T) {
	t.Parallel()
	evil := `x" || true || "' RETURN 1 //`
	actions := map[string]string{
		"create_node": `{"type":"create_node","payload":{"typeKey":"html","sheet":"0","posX":1,"posY":2,"process":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}}`,
		"create_edge": `{"type":"create_edge","payload":{"sourceKey":"a","sourceHandle":"0","targetKey":"c","targetHandle":"0","sheet":"0"}}`,
		"update_node": `{"type":"update_node","payload":{"nodeKey":"b","changes":{"process":"new","data.extra":"` + strings.ReplaceAll(evil, `"`, `\"`) + `"}}}`,
		"move_node":   `{"type":"move_node","payload":{"nodeKey":"c","posX":7,"posY":8}}`,
		"delete_node": `{"type":"delete_node","payload":{"nodeKey":"b"}}`,
		"delete_edge": `{"type":"delete_edge","payload":{"edgeKey":"e2"}}`,
		"batch": `{"type":"batch","payload":{"actions":[
			{"type":"create_node","payload":{"nodeKey":"n1","typeKey":"html","sheet":"0","posX":1,"posY":2}},
			{"type":"create_edge","payload":{"sourceKey":"c","sourceHandle":"0","targetKey":"n1","targetHandle":"1","sheet":"0"}},
			{"type":"move_node","payload":{"nodeKey":"a","posX":5,"posY":5}},
			{"type":"delete_node","payload":{"nodeKey":"b"}}]}}`,
	}
	// n1 has no handles of its own: it has the html type's (0:0:out, 0:1:in).
	for name, js := range actions {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f, src := arangoGraph(t)
			before := docs(f)
			a := act(t, js)
			planned, err := undo.Plan(ctx, src, "g1", a)
			if err != nil {
				t.Fatal(err)
			}
			// The reversal kept is the one the apply records, reading each document
			// right before it changes it.
			rec := undo.NewRecorder()
			if _, err := datasource.Apply(ctx, src, "g1", a, datasource.Record(rec)); err != nil {
				t.Fatal(err)
			}
			rev, err := rec.Reversal()
			if err != nil {
				t.Fatal(err)
			}
			if len(rev.Steps) != len(planned.Steps) {
				t.Fatalf("recorded %d steps, planned %d:\n%+v\n%+v", len(rev.Steps), len(planned.Steps), rev, planned)
			}
			if docs(f) == before {
				t.Fatal("the action changed nothing")
			}
			if _, err := undo.Check(ctx, src, "g1", rev, false); err != nil {
				t.Fatal(err)
			}
			rep, err := undo.Apply(ctx, src, "g1", rev)
			if err != nil {
				t.Fatalf("undo: %v %+v", err, rep)
			}
			if after := docs(f); after != before {
				t.Fatalf("undo did not restore the documents:\nbefore\n%s\nafter\n%s", before, after)
			}
			if unknown := f.Unknown(); len(unknown) > 0 {
				t.Errorf("queries outside the fixed set: %q", unknown)
			}
			for _, q := range f.Queries() {
				if strings.Contains(q.Query, "x\"") || strings.Contains(q.Query, "RETURN 1 //") {
					t.Errorf("a value inside the query text: %s", q.Query)
				}
			}
		})
	}
}
