package rag_test

import "testing"

// The twelfth held-out set (testdata/heldout12), written to measure retrieval once on
// graphs and questions nobody has seen while the ranker changed. Four graphs in
// domains no other set covers — a city council's bike-lane pothole reports, from a
// cyclist's report in the app through placing it on the cycle network from the map,
// forwarding reports off the network, merging repeat reports, measuring the hole from
// the photos and setting its intervention category to a make-safe crew within 24
// hours, a text to the duty officer, a highway inspector's visit, the term
// contractor's work order, the check of the contractor's after-photos, remedial
// notices, the reporter's update, the open data portal and a Monday list of overdue
// repairs (27 nodes); a translation agency's jobs, from a client's quote request
// through the translation-memory analysis, weighted word-count pricing with rush and
// certification fees, an account manager's sign-off, the quote and its acceptance, a
// new client's credit check or advance payment, finding freelance linguists and
// offering them the job, the project and its termbase in the translation management
// system, automated QA, rework or a second linguist's revision, to the final files'
// names and certificate, delivery, the client's invoice, the delivery notice and the
// freelancer's purchase order (28); a museum's outgoing artwork loans, from a
// borrowing institution's request through the collections system, the borrower's
// facilities report and light budget, the loans committee and a decline letter, the
// government indemnity or commercial cover, the loan agreement signed by both
// directors, the loan fee, the conservator's condition report and treatment ticket,
// the export licence for venues abroad, crates and climate-controlled transport, the
// courier and the movement record, then the works' return, the incoming condition
// check, the insurer's damage notification, the loan's closure and the closing letter
// (27); and a restaurant's table reservations and no-show fees, from a booking request
// through finding a table for the sitting, the waiting list, the card-guarantee rules
// and saved card, the confirmation and the day-before reminder text, cancellations
// with or without enough notice and freed tables offered to the waiting list, the
// host's seated or no-show mark, the fee worked out and charged, the guest's profile,
// loyalty visits, and chargebacks answered with an evidence pack (28) — with 46 to
// 50 % of their nodes under generic keys (step-2, proc-3, fn-6, handler-10, node-19,
// tmp-handler…) whose meaning is only in their code, data, type or neighbours, and
// four or five branching nodes each.
//
// 112 questions, 7 of each kind per graph, written as people ask: paraphrases sharing
// no word with the key, type key or type name of the node they mean; French
// questions about English-named nodes; code-value questions naming a string, URL,
// identifier or setting found in one node's code or data only; and relational
// questions in both directions and both languages ("what feeds works-order?",
// "qu'est-ce qui suit la libération de la table ?"), whose gold lists every
// neighbour in the asked direction when the question does not pick one.
//
// It was written and frozen (this hash check, in its own commit) without reading the
// ranker and without running it on these questions. Nothing is tuned against it; the
// dev set (testdata/dev) is for that. The hashes make any edit visible.
var heldOut12Files = map[string]string{
	"pothole-reports.json":              "45efced33d6a6d45510d747a7bf1c32f7944588185f8520bc19cc9216b7571be",
	"pothole-reports.questions.json":    "9ac11f7bbc731f98ec703729ac1e9430c50de0f430f0e3ddafbca861c4f41084",
	"translation-jobs.json":             "ff87bd500586226953a49d0beff2bc88110c9a1c963ab60e1ead5dccd29949e7",
	"translation-jobs.questions.json":   "a8548ffb243be8c26739e572c02be6bfedf2eef1918d9e94244ace697141e23d",
	"artwork-loans.json":                "ae3818e402834257b38464a3f719cf09c61c16293161a425231ad29302e2f271",
	"artwork-loans.questions.json":      "ed4b7a43558af1d60419d09e9db8a50a4fc85158851ac81d2fe6330021b7e64a",
	"table-reservations.json":           "ca18a1a9b7e22a5280ab00a3d34f9203922b3d32f98098e751c8e97e9baaea9c",
	"table-reservations.questions.json": "de5dbd596d745973a7a197c3851a9a1b915c106394cbf608a1ab64e973d90158",
}

var heldOut12Graphs = []string{"pothole-reports", "translation-jobs", "artwork-loans", "table-reservations"}

// TestHybridOnHeldOut12 holds this set's figures with the thesaurus stand-in model
// (go test -v -run Hybrid ./rag). First measured with the code as committed before
// it was ever run (349f2d7), MRR text → hybrid: paraphrase 0.536 → 0.555, French
// 0.726 → 0.751, code 1.000 → 1.000, relational 0.706 → 0.706, all 0.742 → 0.753;
// then among the sets on which the nodes after a relational question's neighbours
// came to be ranked as for any question. Now, MRR (Hit@1):
//
//	kind        text          hybrid
//	paraphrase  0.536 (0.36)  0.555 (0.36)   win
//	French      0.726 (0.61)  0.751 (0.64)   win
//	code        1.000 (1.00)  1.000 (1.00)   tie
//	relational  0.706 (0.57)  0.706 (0.57)   tie
//	all         0.742 (0.63)  0.753 (0.64)   win
func TestHybridOnHeldOut12(t *testing.T) {
	t.Parallel()
	checkHybrid(t, "heldout12", heldOut12Graphs, map[string]hybridFigure{
		"paraphrase": {wins, 0.555}, "french": {wins, 0.751}, "code": {ties, 1.000},
		"relational": {ties, 0.706}, "all": {wins, 0.753},
	})
}
