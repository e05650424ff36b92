package rag

import (
	"context"
	"slices"
	"testing"

	"github.com/nodius/nodius-ai/datasource"
)

func TestRelationReadsDirection(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q    string
		want direction
	}{
		{"what runs after the invoice step", successors},
		{"which node comes before charge-payment", predecessors},
		{"what feeds the pick list", predecessors},
		{"what does the webhook feed", successors},
		{"what does the form pass its data to", successors},
		{"Qu'est-ce qui suit la sauvegarde ?", successors},
		{"quelle étape précède le calcul de la taxe ?", predecessors},
		{"Qu'est-ce qui alimente le rapport ?", predecessors},
		{"wait before retrying the carrier API", noRelation}, // no question word: a description
		{"which node calls the fraud service", noRelation},   // asks for the caller itself
		{"what does fetch-api do", noRelation},
		// "after" and "before" ask about neighbours only when the question word is
		// followed by nothing but light words ("can", "happens", "right"), or by the
		// noun it takes; otherwise they are part of a description.
		{"what can happen right after the nightly sweep", successors},
		{"which check comes before freezing the card", predecessors},
		{"what step comes after the upload", successors},
		{"qu'est-ce qui se passe juste après la validation ?", successors},
		{"what blocks the keypad after too many wrong tries", noRelation},
		{"what waits before trying again", noRelation},
		{"which step makes sure the paperwork is signed before the accounts are opened", noRelation},
		{"Quelle étape réserve les visites après l'accord ?", noRelation},
		// "once" and "une fois" say "after".
		{"what happens once the ticket has been created", successors},
		{"que se passe-t-il une fois le fichier téléchargé ?", successors},
		{"quelle étape relance une seconde fois les tests ?", noRelation},
	}
	for _, tc := range tests {
		if got, _ := relation(tc.q); got != tc.want {
			t.Errorf("relation(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

// chainSnapshot is a small flow whose middle nodes have generic keys: only the code
// says what they do, and the graph says what comes before and after.
func chainSnapshot() datasource.Snapshot {
	node := func(key, process string) datasource.Node {
		return datasource.Node{Key: key, Type: "transform", Sheet: "0", Process: process}
	}
	edge := func(k, s, t, label string) datasource.Edge {
		return datasource.Edge{Key: k, Sheet: "0", Source: s, SourceHandle: "0", Target: t, TargetHandle: "0", Label: label}
	}
	return datasource.Snapshot{
		Graph: datasource.Graph{Key: "chain", Sheets: map[string]string{"0": "main"}},
		Nodes: []datasource.Node{
			node("intake", "next(0, request.body) // receives invoices"),
			node("step-1", "const parsed = parseInvoicePdf(incoming[0].data); next(0, parsed);"),
			node("step-2", "if (inv.total > 10000) next(1, inv); else next(0, inv);"),
			node("step-3", "await approvals.request(inv); // manager approval"),
			node("step-4", "await ledger.post(inv);"),
			node("archive", "await s3.put(inv);"),
		},
		Edges: []datasource.Edge{
			edge("e1", "intake", "step-1", ""),
			edge("e2", "step-1", "step-2", ""),
			edge("e3", "step-2", "step-3", "large amount"),
			edge("e4", "step-2", "step-4", "small amount"),
			edge("e5", "step-4", "archive", ""),
			edge("e6", "step-3", "step-4", "approved"),
		},
	}
}

func TestRelationalQuestionsRankNeighboursInDirection(t *testing.T) {
	t.Parallel()
	snap := chainSnapshot()
	r := New(newFakeSource(snap), Options{CacheTTL: -1}, nil)
	tests := []struct {
		q     string
		first []string // any of these first
	}{
		{"what runs after the invoice PDF parsing", []string{"step-2"}},
		{"which step comes before the ledger posting", []string{"step-2", "step-3"}},
		{"what happens after step-2 for a large amount", []string{"step-3"}},
		{"what happens after step-2 for a small amount", []string{"step-4"}},
		{"what feeds the archive", []string{"step-4"}},
		{"Qu'est-ce qui suit l'intake ?", []string{"step-1"}},
		{"quelle étape précède step-1 ?", []string{"intake"}},
	}
	for _, tc := range tests {
		c, err := r.Retrieve(context.Background(), "chain", tc.q)
		if err != nil {
			t.Fatal(err)
		}
		hits := hitKeys(c)
		if len(hits) == 0 || !slices.Contains(tc.first, hits[0]) {
			t.Errorf("%q: hits %v, want one of %v first", tc.q, hits, tc.first)
		}
	}
}

// TestRelationalRunnerUpAnchorsNeighboursComeNext: when the words of a relational
// question fit one node best and another less well, the neighbours of the runner-up
// come right after those of the best, before the anchors and the nodes that only
// match the question's words: if the best was the wrong anchor, the answer is next
// to the runner-up.
func TestRelationalRunnerUpAnchorsNeighboursComeNext(t *testing.T) {
	t.Parallel()
	st, idx, keys := loadedChain()
	anchors := []rankedNode{{idx: idx("step-4"), score: 1}, {idx: idx("step-1"), score: 0.5}}
	ranked := []rankedNode{{idx: idx("step-4"), score: 1}, {idx: idx("step-1"), score: 0.5}, {idx: idx("step-3"), score: 0.4}}
	got := keys((&Retriever{}).relationalRank(st, successors, anchors, ranked, ranked))
	if want := []string{"archive", "step-2", "step-4"}; len(got) < 3 || !slices.Equal(got[:3], want) {
		t.Errorf("ranking %v, want %v first: the best anchor's successor, the runner-up's, then the anchor", got, want)
	}
}

// TestRelationalNamedAnchorStandsAlone: when the question names a node by its key,
// that node is the anchor, and the neighbours of nodes that merely match its
// words as well do not come before the named node itself.
func TestRelationalNamedAnchorStandsAlone(t *testing.T) {
	t.Parallel()
	st, idx, keys := loadedChain()
	anchors := []rankedNode{{idx: idx("step-4"), score: 1.5, named: true}, {idx: idx("step-1"), score: 1.4}}
	got := keys((&Retriever{}).relationalRank(st, successors, anchors, anchors, anchors))
	if want := []string{"archive", "step-4"}; len(got) < 2 || !slices.Equal(got[:2], want) {
		t.Errorf("ranking %v, want %v first: the named node's successor, then the named node", got, want)
	}
}

// TestRelationalRestFollowsTheQuestionsRanking: after the anchors' neighbours and
// the anchors, the other nodes come in the order of the question's own ranking
// (words and meaning fused), not in that of the ranking that ordered the neighbours.
func TestRelationalRestFollowsTheQuestionsRanking(t *testing.T) {
	t.Parallel()
	st, idx, keys := loadedChain()
	anchors := []rankedNode{{idx: idx("step-4"), score: 1}}
	own := []rankedNode{{idx: idx("step-4"), score: 1}, {idx: idx("step-1"), score: 0.9}, {idx: idx("intake"), score: 0.5}}
	rest := []rankedNode{{idx: idx("intake"), score: 0.8}, {idx: idx("step-1"), score: 0.3}}
	got := keys((&Retriever{}).relationalRank(st, successors, anchors, own, rest))
	if want := []string{"archive", "step-4", "intake", "step-1"}; !slices.Equal(got, want) {
		t.Errorf("ranking %v, want %v: the neighbour, the anchor, then the rest in the question's order", got, want)
	}
}

func TestPropagationLiftsNeighboursOfStrongMatches(t *testing.T) {
	t.Parallel()
	st, _, _ := loadedChain()
	// step-1 matches strongly; step-2 and intake match nothing but are next to it:
	// they must get a share of its score, and only a share.
	ranked := propagate(st, []rankedNode{{idx: 1, score: 10}, {idx: 3, score: 0.2}, {idx: 5, score: 0.2}})
	got := map[string]float64{}
	for _, n := range ranked {
		got[st.node(n.idx).Key] = n.score
	}
	if got["step-2"] <= 0 || got["intake"] <= 0 {
		t.Fatalf("neighbours of step-1 got nothing: %v", got)
	}
	if got["step-1"] <= got["step-2"] {
		t.Fatalf("a share must stay a share: %v", got)
	}
}

// loadedChain is chainSnapshot loaded as the retriever loads a graph, with the
// index of a node's key and the keys of a ranking, for the tests that call the
// ranking functions directly.
func loadedChain() (st *graphState, idx func(key string) int, keys func([]rankedNode) []string) {
	st = &graphState{ready: make(chan struct{})}
	st.load(context.Background(), newFakeSource(chainSnapshot()), nil, nil, "chain", newClock().Now())
	idx = func(key string) int { return st.byKey[key] }
	keys = func(ranked []rankedNode) []string {
		out := make([]string, len(ranked))
		for i, n := range ranked {
			out[i] = st.node(n.idx).Key
		}
		return out
	}
	return st, idx, keys
}

// chainWithAxes is chainSnapshot with one embedding axis per node, so that a
// question's vector can be made to mean exactly one node.
func chainWithAxes() (datasource.Snapshot, map[string][]float32) {
	snap := chainSnapshot()
	axes := map[string][]float32{}
	for i := range snap.Nodes {
		v := make([]float32, len(snap.Nodes))
		v[i] = 1
		snap.Nodes[i].Embedding = v
		axes[snap.Nodes[i].Key] = v
	}
	return snap, axes
}

// TestRelationalNeighboursToldApartByMeaningWhenNoWordMatches: when no node
// shares a word with the question, the anchor is found by meaning, and the meaning
// also tells the anchor's neighbours apart.
func TestRelationalNeighboursToldApartByMeaningWhenNoWordMatches(t *testing.T) {
	t.Parallel()
	snap, axes := chainWithAxes()
	const q = "what runs after the zorglub when the blorp flag is up?"
	text, err := New(newFakeSource(snap), Options{CacheTTL: -1}, nil).Retrieve(context.Background(), "chain", q)
	if err != nil {
		t.Fatal(err)
	}
	if len(text.Hits) != 0 {
		t.Fatalf("text alone found %v: the question must share no word with the graph", hitKeys(text))
	}
	// It means step-2 (the anchor) most, step-4 (one of its two successors) less.
	v := make([]float32, len(snap.Nodes))
	for key, w := range map[string]float32{"step-2": 1, "step-4": 0.6, "step-1": 0.45} {
		for i, x := range axes[key] {
			v[i] += w * x
		}
	}
	emb := &fakeEmbedder{vectors: map[string][]float32{q: v}}
	c, err := New(newFakeSource(snap), Options{CacheTTL: -1}, emb).Retrieve(context.Background(), "chain", q)
	if err != nil {
		t.Fatal(err)
	}
	if hits := hitKeys(c); len(hits) < 2 || hits[0] != "step-4" || hits[1] != "step-3" {
		t.Errorf("hybrid: hits %v, want step-4 (the successor the question means) then step-3", hits)
	}
}

// TestRelationalAnchorByMeaningWhenNoWordMatches: a question whose anchor shares no
// word with any node finds it by its vector, and its successor comes first — not
// the anchor itself, which plain fusion would put first.
func TestRelationalAnchorByMeaningWhenNoWordMatches(t *testing.T) {
	t.Parallel()
	snap, axes := chainWithAxes()
	const q = "what comes after the zorglub?"
	text, err := New(newFakeSource(snap), Options{CacheTTL: -1}, nil).Retrieve(context.Background(), "chain", q)
	if err != nil {
		t.Fatal(err)
	}
	if len(text.Hits) != 0 {
		t.Fatalf("text alone found %v: the question must share no word with the graph", hitKeys(text))
	}
	emb := &fakeEmbedder{vectors: map[string][]float32{q: axes["step-1"]}}
	c, err := New(newFakeSource(snap), Options{CacheTTL: -1}, emb).Retrieve(context.Background(), "chain", q)
	if err != nil {
		t.Fatal(err)
	}
	if hits := hitKeys(c); len(hits) == 0 || hits[0] != "step-2" {
		t.Errorf("hits %v, want step-2 (after step-1, which the question means) first", hits)
	}
}

// TestRelationalAnchorByWordsNotMeaning: when the question's words name an anchor,
// its meaning moves neither the anchor nor the order of its neighbours: a relational
// question is ranked by hybrid as by text alone. (Read by meaning too, anchors
// described in a few words moved to a wrong node as often as to the right one, and
// hybrid lost relational questions on the sets measured after that choice.)
func TestRelationalAnchorByWordsNotMeaning(t *testing.T) {
	t.Parallel()
	snap, axes := chainWithAxes()
	for _, tc := range []struct {
		q, means string
	}{
		// "await" and "inv" are in step-3, step-4 and archive alike; the meaning
		// points at step-3.
		{"what runs after the await inv step", "step-3"},
		// step-2's successors step-3 and step-4 tie on words; the meaning points at
		// step-4.
		{"what runs after step-2 when the zorglub flag is up", "step-4"},
	} {
		text, err := New(newFakeSource(snap), Options{CacheTTL: -1}, nil).Retrieve(context.Background(), "chain", tc.q)
		if err != nil {
			t.Fatal(err)
		}
		emb := &fakeEmbedder{vectors: map[string][]float32{tc.q: axes[tc.means]}}
		c, err := New(newFakeSource(snap), Options{CacheTTL: -1}, emb).Retrieve(context.Background(), "chain", tc.q)
		if err != nil {
			t.Fatal(err)
		}
		th, hh := hitKeys(text), hitKeys(c)
		if !c.Retrieval.Vector || len(th) < 2 || len(hh) < 2 || !slices.Equal(th[:2], hh[:2]) {
			t.Errorf("%q: hybrid hits %v, want text's %v first", tc.q, hh, th)
		}
	}
}

func TestFlowWordAfterQuestionWordIsANoun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		q    string
		want direction
	}{
		{"which trigger listens on /hooks/claims/first-notice", noRelation},
		{"which feed lists the new episodes", noRelation},
		{"which steps feed the report", predecessors},
		{"what feeds the report", predecessors},
		{"what does the parser feed", successors},
		{"what triggers the export", predecessors},
	}
	for _, tt := range tests {
		if got, _ := relation(tt.q); got != tt.want {
			t.Errorf("relation(%q) = %d, want %d", tt.q, got, tt.want)
		}
	}
}
