package arango_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/datasource/arango"
	"github.com/nodius/nodius-ai/datasource/search"
)

// A question whose words are only in a data value, an edge label or a sheet name
// finds the node in ArangoDB as the in-process index finds it on the same graph:
// the value's node (a string two levels down, in an array of objects, too), both
// ends of the labelled edge, the nodes of the named sheet. Numbers and booleans in
// data do not disturb the View. Runs on a real ArangoDB too.
func TestSearchFindsDataEdgeLabelsAndSheets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	snap, err := h.src.Snapshot(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	inProcess := search.NewGraph(snap)
	tests := []struct {
		name, q string
		first   []string // the best hits, in any order
	}{
		{"data value", "which step shows the leaderboard", []string{"out"}},
		{"data value in an array of objects", "where is the season picker", []string{"root"}},
		{"edge label", "what happens at kickoff", []string{"fetch-api", "root"}},
		{"sheet name", "what is in the archive", []string{"side"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits := searchUntil(t, h, "g1", tc.q, 5)
			got := hitKeys(hits)
			if len(got) < len(tc.first) {
				t.Fatalf("ArangoDB: %q found %q, want %q first", tc.q, got, tc.first)
			}
			if top := slices.Sorted(slices.Values(got[:len(tc.first)])); !slices.Equal(top, tc.first) {
				t.Errorf("ArangoDB: %q ranks %q, want %q first", tc.q, got, tc.first)
			}
			var local []string
			for _, hit := range inProcess.Search(tc.q, 5) {
				local = append(local, snap.Nodes[hit.Index].Key)
			}
			if len(local) < len(tc.first) || !slices.Equal(slices.Sorted(slices.Values(local[:len(tc.first)])), tc.first) {
				t.Errorf("in process: %q ranks %q, want %q first", tc.q, local, tc.first)
			}
		})
	}
}

// The View of the first setup (nodes only: key, type, code) is upgraded in place:
// before, it does not count as ready (questions rank in process); setup says what
// it added; after, data values, edge labels and sheets are searched; a second setup
// changes nothing. Runs on a real ArangoDB too.
func TestSetupUpgradesTheFirstView(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := ctxT(t)
	if err := h.src.SetupFirstViewForTest(ctx); err != nil {
		t.Fatal(err)
	}
	old := reopen(t, h)
	if ready, err := old.SearchReady(ctx); err != nil || ready {
		t.Fatalf("the first version's view: ready = %v, %v; want not ready", ready, err)
	}

	steps, err := old.SetupSearch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"analyzer nodius_text_en: already there", "analyzer nodius_text_fr: already there",
		"view nodius_nodes_search: updated (now also indexes data values, sheets, edge labels, node type code)",
	}
	if got := stepStrings(steps); !slices.Equal(got, want) {
		t.Errorf("upgrade = %q, want %q", got, want)
	}
	if h.fake != nil {
		links, _ := h.fake.View(arango.SearchView)["links"].(map[string]any)
		if _, ok := links["nodius_edges"]; !ok {
			t.Errorf("upgraded view links %v, want nodius_edges too", links)
		}
	}
	src := reopen(t, h)
	if ready, err := src.SearchReady(ctx); err != nil || !ready {
		t.Fatalf("after the upgrade: ready = %v, %v", ready, err)
	}
	for q, first := range map[string]string{"leaderboard": "out", "archive": "side", "kickoff": "fetch-api"} {
		if hits := searchUntil(t, h, "g1", q, 3); len(hits) == 0 || hits[0].Node.Key != first {
			t.Errorf("after the upgrade, %q = %v; want %s first", q, hitKeys(hits), first)
		}
	}

	patches := func() int {
		n := 0
		if h.fake != nil {
			for _, c := range h.fake.Calls() {
				if strings.HasPrefix(c, "PATCH ") {
					n++
				}
			}
		}
		return n
	}
	before := patches()
	again, err := src.SetupSearch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := stepStrings(again); got[2] != "view nodius_nodes_search: already there" {
		t.Errorf("second setup = %q, want nothing to do", got)
	}
	if patches() != before {
		t.Error("a second setup changed the view")
	}
}

// The fake's View is faithful where the tests lean on it: a field the link does
// not index is not found, whatever the documents hold.
func TestFakeViewFindsOnlyIndexedFields(t *testing.T) {
	t.Parallel()
	h := fakeOnly(t)
	ctx := ctxT(t)
	if _, err := h.src.SetupSearch(ctx); err != nil {
		t.Fatal(err)
	}
	view := h.fake.View(arango.SearchView)
	links := view["links"].(map[string]any)
	nodes := links["nodius_nodes"].(map[string]any)
	fields := nodes["fields"].(map[string]any)
	delete(fields, "data")
	delete(links, "nodius_edges")
	h.fake.SetView(arango.SearchView, view)
	src := reopen(t, h)
	src.SetSearchReadyForTest(true) // as a View read before it changed
	for _, q := range []string{"leaderboard", "kickoff"} {
		if hits, err := src.TextSearch(ctx, "g1", q, 3); err != nil || len(hits) != 0 {
			t.Errorf("%q on a view without the field = %v, %v; want nothing", q, hitKeys(hits), err)
		}
	}
}

// Without the View, Search (the read tools' entry) ranks in process the way a
// file: graph is ranked: edge labels and sheet names count too. Runs on a real
// ArangoDB too.
func TestSearchWithoutViewFindsEdgeLabelsAndSheets(t *testing.T) {
	t.Parallel()
	h := newHarness(t, 2)
	ctx := ctxT(t)
	for q, first := range map[string][]string{"kickoff": {"fetch-api", "root"}, "archive": {"side"}, "leaderboard": {"out"}} {
		hits, err := h.src.Search(ctx, "g1", q, 5, nil)
		got := hitKeys(hits)
		if err != nil || len(got) < len(first) || !slices.Equal(slices.Sorted(slices.Values(got[:len(first)])), first) {
			t.Errorf("%q without the view = %q, %v; want %q first", q, got, err, first)
		}
	}
}
