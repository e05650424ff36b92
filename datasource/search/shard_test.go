package search

import (
	"bytes"
	"testing"

	"github.com/nodius/nodius-ai/datasource/gen"
)

// A graph read in shards gives byte for byte the index of one pass.
func TestShardsBuildTheSameIndex(t *testing.T) {
	t.Parallel()
	s := gen.Graph(3, 3000, 6000)
	encode := func(ix *Index) []byte {
		var b bytes.Buffer
		if err := ix.Encode(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	one := encode(buildShards(s.Nodes, s.Configs, s.Edges, s.Graph.Sheets, 1))
	for _, n := range []int{2, 3, 7} {
		if got := encode(buildShards(s.Nodes, s.Configs, s.Edges, s.Graph.Sheets, n)); !bytes.Equal(got, one) {
			t.Fatalf("%d shards: the index differs from one pass's", n)
		}
	}
}
