package search

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/nodius/nodius-ai/datasource/gen"
)

func TestEncodeDecodeGivesTheSameRanking(t *testing.T) {
	t.Parallel()
	snap := gen.Graph(3, 2000, 4000)
	ix := NewGraph(snap)
	var buf bytes.Buffer
	if err := ix.Encode(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"fetch orders", "filter active users retry", "sort-invoices-12", "Quel nœud supprime les erreurs ?", "log", "who calls api.example.com/v2/orders", "where is a.createdAt read"} {
		if a, b := ix.Search(q, 20), back.Search(q, 20); !reflect.DeepEqual(a, b) {
			t.Errorf("%q: %v after decoding, want %v", q, b, a)
		}
	}
	// Truncated or foreign bytes are an error, never a panic.
	for _, cut := range []int{0, 1, 10, buf.Len() / 2, buf.Len() - 1} {
		if _, err := Decode(buf.Bytes()[:cut]); err == nil {
			t.Errorf("decoding %d of %d bytes: no error", cut, buf.Len())
		}
	}
	if _, err := Decode([]byte{99}); err != ErrFormat {
		t.Errorf("other format: %v", err)
	}
}
