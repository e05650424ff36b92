package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango/arangotest"
)

// TestArangoSearchMatchesFileOnDataEdgesAndSheets: a question whose words are only
// in a data value, an edge label or a sheet name puts the same nodes first with
// `inspect context` over a file: graph and over the same graph in ArangoDB after
// `arango setup`, where ArangoDB ranks (the whole graph is never read) through
// fixed queries with bind variables only.
func TestArangoSearchMatchesFileOnDataEdgesAndSheets(t *testing.T) {
	t.Parallel()
	g := nbaGraph()
	for _, n := range g.nodes {
		switch n["_key"] {
		case "render-table":
			n["data"] = map[string]any{"caption": "Weekly leaderboard", "rows": 25, "striped": true}
		case "root":
			n["data"] = map[string]any{"fields": []any{map[string]any{"label": "Year picker", "default": 2024}}}
		}
	}
	for _, e := range g.edges {
		if e["_key"] == "e3" { // filter-games → render-table
			e["label"] = "paginated"
		}
	}
	g.graph["sheets"] = map[string]any{"0": "main", "1": "archive"}
	file := g.writeFile(t)
	fa := arangotest.New(t)
	g.loadArango(fa)
	url := fa.URL(srcWS)
	if _, errOut, code := runCLI(t, "", nil, "arango", "setup", "--source", url); code != 0 {
		t.Fatalf("setup: exit %d, %s", code, errOut)
	}
	tests := []struct {
		name, q string
		first   []string // the best hits, in any order
	}{
		{"data value", "which step shows the leaderboard", []string{"render-table"}},
		{"data value in an array of objects", "where is the year picker", []string{"root"}},
		{"edge label", "what is paginated", []string{"filter-games", "render-table"}},
		{"sheet name", "what is in the archive", []string{"season-report"}},
	}
	for _, tc := range tests {
		for _, src := range []string{"file:" + file, url} {
			before := len(fa.Queries())
			out, errOut, code := runCLI(t, "", nil, "inspect", "context", "--source", src, "--graph", srcGraph, "--format", "json", tc.q)
			if code != 0 {
				t.Fatalf("%s over %.6s: exit %d, %s", tc.name, src, code, errOut)
			}
			c := decodeContext(t, out)
			var keys []string
			for _, h := range c.Hits {
				keys = append(keys, h.Key)
			}
			if len(keys) < len(tc.first) || !slices.Equal(slices.Sorted(slices.Values(keys[:len(tc.first)])), tc.first) {
				t.Errorf("%s over %.6s: %q ranks %q, want %q first", tc.name, src, tc.q, keys, tc.first)
			}
			if strings.HasPrefix(src, "file:") {
				continue
			}
			search := 0
			for _, q := range fa.Queries()[before:] {
				if readsWholeGraph(q.Query) {
					t.Errorf("%s: the whole graph was read: %.50s…", tc.name, q.Query)
				}
				if isTextSearch(q.Query) {
					search++
				}
			}
			if search != 1 {
				t.Errorf("%s: %d search queries, want 1", tc.name, search)
			}
		}
	}
	checkBindOnly(t, fa, srcGraph, srcWS, "leaderboard", "picker", "paginated", "archive")
}
