package datasource

import (
	"fmt"
	"strings"
	"testing"
)

// A document with more nodes and edges than one chunk holds decodes them all, in
// order, each with the span where it lies.
func TestDecodeManyNodesInOrder(t *testing.T) {
	t.Parallel()
	const n = 3*maxChunk + 17
	var b strings.Builder
	b.WriteString(`{"graph":{"_key":"g","sheets":{"0":"main"}},"nodes":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"_key":"n%d","type":"t","sheet":"0"}`, i)
	}
	b.WriteString(`],"edges":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"_key":"e%d","source":"n%d","target":"n%d","sheet":"0"}`, i, i, (i+1)%n)
	}
	b.WriteString(`]}`)
	data := []byte(b.String())
	doc, spans, err := DecodeDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != n || len(doc.Edges) != n || len(spans.Nodes) != n || len(spans.Edges) != n {
		t.Fatalf("got %d nodes, %d edges, %d and %d spans; want %d of each", len(doc.Nodes), len(doc.Edges), len(spans.Nodes), len(spans.Edges), n)
	}
	for i := range n {
		if k := fmt.Sprintf("n%d", i); doc.Nodes[i].Key != k || !strings.Contains(string(data[spans.Nodes[i].Start:spans.Nodes[i].End]), `"`+k+`"`) {
			t.Fatalf("node %d: key %q, span %q", i, doc.Nodes[i].Key, data[spans.Nodes[i].Start:spans.Nodes[i].End])
		}
		if k := fmt.Sprintf("e%d", i); doc.Edges[i].Key != k || !strings.Contains(string(data[spans.Edges[i].Start:spans.Edges[i].End]), `"`+k+`"`) {
			t.Fatalf("edge %d: key %q, span %q", i, doc.Edges[i].Key, data[spans.Edges[i].Start:spans.Edges[i].End])
		}
	}
}
