package datasource_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/nodius/nodius-ai/datasource"
)

// Each span holds exactly its node or edge: decoded alone, it gives the same value.
func TestDecodeDocumentSpans(t *testing.T) {
	t.Parallel()
	data := []byte("{\"graph\": {\"_key\": \"g\"},\n \"nodes\": [ {\"_key\": \"a\", \"data\": {\"x\": [1, {\"y\": \"}\"}]}} ,\n\t{\"_key\": \"b\\u00e9\", \"handles\": {\"L\": {\"point\": [{\"id\": 0}]}}}],\n" +
		" \"edges\": [{\"_key\": \"e\", \"source\": \"a\", \"target\": \"b\\u00e9\", \"label\": \"]\"}]}")
	doc, spans, err := datasource.DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(spans.Nodes) != 2 || len(spans.Edges) != 1 {
		t.Fatalf("spans %+v", spans)
	}
	for i, sp := range spans.Nodes {
		var n datasource.Node
		if err := n.UnmarshalJSON(data[sp.Start:sp.End]); err != nil || !reflect.DeepEqual(n, doc.Nodes[i]) {
			t.Fatalf("node %d from %q: %+v, %v; want %+v", i, data[sp.Start:sp.End], n, err, doc.Nodes[i])
		}
	}
	var e datasource.Edge
	if sp := spans.Edges[0]; e.UnmarshalJSON(data[sp.Start:sp.End]) != nil || !reflect.DeepEqual(e, doc.Edges[0]) {
		t.Fatalf("edge from %q: %+v", data[sp.Start:sp.End], e)
	}
}

// As encoding/json decodes into a map, the last of repeated members decides, a
// null included; escaped names are the names they spell.
func TestDecodeRepeatedMembers(t *testing.T) {
	t.Parallel()
	var d datasource.Document
	in := `{"graph": {"_key": "g", "_key": "h", "name": "x", "name": null},
		"nodes": [{"_key": "a"}], "n\u006fdes": [{"_key": "b", "posX": 1, "posX": null, "size": {"width": 2}, "size": {"height": 3}}]}`
	if err := d.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	if d.Graph.Key != "h" || d.Graph.Name != "" {
		t.Errorf("graph %+v", d.Graph)
	}
	if len(d.Nodes) != 1 || d.Nodes[0].Key != "b" || d.Nodes[0].PosX != 0 || d.Nodes[0].Size != (datasource.Size{Height: 3}) {
		t.Errorf("nodes %+v", d.Nodes)
	}
	// A null leaves a value as it was.
	n := datasource.Node{Key: "keep"}
	if err := json.Unmarshal([]byte("null"), &n); err != nil || n.Key != "keep" {
		t.Errorf("null decoded into %+v, %v", n, err)
	}
	// Invalid UTF-8 becomes U+FFFD, as with encoding/json.
	var g datasource.Graph
	if err := g.UnmarshalJSON([]byte("{\"name\": \"a\xffb\"}")); err != nil || g.Name != "a\ufffdb" {
		t.Errorf("name %q, %v", g.Name, err)
	}
}

func TestPeekGraph(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"graph": {"name": "x", "_key": "g1", "sheets": {"0": "main"}}, "nodes": [`, "g1"}, // stops before the (here broken) rest
		{`{"nodes": [{"_key": "a", "graph": {"_key": "no"}}], "graph": {"_key": "g2"}}`, "g2"},
		{`{"graph": {"name": "x"}}`, ""},
	}
	for _, tt := range tests {
		// One byte at a time: names and values must not outlive the reader's buffer.
		g, ok, err := datasource.PeekGraph(iotest.OneByteReader(strings.NewReader(tt.in)))
		if err != nil || !ok || g.Key != tt.want {
			t.Errorf("%s: %+v, %v, %v; want key %q", tt.in, g, ok, err, tt.want)
		}
	}
	if g, _, _ := datasource.PeekGraph(strings.NewReader(tests[0].in)); g.Name != "x" || g.Sheets["0"] != "main" {
		t.Errorf("graph %+v", g)
	}
	if _, ok, err := datasource.PeekGraph(strings.NewReader(`{"graph": null}`)); ok || err != nil {
		t.Errorf("a null graph: %v, %v", ok, err)
	}
	if _, _, err := datasource.PeekGraph(strings.NewReader(`[1]`)); err == nil {
		t.Error("an array was taken for a graph file")
	}
}
