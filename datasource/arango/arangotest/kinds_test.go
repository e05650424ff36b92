package arangotest

import (
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango"
)

// Every query of package arango has exactly one way of being answered here.
func TestClassifyCoversArangoQueries(t *testing.T) {
	t.Parallel()
	kinds, err := classify(arango.Queries())
	if err != nil {
		t.Fatal(err)
	}
	if len(kinds) != len(arango.Queries()) || len(kinds) != len(signatures()) {
		t.Errorf("%d queries classified, %d queries, %d signatures", len(kinds), len(arango.Queries()), len(signatures()))
	}
	tests := []struct {
		name    string
		queries []string
		want    string
	}{
		{"unknown query", append(arango.Queries(), "FOR x IN nodius_secrets RETURN x"), "unknown to the fake"},
		{"changed query", arango.Queries()[1:], "matches none"},
		{"two texts for one query", append(arango.Queries(), arango.Queries()[0]+" "), "same fake signature"},
	}
	for _, tc := range tests {
		_, err := classify(tc.queries)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
