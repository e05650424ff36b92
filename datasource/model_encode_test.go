package datasource_test

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/datasource/gen"
)

// viaEncodingJSON is how graph files were written before EncodeDocument: encoding/json
// over the MarshalJSON methods, indented, without HTML escaping. EncodeDocument must
// give the same bytes.
func viaEncodingJSON(t *testing.T, d datasource.Document) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sameEncoding(t *testing.T, name string, d datasource.Document) {
	t.Helper()
	got, err := datasource.EncodeDocument(d)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	want := viaEncodingJSON(t, d)
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("%s: differs at byte %d:\n got …%s…\nwant …%s…", name, i, got[lo:min(len(got), i+80)], want[lo:min(len(want), i+80)])
	}
}

// TestEncodeDocumentIsEncodingJSON: the fast writer gives byte for byte what
// encoding/json gave, for the demo, generated graphs, and a document with every
// kind of unknown field, odd string and number.
func TestEncodeDocumentIsEncodingJSON(t *testing.T) {
	t.Parallel()
	var d datasource.Document
	if err := json.Unmarshal(demo.JSON(), &d); err != nil {
		t.Fatal(err)
	}
	sameEncoding(t, "demo", d)
	for seed := int64(1); seed <= 5; seed++ {
		s := gen.Graph(seed, 300, 600)
		sameEncoding(t, "generated", datasource.DocumentFromSnapshot(s, nil))
	}

	odd := "quote \" backslash \\ <html> & \b\f\n\r\t \x00\x01\x1f \x7f é ☃ \u2028\u2029 bad \xff\xfe end"
	raw := json.RawMessage(` { "b" : [ 1 , 2.50 , {"x": null} ], "a": "<&>", "e": [], "o": {} } `)
	doc := []byte(`{
	  "graph": {"_key": "g", "name": "` + "n" + `", "sheets": {"0": "main", "1": "other"}, "metadata": {"n": 12345678901234567890, "f": 1.10, "list": [1, "two", null, true, {}, []]}, "unknownG": {"deep": [ {"k": 1} ]}},
	  "nodes": [
	    {"_key": "a", "type": "t", "sheet": "0", "process": "", "handles": {"R": {"position": "right", "point": [{"id": "o", "type": "out", "accept": "any", "color": "red"}], "groupExtra": 7}, "L": {"position": "left", "point": []}},
	     "data": {"z": 1e400, "y": -0.0, "x": 0.000001, "w": "s", "v": [[], {}], "u": {"b": 1, "a": 2}}, "posX": 1e21, "posY": 1e-7, "size": {"width": 0.1, "height": 123456789.125}, "zExtra": [1, {"a": []}], "aExtra": null},
	    {"_key": "b", "type": "t", "sheet": "0", "process": "x", "handles": {}, "data": null, "posX": -5, "posY": 0, "size": {"width": 0, "height": 0}, "embedding": [0.5, 1e-7, 3.4e38, -2]}
	  ],
	  "edges": [{"_key": "e", "sheet": "0", "source": "a", "sourceHandle": "o", "target": "b", "targetHandle": "i", "label": "", "weight": 2}],
	  "nodeConfigs": [{"_key": "c", "displayName": "C", "description": "", "category": "", "icon": "", "handles": {}, "workspace": "w", "extraC": true}, {"_key": "d", "displayName": "D", "description": "", "category": "", "icon": "", "handles": {}}],
	  "topExtra": {"k": "v"}
	}`)
	var x datasource.Document
	if err := json.Unmarshal(doc, &x); err != nil {
		t.Fatal(err)
	}
	x.Graph.Name = odd
	x.Graph.Sheets[odd] = odd
	x.Nodes[0].Process = odd
	x.Nodes[0].Extra[odd] = raw
	x.Nodes[0].Extra["empty"] = json.RawMessage("  ")
	x.Nodes[1].Data = map[string]any{odd: []any{odd, json.Number("-1.5e-3"), json.Number(""), float64(1e-9), 3.0, map[string]string{"s": "<x>"}, []any(nil), map[string]any(nil)}}
	x.Edges[0].Label = odd
	x.Edges = append(x.Edges, datasource.Edge{Key: "no-extra"})
	x.Nodes = append(x.Nodes, datasource.Node{Key: "zero"}) // nil handles, data and extra
	x.Graph.Metadata = nil
	sameEncoding(t, "every kind", x)
	sameEncoding(t, "empty", datasource.Document{})

	for name, bad := range map[string]datasource.Document{
		"NaN":            {Nodes: []datasource.Node{{Key: "n", PosX: math.NaN()}}},
		"bad number":     {Nodes: []datasource.Node{{Key: "n", Data: json.Number("1.")}}},
		"bad raw extra":  {Edges: []datasource.Edge{{Key: "e", Extra: map[string]json.RawMessage{"x": json.RawMessage(`{"a":`)}}}},
		"infinite embed": {Nodes: []datasource.Node{{Key: "n", Embedding: []float32{float32(math.Inf(1))}}}},
	} {
		if _, err := datasource.EncodeDocument(bad); err == nil {
			t.Errorf("%s: no error", name)
		}
		if _, err := json.Marshal(bad); err == nil {
			t.Errorf("%s: encoding/json took it: the two disagree", name)
		}
	}
	if strings.Contains(string(must(datasource.EncodeDocument(x))), `\u003c`) {
		t.Error("HTML escaped")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// BenchmarkEncodeDocument100k writes a generated 100,000-node, 200,000-edge graph,
// as the file source does after each approval: with WriteDocument, and with
// encoding/json over the MarshalJSON methods (how it was written before).
func BenchmarkEncodeDocument100k(b *testing.B) {
	doc := datasource.DocumentFromSnapshot(gen.Graph(1, 100_000, 200_000), nil)
	data, err := datasource.EncodeDocument(doc)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		encode func() error
	}{
		{"WriteDocument", func() error { return datasource.WriteDocument(io.Discard, doc) }},
		{"encoding-json", func() error {
			enc := json.NewEncoder(io.Discard)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			return enc.Encode(doc)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if err := bc.encode(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
