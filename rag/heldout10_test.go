package rag_test

import "testing"

// The tenth held-out set (testdata/heldout10), written to measure once, on graphs
// and questions nobody has seen while the ranker changed, how retrieval does on
// every kind of question. Four graphs in domains no other set covers — a dental
// practice's recalls and insurance pre-authorisations, from the weekday-morning
// search for patients past their check-up interval through the text, email or
// posted reminder, the fortnight's wait for an online booking, reception's phone
// chase and the appointment reminder, then the signed treatment plan priced from
// the fee schedule, the pre-authorisation rule, the insurer's eligibility answer,
// radiographs and the perio chart sent with the predetermination, the insurer's
// approval, partial approval or denial, the patient's share, signed consent and
// the appeal of a denial (28 nodes); a ski resort's lift passes, from the web
// shop order priced by age band and peak week and the card payment through day
// passes loaded onto a keycard or collected at a kiosk with a pick-up code,
// season-pass portraits checked and printed on the card, to the turnstile read,
// the entitlement lookup, the gate opening or showing why not, passback logged
// and the lift staff alerted, and refunds for injury or closed lifts (28); a wine
// merchant's en-primeur campaign, from the négociant's release priced in bond and
// skipped when it rose too much, loyal customers ranked and offered the wine,
// case requests gathered until the window closes, scarce cases shared out by
// tier, invoiced and paid for or put back, to the wine landing in bond two years
// later and each owner's cases kept in bond or delivered duty paid (28); and a
// city marathon's entries and bibs, from the entry form, age on race day and the
// ballot, charity or good-for-age route through the entry fee, the seeded ballot
// draw with its cap on overseas places, place transfers and deferrals, to start
// waves and pens by predicted finish, the medical team's list, printed bibs with
// timing chips and the race pack (29) — with 46 to 50 % of their nodes under
// generic keys (step-2, proc-3, fn-7, handler-9, node-16, tmp-handler…) whose
// meaning is only in their code, data, type or neighbours, and four or five
// branching nodes each.
//
// 112 questions, 7 of each kind per graph, written as people ask: paraphrases sharing
// no word with the key, type key or type name of the node they mean; French
// questions about English-named nodes; code-value questions naming a string, URL,
// identifier or setting found in one node's code or data only; and relational
// questions in both directions and both languages ("what feeds entry-fee?",
// "quelle étape précède le calcul du remboursement ?"), whose gold lists every
// neighbour in the asked direction when the question does not pick one.
//
// It was written and frozen (this hash check, in its own commit) without reading the
// ranker and without running it on these questions. Nothing is tuned against it; the
// dev set (testdata/dev) is for that. The hashes make any edit visible.
var heldOut10Files = map[string]string{
	"dental-recall.json":              "4962dd394a8c0e46c83bea546e67e93d3a7a294acc8f33676dd968b071374de4",
	"dental-recall.questions.json":    "3396a3773019a7800ce555e988df13eaed579a678bf6a3c06d790f9e06187e71",
	"ski-passes.json":                 "ee77dbf9baa4f09cc922c65867a2d46a9ed8861282dbfaa8ab74a77eb4a48633",
	"ski-passes.questions.json":       "b6c430c8a458bc9e7cd88629b25dc5713a601c099c39d3bb6148e751d1cf49db",
	"wine-primeur.json":               "40f33d7835c67df16af1b9e351eff2501a9adc35f63fb27d4a638ff75aa9108a",
	"wine-primeur.questions.json":     "ce9ea476f308bd28ca09a06ab1ccd6d42379ab8dfadc83d703a7d422a01dc47e",
	"marathon-entries.json":           "b6185196c9177467812651a95cc90feebaf3e57b7da625d29fcb6f4f5d9c9231",
	"marathon-entries.questions.json": "fb3b6be7e5fd82ae12a511ca65c78173071a6f982007a1b7f23422e85e4fa675",
}

var heldOut10Graphs = []string{"dental-recall", "ski-passes", "wine-primeur", "marathon-entries"}

// TestHybridOnHeldOut10 holds this set's figures with the thesaurus stand-in model
// (go test -v -run Hybrid ./rag). First measured with the code as committed before
// it was ever run (dbbbf4b), MRR text → hybrid: paraphrase 0.639 → 0.660, French
// 0.596 → 0.607, code 0.964 → 0.982, relational 0.742 → 0.722 (a loss), all 0.735 →
// 0.743; then among the sets on which relational questions came to be ranked by
// words (the anchor by meaning only when no word matches it). Now, MRR (Hit@1):
//
//	kind        text          hybrid
//	paraphrase  0.639 (0.50)  0.660 (0.54)   win
//	French      0.596 (0.46)  0.607 (0.46)   win
//	code        0.964 (0.93)  0.982 (0.96)   win
//	relational  0.742 (0.64)  0.744 (0.64)   win
//	all         0.735 (0.63)  0.748 (0.65)   win
func TestHybridOnHeldOut10(t *testing.T) {
	t.Parallel()
	checkHybrid(t, "heldout10", heldOut10Graphs, map[string]hybridFigure{
		"paraphrase": {wins, 0.660}, "french": {wins, 0.607}, "code": {wins, 0.982},
		"relational": {wins, 0.744}, "all": {wins, 0.748},
	})
}
