package search

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
	"github.com/nodius/nodius-ai/datasource/gen"
)

// oddSnapshot holds the text the tokenizer's slow paths see: accents, ligatures,
// combining marks, scripts without case, camelCase and acronyms, invalid UTF-8,
// stop words, code words of every shape, and repeats across nodes.
func oddSnapshot() datasource.Snapshot {
	texts := []string{
		"Créer la facture", "FetchAPIClient parses HTTPResponse2Json", "œuvre Straße naïve",
		"e\u0301tape élan ÉLAN", "日本語のテキスト Ωμέγα ΣΊΣΥΦΟΣ", "bad \xff\xfe bytes \xc3",
		"sms_replies db.sms_replies api.example.com/v1/first-notice /v2/orders SEPA_INSTANT",
		"the and node nodes noeud nœud graphe", "x", "", "a.b.c.d.e.f.g.h.i.j.k", "HTML5 v2 3d 2024-01-01",
		"handles handled handling handler", "İstanbul ǅemal ﬁle", "__init__ --flag-- ./x/",
	}
	s := datasource.Snapshot{Graph: datasource.Graph{Sheets: map[string]string{"0": "Main Sheet", "1": "Étape_Deux"}}}
	s.Configs = []datasource.NodeConfig{{Key: "httpCall", DisplayName: "HTTP Call", Description: "Calls an URL: GET/POST", Category: "Réseau"}}
	for i := range 60 {
		t := texts[i%len(texts)]
		n := datasource.Node{Key: texts[(i+3)%len(texts)] + "-" + string(rune('a'+i%26)), Type: []string{"httpCall", "Entry_Type", "çaType"}[i%3],
			Process: t + " " + texts[(i+7)%len(texts)], Sheet: []string{"0", "1", "2"}[i%3]}
		switch i % 4 {
		case 0:
			n.Data = map[string]any{"url": t, "n": float64(i), "list": []any{"<b>&", t, true, nil}}
		case 1:
			n.Data = t
		case 2:
			n.Data = nil
		}
		s.Nodes = append(s.Nodes, n)
	}
	for i := range 90 {
		s.Edges = append(s.Edges, datasource.Edge{Source: s.Nodes[i%60].Key, Target: s.Nodes[(i*7)%60].Key, Label: texts[(i+5)%len(texts)]})
	}
	// Edges whose labels hold words met nowhere else, two labels a node at least:
	// the order a node's label terms and code words are first met shows in the ids.
	for i := range 30 {
		w := string(rune('a'+i%26)) + string(rune('a'+i/26))
		s.Edges = append(s.Edges, datasource.Edge{Source: s.Nodes[i%10].Key, Target: s.Nodes[10+i%10].Key, Label: "lbl_" + w + " word" + w})
	}
	return s
}

// The index build gives exactly the index the former build gave (oracle_test.go):
// the same term ids, postings and weights, IDF and key maps, over generated graphs,
// the demo graph and odd text, in one pass and in shards.
func TestBuildMatchesOracle(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../demo/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc datasource.Document
	if err := doc.UnmarshalJSON(raw); err != nil {
		t.Fatal(err)
	}
	// Graphs as generated (data of Go numbers) and as read from a file (data of
	// json.Number, which the build writes without json.Marshal).
	decoded := func(s datasource.Snapshot) datasource.Snapshot {
		b, err := json.Marshal(datasource.Document{Graph: s.Graph, Nodes: s.Nodes, Edges: s.Edges, NodeConfigs: s.Configs})
		if err != nil {
			t.Fatal(err)
		}
		var d datasource.Document
		if err := d.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		return d.Snapshot()
	}
	graphs := map[string]datasource.Snapshot{
		"demo": doc.Snapshot(), "odd": oddSnapshot(), "odd read": decoded(oddSnapshot()),
		"gen1": gen.Graph(1, 2000, 4000), "gen2 read": decoded(gen.Graph(2, 3000, 6000)), "gen7 read": decoded(gen.Graph(7, 500, 0)),
	}
	for name, s := range graphs {
		for _, n := range []int{1, 2, 3} {
			want := oracleBuildShards(s.Nodes, s.Configs, s.Edges, s.Graph.Sheets, n)
			got := buildShards(s.Nodes, s.Configs, s.Edges, s.Graph.Sheets, n)
			if len(want.dict) == 0 {
				t.Fatalf("%s: the oracle indexed nothing", name)
			}
			for _, c := range []struct {
				what      string
				got, want any
			}{
				{"n", got.n, want.n}, {"dict", got.dict, want.dict}, {"terms", got.terms, want.terms},
				{"termIDs", got.termIDs, want.termIDs}, {"postings", got.postings, want.postings},
				{"idf", got.idf, want.idf}, {"keys", got.keys, want.keys}, {"keyDocs", got.keyDocs, want.keyDocs},
				{"keyPhrases", got.keyPhrases, want.keyPhrases},
			} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s, %d shards: %s differs from the former build's", name, n, c.what)
				}
			}
		}
	}
}
