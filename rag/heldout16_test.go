package rag_test

import "testing"

// The sixteenth held-out set (testdata/heldout16), written to measure once, on graphs
// and questions nobody has seen while the ranker changed, how retrieval does on every
// kind of question. Four graphs in domains no other set covers — a sailing club's boat
// bookings, from a member's request through the subscription lookup, the RYA
// qualification needed for the boat class, a free hull, the wind and tide forecast and
// its go/no-go, the confirmation and hire fee to the pre-launch checklist and its
// defect gate, the safety-boat rota, the sign-out tally and launch log, the wait for
// the crew to sign back in, the overdue alarm and the coastguard call, the return
// inspection, the damage excess and the nightly release of no-shows (28 nodes); a
// blood service's donor sessions, from the appointment request through the donation
// interval and age gate, a nearby session, a chair and the reminder text to the health
// questionnaire and its deferrals, the fingerprick haemoglobin test, the donation
// number, the donation record and the lab manifest, then the lab's results, units
// released to stock or a clinician's call for reactive ones, and a morning stock check
// by blood group that texts donors of short groups (27); a freight forwarder's import
// customs declarations, from the carrier's pre-alert and the vessel's arrival through
// the invoice lines, commodity codes and a broker's review, tariff rates, duty and
// import VAT, licensed goods, the importer's EORI and deferment account to the
// declaration lodged with HMRC, then customs notifications (documents requested, an
// examination, or clearance), duty debited or paid before release, the haulier's
// release notice, the port community system, the archive and a monthly duty
// statement (29); and an online course platform's certificates and plagiarism checks,
// from a capstone submission through the similarity report and a machine-writing
// score to the integrity panel (cleared, resubmit or misconduct and a suspended
// enrolment) or the marking queue, then the posted grade, the weighted final score,
// a retake offer, the identity check of verified-track learners, the signed
// certificate number, the PDF, the register, the transcript, LinkedIn, an Open Badge
// for the audit track, the delivery email and revocation (28) — with 48 to 50 % of
// their nodes under generic keys (step-2, proc-4, fn-7, handler-8, node-12,
// tmp-handler…) whose meaning is only in their code, data, type or neighbours, and
// four or five branching nodes each.
//
// 112 questions, 7 of each kind per graph, written as people ask: paraphrases sharing
// no word with the key, type key or type name of the node they mean; French
// questions about English-named nodes; code-value questions naming a string, URL,
// identifier or setting found in one node's code or data only; and relational
// questions in both directions and both languages ("which step feeds launch-log?",
// "qu'est-ce qui alimente la file de correction ?"), whose gold lists every neighbour
// in the asked direction when the question does not pick one.
//
// It was written and frozen (this hash check, in its own commit) without reading the
// ranker and without running it on these questions. Nothing is tuned against it; the
// dev set (testdata/dev) is for that. The hashes make any edit visible.
var heldOut16Files = map[string]string{
	"sailing-bookings.json":               "b0364b6695765cc14220bfedeebd12e0dc836a4ab2c148deb1136218d5dbd79c",
	"sailing-bookings.questions.json":     "e2377420503fd94ca0c27b8a2832d71309dd047d5066bc4d26ba6925f22728dc",
	"blood-donors.json":                   "ce6fb70f4ef26bf53ba1fb3291ecc72574f0a09905b394bc940629b54f64f6b8",
	"blood-donors.questions.json":         "ef17e1514a8534b82eff7bddf6cd813ffe205b00931e1c2496413566c65d4aaa",
	"customs-declarations.json":           "1a90a52a971a8bf4e1aa326e28e3464105a404aa76005429423cff989227b748",
	"customs-declarations.questions.json": "a20cc71959ea7a26cd1e34854c277fe01d7754caa498e7004ef757e791fbc4b2",
	"course-certificates.json":            "ece9a35c956e21e58ee61081ab5c81ecc2d89cfb1cd47bb9d89825d78555eead",
	"course-certificates.questions.json":  "8acb429321f76995790b2dd3e965406f9be8efc766863892c366b52d5be0b31d",
}

var heldOut16Graphs = []string{"sailing-bookings", "blood-donors", "customs-declarations", "course-certificates"}

// TestHybridOnHeldOut16 holds this set's figures with the thesaurus stand-in model (go
// test -v -run Hybrid ./rag), measured once, with the code as committed before it was
// ever run (ba3caa2). MRR (Hit@1):
//
//	kind        text          hybrid
//	paraphrase  0.783 (0.71)  0.790 (0.71)   win
//	French      0.433 (0.36)  0.541 (0.39)   win
//	code        0.982 (0.96)  0.982 (0.96)   tie
//	relational  0.494 (0.36)  0.501 (0.36)   win
//	all         0.673 (0.60)  0.704 (0.61)   win
func TestHybridOnHeldOut16(t *testing.T) {
	t.Parallel()
	checkHybrid(t, "heldout16", heldOut16Graphs, map[string]hybridFigure{
		"paraphrase": {wins, 0.790}, "french": {wins, 0.541}, "code": {ties, 0.982},
		"relational": {wins, 0.501}, "all": {wins, 0.704},
	})
}
