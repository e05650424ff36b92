package rag

import (
	"slices"
	"testing"

	"github.com/nodius/nodius-ai/datasource/search"
)

// Nodes of the small rankings below.
const (
	nodeA = iota
	nodeB
	nodeC
	nodeD
)

func fusedOrder(text []search.Hit, vec []rankedNode) []int {
	var out []int
	for _, r := range fuse(text, vec) {
		out = append(out, r.idx)
	}
	return out
}

func before(order []int, a, b int) bool {
	for _, i := range order {
		switch i {
		case a:
			return true
		case b:
			return false
		}
	}
	return false
}

// The text side is rescaled over its spread: three text candidates close
// together (1.08, 1.00, 0.98) still say clearly that A is the best of them, and a
// vector ranking that only slightly prefers B (0.30 against 0.27) must not
// overturn that. Divided by the best text score alone, A's lead was 7 % of the
// text share, less than B's vector lead, and B came first.
func TestFuseTextSpreadKeepsAClearTextWinner(t *testing.T) {
	t.Parallel()
	text := []search.Hit{{Index: nodeA, Score: 1.08}, {Index: nodeB, Score: 1.00}, {Index: nodeC, Score: 0.98}}
	vec := []rankedNode{{idx: nodeB, score: 0.30}, {idx: nodeA, score: 0.27}, {idx: nodeC, score: 0.05}, {idx: nodeD, score: 0.02}}
	if got := fusedOrder(text, vec); !before(got, nodeA, nodeB) {
		t.Errorf("fused order %v: B overtook A, the clear text winner, on a slight similarity lead", got)
	}
}

// The vector side is rescaled over its spread too: a node barely over the
// similarity floor (B at 0.31, the weakest vector candidate) gets nothing for
// being a candidate. Divided by the best similarity, it got 62 % of the vector
// share, enough to pass the node text ranks first.
func TestFuseVectorSpreadGivesTheWeakestCandidateNothing(t *testing.T) {
	t.Parallel()
	text := []search.Hit{{Index: nodeA, Score: 2.0}, {Index: nodeB, Score: 1.0}, {Index: nodeC, Score: 0.2}}
	vec := []rankedNode{{idx: nodeD, score: 0.50}, {idx: nodeB, score: 0.31}}
	if got := fusedOrder(text, vec); !before(got, nodeA, nodeB) {
		t.Errorf("fused order %v: B passed A by only crossing the similarity floor", got)
	}
}

// What fusion is for still works: when text barely prefers A to B and the
// vector ranking clearly prefers B, B comes first.
func TestFuseVectorDecidesWhenTextIsUnsure(t *testing.T) {
	t.Parallel()
	text := []search.Hit{{Index: nodeA, Score: 1.0}, {Index: nodeB, Score: 0.9}, {Index: nodeC, Score: 0.2}}
	vec := []rankedNode{{idx: nodeB, score: 0.6}, {idx: nodeA, score: 0.1}, {idx: nodeC, score: 0.1}}
	if got := fusedOrder(text, vec); got[0] != nodeB {
		t.Errorf("fused order %v, want B first", got)
	}
}

// A node the question names by key stays first, whatever the similarities.
func TestFuseNamedNodeStaysFirst(t *testing.T) {
	t.Parallel()
	text := []search.Hit{{Index: nodeC, Score: 0.1, KeyMatch: true}, {Index: nodeA, Score: 5}}
	vec := []rankedNode{{idx: nodeA, score: 0.9}, {idx: nodeB, score: 0.8}, {idx: nodeC, score: 0.01}}
	if got := fuse(text, vec); got[0].idx != nodeC || !got[0].named {
		t.Errorf("fused %v, want C first and named", got)
	}
}

func TestRescale(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ s, lo, hi, want float64 }{
		{2, 1, 3, 0.5},
		{3, 1, 3, 1},
		{1, 1, 3, 0},
		{0.4, 0.4, 0.4, 1}, // a single candidate, or a tie, is as good as the best
		{0, -1, 1, 0},      // zero or less never counts
		{-0.5, -1, 1, 0},
	} {
		if got := rescale(c.s, c.lo, c.hi); got != c.want {
			t.Errorf("rescale(%v, %v, %v) = %v, want %v", c.s, c.lo, c.hi, got, c.want)
		}
	}
}

