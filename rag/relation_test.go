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

func TestPropagationLiftsNeighboursOfStrongMatches(t *testing.T) {
	t.Parallel()
	snap := chainSnapshot()
	st := &graphState{ready: make(chan struct{})}
	st.load(context.Background(), newFakeSource(snap), nil, nil, "chain", newClock().Now())
	// step-1 matches strongly; step-2 and intake match nothing but are next to it:
	// they must get a share of its score, and only a share.
	ranked := propagate(st, []rankedNode{{idx: 1, score: 10}, {idx: 3, score: 0.2}, {idx: 5, score: 0.2}})
	got := map[string]float64{}
	for _, n := range ranked {
		got[snap.Nodes[n.idx].Key] = n.score
	}
	if got["step-2"] <= 0 || got["intake"] <= 0 {
		t.Fatalf("neighbours of step-1 got nothing: %v", got)
	}
	if got["step-1"] <= got["step-2"] {
		t.Fatalf("a share must stay a share: %v", got)
	}
}
