package rag_test

import (
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/rag/evaluate"
)

// The third held-out set (testdata/heldout3), written to judge the fusion of text
// and vector rankings after the second set showed it losing to text alone on French
// and code-value questions. Three graphs in domains no other set touches — a clinic
// appointment scheduler, an IoT greenhouse controller and a monthly payroll run, 29
// nodes each, between a third and a half of them with generic keys (step-3, proc-6,
// tmp-handler…) whose meaning is only in their code, data, type or neighbours — and
// 69 questions in the four kinds, written as people ask: paraphrases, French
// questions about English-named nodes, code-value questions naming a string or an
// identifier from a node's code or data, and relational questions in both
// directions and both languages.
//
// It was written and frozen (this hash check, in its own commit) before the fusion
// was changed, and only its figures by kind are ever logged. The fusion is tuned on
// the dev set (testdata/dev), never on this set.
var heldOut3Files = map[string]string{
	"clinic-scheduler.json":             "f06374416a0c85385f87e5e81a8a413b352fa06ecc3efaddbf475f3e481bb5e4",
	"clinic-scheduler.questions.json":   "c0c01a1b239a3e9990f6ba3594b70a49bad6bd4a15779b0cff578e83b3705fcd",
	"greenhouse-control.json":           "3d5a5e2a5a75eb71249604bf6f8722691c20e834f588e7b40d0a0ce3fe9066dc",
	"greenhouse-control.questions.json": "e36272e0cc1fc1b2e7c5e44edddfddc6ee4430e4511e9adf1591597e467afe1a",
	"payroll-run.json":                  "39400e2b5e18330d68628d00d56d33eb307dbe8dbbf93d0ca8dd192983dbc1f5",
	"payroll-run.questions.json":        "f5de23455af09aedfc16c5365e58fb6e38e5b3bcb93ec83bce23f0cf8d5af6d3",
}

var heldOut3Graphs = []string{"clinic-scheduler", "greenhouse-control", "payroll-run"}

func TestHeldOut3SetIsFrozen(t *testing.T) {
	t.Parallel()
	checkFrozen(t, "heldout3", heldOut3Files)
}

// TestHybridOnHeldOut3 measures text alone against text fused with the stand-in
// embeddings on the third held-out set, by kind only (go test -v -run
// HybridOnHeldOut3 ./rag), and holds the figures measured once, after the fusion
// was tuned on the dev set (MRR; before = the fusion divided by the best score):
//
//	kind        text    hybrid before   hybrid after
//	paraphrase  0.445   0.44            0.441   hybrid LOSES, by 0.004
//	French      0.531   0.57            0.553   win
//	code        0.969   1.00            1.000   win
//	relational  0.691   0.69            0.691   tie
//	all         0.651   0.67            0.662   win
//
// Issue 11 asks that hybrid beat text on every kind; on this set it does not on
// paraphrase (a small loss) and relational (a tie) questions, and this test says
// so rather than hide it: the wins must stay wins, the tie must not become a
// loss, and the loss must not deepen. When a change makes one of them win, move it
// to wins — tuned on the dev set, never on this one.
func TestHybridOnHeldOut3(t *testing.T) {
	t.Parallel()
	model := loadConceptModel(t)
	srv := llmtest.Start(t)
	srv.SetEmbed(model.Embed)
	var text, hybrid []evaluate.Outcome
	for _, g := range heldOut3Graphs {
		tr, hr := evalHybrid(t, srv, "heldout3", g)
		text = append(text, tr.Outcomes...)
		hybrid = append(hybrid, hr.Outcomes...)
	}
	if len(text) < 60 {
		t.Fatalf("only %d held-out questions", len(text))
	}
	logReport(t, "text", text)
	logReport(t, "hybrid", hybrid)
	wins := map[string]bool{"french": true, "code": true, "all": true}
	// Known losses: the hybrid MRR measured on them, a floor.
	losses := map[string]float64{"paraphrase": 0.441}
	for _, cat := range []string{"paraphrase", "french", "code", "relational", "all"} {
		tm, hm := metricsOf(text, cat), metricsOf(hybrid, cat)
		floor, lost := losses[cat]
		switch {
		case wins[cat] && (hm.MRR <= tm.MRR || hm.Hit1 < tm.Hit1):
			t.Errorf("%s: hybrid (Hit@1 %.3f, MRR %.3f) no longer beats text alone (Hit@1 %.3f, MRR %.3f)", cat, hm.Hit1, hm.MRR, tm.Hit1, tm.MRR)
		case lost && hm.MRR < floor-0.0005:
			t.Errorf("%s: hybrid MRR %.3f, under the %.3f measured (text %.3f)", cat, hm.MRR, floor, tm.MRR)
		case !lost && hm.MRR < tm.MRR && tm.MRR < 1:
			t.Errorf("%s: hybrid MRR %.3f loses to text alone %.3f", cat, hm.MRR, tm.MRR)
		case !wins[cat] && hm.MRR > tm.MRR:
			t.Logf("%s: hybrid MRR %.3f now beats text %.3f: move it to wins", cat, hm.MRR, tm.MRR)
		}
	}
}

// metricsOf summarises the outcomes of one kind of question, or of all of them.
func metricsOf(outs []evaluate.Outcome, cat string) evaluate.Metrics {
	if cat == "all" {
		return evaluate.Summarize(outs)
	}
	var sel []evaluate.Outcome
	for _, o := range outs {
		if o.Cat == cat {
			sel = append(sel, o)
		}
	}
	return evaluate.Summarize(sel)
}