// Every vector candidate is ranked, the weakest (share 0) and a lone one included:
// with no text hit, a relational question's anchor is found by its vector alone.
func TestFuseKeepsEveryVectorCandidate(t *testing.T) {
	t.Parallel()
	if got := fusedOrder(nil, []rankedNode{{idx: nodeC, score: 0.4}}); len(got) != 1 || got[0] != nodeC {
		t.Errorf("lone candidate: fused order %v, want [C]", got)
	}
	got := fusedOrder(nil, []rankedNode{{idx: nodeC, score: 0.4}, {idx: nodeD, score: 0.3}})
	if len(got) != 2 || got[0] != nodeC || got[1] != nodeD {
		t.Errorf("fused order %v, want [C D]", got)
	}
}

// flatVec is a vector ranking of n candidates whose similarities are noise around
// 0.3, with the best at best.
func flatVec(n int, best float64) []rankedNode {
	out := []rankedNode{{idx: 100, score: best}}
	for i := 1; i < n; i++ {
		out = append(out, rankedNode{idx: 100 + i, score: 0.3 + 0.01*float64(i%5)})
	}
	return out
}

func TestVectorConfidence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		vec    []rankedNode
		lo, hi float64
	}{
		{"a best that stands out alone counts fully", flatVec(30, 0.9), 1, 1},
		{"a best no further out than the rest counts nothing", flatVec(30, 0.34), 0, 0},
		{"in between, in between", flatVec(30, 0.36), 0.01, 0.99},
		{"all alike counts nothing", []rankedNode{{0, 0.5, false}, {1, 0.5, false}, {2, 0.5, false}, {3, 0.5, false}}, 0, 0},
		{"too few candidates to judge count fully", []rankedNode{{0, 0.5, false}, {1, 0.4, false}}, 1, 1},
	}
	for _, tt := range tests {
		if got := vectorConfidence(tt.vec); got < tt.lo || got > tt.hi {
			t.Errorf("%s: confidence %.3f, want %.2f–%.2f", tt.name, got, tt.lo, tt.hi)
		}
	}
}

// A vector ranking that is noise (its best candidate stands out no more than
// chance) leaves the text ranking as it is; one that clearly means a node moves it
// up.
func TestNoiseVectorsLeaveTextAlone(t *testing.T) {
	t.Parallel()
	text := []search.Hit{{Index: nodeA, Score: 3}, {Index: nodeB, Score: 2.9}, {Index: nodeC, Score: 1}}
	noise := flatVec(30, 0.34)
	noise[0].idx = nodeB // B "best" by noise
	if order := fusedOrder(text, noise); !before(order, nodeA, nodeB) {
		t.Errorf("noise vectors reordered text: %v", order)
	}
	sure := flatVec(30, 0.9)
	sure[0].idx = nodeB
	if order := fusedOrder(text, sure); !before(order, nodeB, nodeA) {
		t.Errorf("a vector that clearly means B did not move it up: %v", order)
	}
}

// A vector ranking that says nothing (its candidates all alike, confidence zero)
// gives exactly the text ranking, scores included: the relational ranking weighs
// anchors by their scores, and an embedding model that reads the question no
// better than chance must change nothing there either.
func TestFuseWithoutConfidenceIsTextAlone(t *testing.T) {
	t.Parallel()
	text := []search.Hit{{Index: nodeA, Score: 3.5}, {Index: nodeB, Score: 2.1}, {Index: nodeC, Score: 1.3, KeyMatch: true}}
	alike := []rankedNode{{idx: nodeD, score: 0.4}, {idx: nodeB, score: 0.4}, {idx: nodeA, score: 0.4}, {idx: 7, score: 0.4}}
	if c := vectorConfidence(alike); c != 0 {
		t.Fatalf("vectorConfidence = %v, want 0", c)
	}
	got, want := fuse(text, alike), fuse(text, nil)
	if !slices.Equal(got, want) {
		t.Errorf("fuse with vectors that say nothing = %v, want the text ranking %v", got, want)
	}
}
