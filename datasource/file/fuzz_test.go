package file

import (
	"testing"

	"github.com/nodius/nodius-ai/datasource/demo"
)

// FuzzParse: no graph file makes Parse panic, and a file that parses encodes to one
// that parses to the same graph (round trip).
func FuzzParse(f *testing.F) {
	f.Add(demo.JSON())
	for _, s := range []string{`{"graph":{"_key":"g"},"nodes":[],"edges":[]}`,
		`{"graph":{"_key":"g"},"nodes":[{"_key":"a","type":"html","sheet":"0"},{"_key":"b"}],"edges":[{"_key":"e","source":"a","target":"b","sheet":"0"}]}`,
		`{"graph":{"_key":"g","extra":[1,{"x":null}]},"nodes":[{"_key":"a","unknown":"kept"}]}`, "\xef\xbb\xbf{}", `[`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		out, err := Encode(doc)
		if err != nil {
			t.Fatalf("Encode of a parsed graph: %v", err)
		}
		again, err := Parse("again.json", out)
		if err != nil {
			t.Fatalf("the encoded graph does not parse: %v\n%s", err, out)
		}
		if again.Graph.Key != doc.Graph.Key || len(again.Nodes) != len(doc.Nodes) || len(again.Edges) != len(doc.Edges) || len(again.NodeConfigs) != len(doc.NodeConfigs) {
			t.Fatalf("round trip changed the graph: %d/%d nodes, %d/%d edges", len(doc.Nodes), len(again.Nodes), len(doc.Edges), len(again.Edges))
		}
		for i := range doc.Nodes {
			if again.Nodes[i].Key != doc.Nodes[i].Key || again.Nodes[i].Process != doc.Nodes[i].Process {
				t.Fatalf("node %d changed: %q -> %q", i, doc.Nodes[i].Key, again.Nodes[i].Key)
			}
		}
	})
}
