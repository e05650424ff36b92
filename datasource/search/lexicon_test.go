package search

import (
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func TestLexiconIsLargeAndParsed(t *testing.T) {
	t.Parallel()
	terms := len(theLexicon().fr) + len(theLexicon().en)
	if terms < 300 {
		t.Fatalf("lexicon holds %d terms, want hundreds", terms)
	}
	for word, want := range map[string]string{"erreurs": "error", "supprime": "delete", "retrieve": "fetch", "facture": "invoice"} {
		found := false
		for _, e := range theLexicon().expand(word) {
			found = found || e == want
		}
		if !found {
			t.Errorf("expand(%q) = %v, lacks %q", word, theLexicon().expand(word), want)
		}
	}
}

func firstKey(t *testing.T, ix *Index, nodes []datasource.Node, q string) string {
	t.Helper()
	hits := ix.Search(q, 5)
	if len(hits) == 0 {
		return ""
	}
	return nodes[hits[0].Index].Key
}

// Every field goes through the same analysis: a French question (lexicon) or an
// inflected English one (stemming) finds a node by its code, its data, its type's
// description, an edge label or its sheet's name.
func TestEveryFieldAnalysedTheSameWay(t *testing.T) {
	t.Parallel()
	snap := datasource.Snapshot{
		Graph: datasource.Graph{Key: "g", Sheets: map[string]string{"0": "main", "1": "invoicing"}},
		Nodes: []datasource.Node{
			{Key: "n-1", Type: "transform", Sheet: "0", Process: "const rows = await db.deleteExpiredSessions();"},
			{Key: "n-2", Type: "transform", Sheet: "0", Data: map[string]any{"note": "uploads the nightly archives"}},
			{Key: "n-3", Type: "pdf", Sheet: "0"},
			{Key: "n-4", Type: "transform", Sheet: "0"},
			{Key: "n-5", Type: "transform", Sheet: "1"},
			{Key: "n-6", Type: "transform", Sheet: "0", Process: "return 1;"},
		},
		Edges: []datasource.Edge{{Key: "e1", Source: "n-6", Target: "n-4", Label: "overdue reminders"}},
		Configs: []datasource.NodeConfig{
			{Key: "pdf", DisplayName: "PDF", Description: "Renders documents as printable files."},
		},
	}
	ix := NewGraph(snap)
	tests := []struct{ q, want string }{
		{"où supprime-t-on les sessions expirées ?", "n-1"}, // French → English, code
		{"which node deleted expiring sessions", "n-1"},     // stemming, code
		{"upload archive", "n-2"},                           // stemming, data
		{"rendering printable document", "n-3"},             // stemming, type description
		{"Quel nœud imprime les documents ?", "n-3"},        // French → English, type description
		{"reminder overdue", "n-4"},                         // edge label (n-6 too, but n-4 first by order)
		{"the invoicing sheet", "n-5"},                      // sheet name
	}
	for _, tc := range tests {
		if got := firstKey(t, ix, snap.Nodes, tc.q); got != tc.want {
			t.Errorf("%q: first %q, want %q (hits %+v)", tc.q, got, tc.want, ix.Search(tc.q, 5))
		}
	}
}
