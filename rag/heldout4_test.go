package rag_test

import (
	"testing"
)

// The fourth held-out set (testdata/heldout4), written to measure once whether the
// fusion of text and vector rankings beats text alone on every kind of question,
// after the earlier held-out sets had each been looked at while the fusion changed.
// Three graphs in domains no other set touches — a hotel's booking, check-in and
// check-out flow (30 nodes), a podcast episode publishing pipeline (28) and a motor
// insurance claim triage (28), between 43 and 47 % of their nodes with generic keys
// (step-3, proc-4, fn-19, tmp-handler…) whose meaning is only in their code, data,
// type or neighbours — and 84 questions, 21 of each kind, written as people ask:
// paraphrases sharing no word with the key or type of the node they mean, French
// questions about English-named nodes, code-value questions naming a string, a URL
// or an identifier from a node's code or data, and relational questions in both
// directions and both languages ("what feeds the price calculation with the tourist
// tax", "quelle étape précède l'encodage en MP3 ?").
//
// It was written and frozen (this hash check, in its own commit) without reading the
// ranker and without running it on these questions. Nothing is tuned against it; the
// dev set (testdata/dev) is for that. The hashes make any edit visible.
var heldOut4Files = map[string]string{
	"hotel-stay.json":                "2945e676556d0c9bd1d97c7b2f356869d3ad93487772e9249a60705ec3f8c2ae",
	"hotel-stay.questions.json":      "0556d8aa38d2d73eccefbb65c808e5af1184fe3b5515a0d47ceddf74e70b3257",
	"podcast-publish.json":           "7a4bea229fec14be8125ae36da43b1b95d3992965210aca085b922c10b20a525",
	"podcast-publish.questions.json": "417e74e65d05a01d0e5226efb5d5a681d6177f9a0115226c28d4364ea8b90287",
	"motor-claims.json":              "2d48dadfbd2960acd26a3f8417f93cd12b8fe165f3f412adbee49c908ef37c06",
	"motor-claims.questions.json":    "f18ad1e8e99355cde2547560eed1297234d145a869a5fbcd62e2acac5ebfca71",
}

var heldOut4Graphs = []string{"hotel-stay", "podcast-publish", "motor-claims"}

// TestHybridOnHeldOut4 holds this set's figures with the thesaurus stand-in model (go
// test -v -run Hybrid ./rag): a win must stay a win, a tie must not become a
// loss, a loss must not deepen, and no figure may fall.
//
// The fourth held-out set, first measured with the thesaurus model as committed
// before it was ever run (MRR text → hybrid: paraphrase 0.444 → 0.569, French 0.596
// → 0.597, code 0.921 → 0.921, relational 0.697 → 0.670, all 0.665 → 0.689), then
// among the sets later changes were chosen on (measured four more times on the way,
// each after a change decided on the other sets; the history is in the README).
// MRR:
//
//	kind        text    hybrid
//	paraphrase  0.433   0.528   win
//	French      0.604   0.644   win
//	code        1.000   1.000   tie
//	relational  0.709   0.711   win
//	all         0.687   0.721   win
func TestHybridOnHeldOut4(t *testing.T) {
	t.Parallel()
	checkHybrid(t, "heldout4", heldOut4Graphs, map[string]hybridFigure{
		"paraphrase": {wins, 0.528}, "french": {wins, 0.644}, "code": {ties, 1.000},
		"relational": {wins, 0.711}, "all": {wins, 0.721},
	})
}
