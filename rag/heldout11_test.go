package rag_test

import "testing"

// The eleventh held-out set (testdata/heldout11), written to measure once whether the
// ranker finds what people mean, on graphs and questions nobody has seen while the
// ranker changed. Four graphs in domains no other set covers — an airline's tracing of
// delayed bags, from the property irregularity report filed at the arrival desk through
// the bag's last scans, the WorldTracer delayed-bag file, the passenger's text and
// interim-expenses allowance, a bag already scanned at another airport, the half-hourly
// sweep for on-hand matches, the station's confirmation or rejection of a match, the
// rush forward and courier delivery, the day-5 contents questionnaire and central
// tracing, to the day-21 declaration of loss, the depreciated claim under the
// Montreal Convention limit, the claims review, the payout, the settlement letter and
// the mishandled-bag statistics (28 nodes); an energy supplier's smart-meter reads and
// bills, from the DCC's daily register reads, their validation against expected
// consumption and meter-fault tickets through the monthly bill run, seasonal estimates
// when no read came in, a request for a reading after three estimates, the tariff and
// VAT sum, a hold on unusually large bills, the PDF bill, the direct debit and the
// ledger, to a customer's disputed estimate, an on-demand read from the meter, the
// cancel-and-rebill with the twelve-month back-billing limit, or an engineer's
// accuracy visit (28); a charity's online donations and Gift Aid, from the payment
// platform's webhook through fees, card-testing fraud, the supporter match, the
// declaration and its written record, thanks, major-gift calls and supporter journeys
// to the weekly Charities Online claim — unclaimed gifts, missing house numbers found
// from the postcode, aggregated small donations, the GovTalk submission and HMRC's
// acceptance or rejection — and refunds that take back Gift Aid already claimed (29);
// and a dairy co-operative's milk collections and milk cheques, from the tanker
// driver's handheld and the warm-tank refusal through the laboratory sample, results,
// an antibiotic failure traced back to the farm and charged, the hygiene and cell-count
// band and the adviser's visit, to the month-end price on fat and protein,
// deductions, the BACS payment or a debit carried forward, the statement and the
// accounting journal (27) — with 46 to 50 % of their nodes under generic keys (step-2,
// proc-3, fn-5, handler-7, node-17, tmp-handler…) whose meaning is only in their code,
// data, type or neighbours, and four or five branching nodes each.
//
// 112 questions, 7 of each kind per graph, written as people ask: paraphrases sharing
// no word with the key, type key or type name of the node they mean; French
// questions about English-named nodes; code-value questions naming a string, URL,
// identifier or setting found in one node's code or data only; and relational
// questions in both directions and both languages ("what feeds bill-calc?", "quelle
// étape précède le calcul du prix du lait ?"), whose gold lists every neighbour in the
// asked direction when the question does not pick one.
//
// It was written and frozen (this hash check, in its own commit) without reading the
// ranker and without running it on these questions. Nothing is tuned against it; the
// dev set (testdata/dev) is for that. The hashes make any edit visible.
var heldOut11Files = map[string]string{
	"baggage-tracing.json":           "d66c28d5c8b2b106c1f7fdd1070ee81c3ed23cbfc446e89d1f5178ca21ff8fd2",
	"baggage-tracing.questions.json": "6f4e367756dfebfe4396be23fef1488d62254873b4690ddb06966692a7bb0877",
	"meter-billing.json":             "5b85e276a4c8ac825d4a78e1ec4285f768b1efed63d99197105d76edb9224d32",
	"meter-billing.questions.json":   "07421a4bafedc8785987fef571692b0ac67ca5d86a1cf34ad39d4a9e8be3dcec",
	"gift-aid.json":                  "9e12d922eb6e58de500ac754b9489b4d3b3d3eb1a727bad08feb8b4d47ff50a3",
	"gift-aid.questions.json":        "677ee67db7ccc8a541df952227cba2f8cc034af6035931ef975e8af5af9bc87c",
	"milk-collection.json":           "30e56086f08451de2d7a9d11fbef70eaff4d072be0c0e726abeb98f31226a7f1",
	"milk-collection.questions.json": "5b851fe5ef9d315e6b42ac3274a80a0ba336f00c77805e72054b50172ee297bc",
}

var heldOut11Graphs = []string{"baggage-tracing", "meter-billing", "gift-aid", "milk-collection"}

// TestHybridOnHeldOut11 holds this set's figures with the thesaurus stand-in model
// (go test -v -run Hybrid ./rag). First measured with the code as committed before
// it was ever run (dbbbf4b), MRR text → hybrid: paraphrase 0.577 → 0.614, French
// 0.549 → 0.654, code 0.982 → 0.982, relational 0.630 → 0.616 (a loss), all 0.684 →
// 0.717; then among the sets on which relational questions came to be ranked by
// words (the anchor by meaning only when no word matches it). Now, MRR (Hit@1):
//
//	kind        text          hybrid
//	paraphrase  0.577 (0.43)  0.614 (0.50)   win
//	French      0.549 (0.43)  0.654 (0.54)   win
//	code        0.982 (0.96)  0.982 (0.96)   tie
//	relational  0.630 (0.50)  0.638 (0.50)   win
//	all         0.684 (0.58)  0.722 (0.62)   win
func TestHybridOnHeldOut11(t *testing.T) {
	t.Parallel()
	checkHybrid(t, "heldout11", heldOut11Graphs, map[string]hybridFigure{
		"paraphrase": {wins, 0.614}, "french": {wins, 0.654}, "code": {ties, 0.982},
		"relational": {wins, 0.638}, "all": {wins, 0.722},
	})
}
