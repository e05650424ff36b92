package search

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/datasource"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"fetch-api", []string{"fetch", "api"}},
		{"fetchApi", []string{"fetch", "api"}},
		{"fetch_api", []string{"fetch", "api"}},
		{"FetchAPI", []string{"fetch", "api"}},
		{"FETCH_API", []string{"fetch", "api"}},
		{"fetch.api", []string{"fetch", "api"}},
		{"FetchAPIClient", []string{"fetch", "api", "client"}},
		{"parseHTML5Doc", []string{"parse", "html5", "doc"}},
		{"Gère les erreurs", []string{"gere", "les", "erreurs"}},
		{"NŒUD Éléphant", []string{"noeud", "elephant"}},
		{"straße", []string{"strasse"}},
		{"e\u0301te\u0301", []string{"ete"}}, // decomposed accents
		{"Que fait le node fetch-api ?", []string{"que", "fait", "le", "node", "fetch", "api"}},
		{"", nil},
		{"  ?!  ", nil},
		{"Привет Мир", []string{"привет", "мир"}},
		{"日本語", []string{"日本語"}},
		{"a\xffb", []string{"a", "b"}},
	}
	for _, tt := range tests {
		if got := Tokens(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTermsDropStopWordsAndStem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"Que fait le node fetch-api ?", []string{"fetch", "api"}},
		{"What does the node do?", nil},
		{"Qu'est-ce que fait ce nœud ?", nil},
		{"which node handles errors", []string{"handl", "error"}},
		{"the error handler", []string{"error", "handler"}},
		{"handled handling", []string{"handl", "handl"}},
		{"filtered players", []string{"filter", "player"}},
		{"validation", []string{"valid"}},
		{"validate", []string{"valid"}},
	}
	for _, tt := range tests {
		if got := Terms(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Terms(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func testNodes() ([]datasource.Node, []datasource.NodeConfig) {
	nodes := []datasource.Node{
		{Key: "entry-form", Type: "entryType", Process: "// user form"},
		{Key: "root", Type: "starter", Process: "next()"},
		{Key: "fetch-api", Type: "api-call", Process: `const res = await fetch("https://api.nba.com/players"); next(res.json())`,
			Data: map[string]any{"url": "https://api.nba.com/players", "method": "GET"}},
		{Key: "filter-active", Type: "filter", Process: "return players.filter(p => p.active)"},
		{Key: "display-html", Type: "html", Process: "<table>{{players}}</table>"},
		{Key: "error-handler", Type: "log-node", Process: "console.error(err)"},
		{Key: "sort-stats", Type: "transform", Process: "players.sort((a, b) => b.points - a.points)", Sheet: "1"},
		{Key: "return", Type: "return"},
		{Key: "fetchApiBackup", Type: "api-call", Process: "fetch(backupUrl)"},
	}
	configs := []datasource.NodeConfig{
		{Key: "api-call", DisplayName: "API Call", Description: "Calls an external HTTP API", Category: "network"},
		{Key: "filter", DisplayName: "Filter", Description: "Keeps the items that match a condition", Category: "data"},
		{Key: "transform", DisplayName: "Transform", Description: "Maps data into a new shape", Category: "data"},
		{Key: "log-node", DisplayName: "Logger", Description: "Writes messages and errors to the log", Category: "debug"},
	}
	return nodes, configs
}

func TestSearchRanking(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	ix := New(nodes, configs)
	tests := []struct {
		query string
		want  string // key ranked first
	}{
		{"Que fait le node fetch-api ?", "fetch-api"},
		{"what does fetchApi do", "fetch-api"},
		{"fetch_api", "fetch-api"},
		{"FetchAPI", "fetch-api"},
		{"fetch api", "fetch-api"},
		{"fetchApiBackup", "fetchApiBackup"},
		{"which node handles errors?", "error-handler"},
		{"Quel nœud gère les erreurs ?", "error-handler"},
		{"ERREURS", "error-handler"},
		{"active players filter", "filter-active"},
		{"trier les statistiques", "sort-stats"},
		{"the return node", "return"},
		{"Logger", "error-handler"},
		{"external HTTP call", "fetch-api"},
		{"filter-act", "filter-active"},
	}
	for _, tt := range tests {
		hits := ix.Search(tt.query, 5)
		if len(hits) == 0 {
			t.Errorf("Search(%q): no hits, want %s first", tt.query, tt.want)
			continue
		}
		if got := nodes[hits[0].Index].Key; got != tt.want {
			var ks []string
			for _, h := range hits {
				ks = append(ks, nodes[h.Index].Key)
			}
			t.Errorf("Search(%q) first = %s, want %s (ranking %v)", tt.query, got, tt.want, ks)
		}
	}
}

func TestSearchKeyMatchFlag(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	ix := New(nodes, configs)
	hits := ix.Search("Que fait le node fetch-api ?", 3)
	if len(hits) == 0 || !hits[0].KeyMatch || nodes[hits[0].Index].Key != "fetch-api" {
		t.Fatalf("hits = %+v, want fetch-api first with KeyMatch", hits)
	}
	for _, h := range hits[1:] {
		if h.KeyMatch {
			t.Errorf("%s marked as key match", nodes[h.Index].Key)
		}
	}
}

func TestSearchNoHits(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	ix := New(nodes, configs)
	for _, q := range []string{"", "   ", "?", "what does the node do", "que fait le nœud", "zzzqqq", "le la les de du"} {
		if hits := ix.Search(q, 10); len(hits) != 0 {
			t.Errorf("Search(%q) = %v, want none", q, hits)
		}
	}
	empty := New(nil, nil)
	if hits := empty.Search("fetch", 10); hits != nil {
		t.Errorf("empty index: %v", hits)
	}
	var nilIx *Index
	if hits := nilIx.Search("fetch", 10); hits != nil {
		t.Errorf("nil index: %v", hits)
	}
}

func TestSearchLimitAndOrder(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	ix := New(nodes, configs)
	all := ix.Search("players", 0)
	if len(all) < 3 {
		t.Fatalf("want several hits, got %v", all)
	}
	for i := 1; i < len(all); i++ {
		if better(all[i], all[i-1]) {
			t.Fatalf("not sorted at %d: %v", i, all)
		}
	}
	two := ix.Search("players", 2)
	if !reflect.DeepEqual(two, all[:2]) {
		t.Errorf("limit 2 = %v, want %v", two, all[:2])
	}
}

// TestSearchTiesKeepNodeOrder: nodes that score the same come in the order given to
// New, whatever the limit (the heap must not reorder them).
func TestSearchTiesKeepNodeOrder(t *testing.T) {
	t.Parallel()
	var nodes []datasource.Node
	for _, k := range []string{"n0", "n1", "n2", "n3", "n4"} {
		nodes = append(nodes, datasource.Node{Key: k, Type: "html", Process: "render the scoreboard"})
	}
	ix := New(nodes, nil)
	for limit, want := range map[int][]int{0: {0, 1, 2, 3, 4}, 2: {0, 1}, 4: {0, 1, 2, 3}} {
		var got []int
		for _, h := range ix.Search("scoreboard", limit) {
			got = append(got, h.Index)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("limit %d: got %v, want %v", limit, got, want)
		}
	}
}

// TestSearchScratchIsReset: per-query buffers are reused, so one query's scores
// must not leak into the next.
func TestSearchScratchIsReset(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	want := New(nodes, configs).Search("players", 0)
	ix := New(nodes, configs)
	for range 3 {
		ix.Search("fetch players api", 0)
		if got := ix.Search("players", 0); !reflect.DeepEqual(got, want) {
			t.Fatalf("after another query: %v, want %v", got, want)
		}
	}
}

func TestSearchConcurrent(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	ix := New(nodes, configs)
	want := ix.Search("fetch players api", 5)
	done := make(chan []Hit)
	for i := 0; i < 8; i++ {
		go func() { done <- ix.Search("fetch players api", 5) }()
	}
	for i := 0; i < 8; i++ {
		if got := <-done; !reflect.DeepEqual(got, want) {
			t.Errorf("concurrent search = %v, want %v", got, want)
		}
	}
}

// TestSearchOddInput feeds strings no one should type; the index must not panic
// and must return only valid indexes.
func TestSearchOddInput(t *testing.T) {
	t.Parallel()
	nodes, configs := testNodes()
	nodes = append(nodes, datasource.Node{Key: "ünïcødé-ノード", Type: "💥", Process: "\x00\xff\xfe", Data: []any{1.5, nil, "x"}})
	ix := New(nodes, configs)
	odd := []string{
		"\x00", "\xff\xfe\xfd", strings.Repeat("a", 100000), strings.Repeat("fetch ", 5000),
		"🙂🙃 fetch 🙂", "\u200b\u200d", "ǅungla", "İstanbul", "ﬁlter", "-", "--fetch--", "_._",
		"ünïcødé-ノード", "ノード", "a-b-c-d-e-f-g-h-i-j-k", "\u0301\u0301", string(utf8.RuneError),
		"FetchAPI\u0301", "\t\n\r", "....", "@fetch-api", "fetch-api?!", "«fetch-api»",
	}
	for _, q := range odd {
		for _, h := range ix.Search(q, 5) {
			if h.Index < 0 || h.Index >= len(nodes) {
				t.Fatalf("Search(%q) index %d out of range", q, h.Index)
			}
		}
		_ = Tokens(q)
	}
	if hits := ix.Search("ünïcødé-ノード", 1); len(hits) != 1 || nodes[hits[0].Index].Key != "ünïcødé-ノード" {
		t.Errorf("unicode key not found first: %v", hits)
	}
}

func FuzzSearch(f *testing.F) {
	for _, s := range []string{"fetch-api", "Que fait le nœud ?", "\xff", "FetchAPIClient", "é"} {
		f.Add(s)
	}
	nodes, configs := testNodes()
	ix := New(nodes, configs)
	f.Fuzz(func(t *testing.T, q string) {
		for _, h := range ix.Search(q, 3) {
			if h.Index < 0 || h.Index >= len(nodes) {
				t.Fatalf("index out of range")
			}
		}
	})
}
