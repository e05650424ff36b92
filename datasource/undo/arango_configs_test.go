package undo_test

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
	"github.com/nodius/nodius-ai/datasource/undo"
)

// configDocs is nodius_node_config as stored, without ArangoDB's own fields and
// the change's timestamp.
func configDocs(f *arangotest.Server) string {
	var out []string
	for _, d := range f.Docs(arangotest.Configs) {
		delete(d, "_rev")
		delete(d, "_id")
		delete(d, "lastUpdatedTime")
		b, _ := json.Marshal(d)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// A type change over ArangoDB writes nodius_node_config in the real schema (the
// code in node.process, the workspace set), reaches the nodes of the type through
// their type, and is undone exactly; a type of another workspace is not touched.
func TestTypeChangeOverArango(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tests := []struct {
		name, action string
		check        func(t *testing.T, f *arangotest.Server, src datasource.Source)
	}{
		{"create", `{"type":"configure_node_type","payload":{"mode":"create","typeKey":"checker","displayName":"Checker","process":"return 2;","size":{"width":120,"height":60}}}`,
			func(t *testing.T, f *arangotest.Server, src datasource.Source) {
				d := configDocs(f)
				for _, want := range []string{`"_key":"checker"`, `"workspace":"ws1"`, `"process":"return 2;"`, `"size":{"height":60,"width":120}`} {
					if !strings.Contains(d, want) {
						t.Errorf("nodius_node_config lacks %s:\n%s", want, d)
					}
				}
			}},
		{"update with look and code", `{"type":"configure_node_type","payload":{"mode":"update","typeKey":"fmt","displayName":"Format","process":"return 3;","border":{"radius":2},"nodes":["a2"]}}`,
			func(t *testing.T, f *arangotest.Server, src datasource.Source) {
				snap, err := datasource.LoadSnapshot(ctx, src, "g1")
				if err != nil {
					t.Fatal(err)
				}
				ran := ""
				for _, m := range snap.Nodes {
					if m.Key == "a2" {
						ran = m.Process
					}
				}
				if ran != "return 3;" {
					t.Errorf("node a2 runs %q", ran)
				}
				if d := configDocs(f); !strings.Contains(d, `"displayName":"Format"`) || !strings.Contains(d, `"radius":2`) {
					t.Errorf("nodius_node_config:\n%s", d)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, src := arangoGraph(t)
			f.Insert(arangotest.Configs, map[string]any{"_key": "fmt", "workspace": "ws1", "displayName": "Formatter", "description": "", "category": "data", "icon": "",
				"node": map[string]any{"type": "fmt", "handles": map[string]any{}, "process": "return 1;", "size": map[string]any{"width": 300, "height": 80}}})
			f.Insert(arangotest.Configs, map[string]any{"_key": "theirs", "workspace": "ws2", "displayName": "Theirs", "node": map[string]any{"process": "x"}})
			f.Insert(arangotest.Nodes, map[string]any{"_key": "g1-a2", "graphKey": "g1", "type": "fmt", "sheet": "0", "data": map[string]any{}, "posX": 0, "posY": 300,
				"size": map[string]any{"width": 300, "height": 80}, "handles": map[string]any{}})
			beforeConfigs, beforeNodes := configDocs(f), docs(f)
			var a datasource.Action
			if err := json.Unmarshal([]byte(tc.action), &a); err != nil {
				t.Fatal(err)
			}
			if a.ConfigureNodeType.Mode == "update" {
				cfgs, _ := src.Configs(ctx, "g1")
				for _, c := range cfgs {
					if c.Key == "fmt" {
						a.ConfigureNodeType.Before = datasource.TypeFields(c)
					}
				}
			}
			rec := undo.NewRecorder()
			if _, err := datasource.Apply(ctx, src, "g1", a, datasource.Record(rec)); err != nil {
				t.Fatal(err)
			}
			tc.check(t, f, src)
			if docs(f) != beforeNodes {
				t.Error("a type change wrote nodes")
			}
			rev, err := rec.Reversal()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := undo.Apply(ctx, src, "g1", rev); err != nil {
				t.Fatal(err)
			}
			if got := configDocs(f); got != beforeConfigs {
				t.Errorf("undo left\n%s\nwant\n%s", got, beforeConfigs)
			}
		})
	}

	// Another workspace's type key cannot be taken.
	var a datasource.Action
	_ = json.Unmarshal([]byte(`{"type":"configure_node_type","payload":{"mode":"create","typeKey":"theirs","displayName":"Mine"}}`), &a)
	f, src := arangoGraph(t)
	f.Insert(arangotest.Configs, map[string]any{"_key": "theirs", "workspace": "ws2", "displayName": "Theirs"})
	if _, err := datasource.Apply(ctx, src, "g1", a); err == nil || !strings.Contains(err.Error(), "another workspace") {
		t.Errorf("taking another workspace's key: err = %v", err)
	}

	// While a Nodius server runs on the database, a type is not written either.
	f, src = arangoGraph(t)
	f.Insert(arangotest.Cluster, map[string]any{"_key": "peer1", "host": "10.1.2.3", "port": float64(8426),
		"status": "online", "lastRefresh": float64(time.Now().UnixMilli())})
	_ = json.Unmarshal([]byte(`{"type":"configure_node_type","payload":{"mode":"create","typeKey":"mine","displayName":"Mine"}}`), &a)
	if _, err := datasource.Apply(ctx, src, "g1", a); err == nil || !strings.Contains(err.Error(), "a Nodius server runs on this database") {
		t.Errorf("type change beside a live server: err = %v", err)
	}
	if d := configDocs(f); d != "" {
		t.Errorf("a refused type change wrote %s", d)
	}
}
