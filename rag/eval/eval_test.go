//go:build eval

package eval_test

import (
	"path/filepath"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/agent/llm/llmtest/thesaurustest"
	"github.com/nodius/nodius-ai/rag/evaluate"
	"github.com/nodius/nodius-ai/rag/evaluate/evaltest"
)

// TestEval measures every set of the manifest. Each held-out set was written and frozen
// by someone who had not read the ranker, in domains no other set touches, and measured
// once with the code as committed before it was ever run; nothing is tuned against it
// (the dev set is for that), and its hashes make any edit to a question visible. Per set:
//   - frozen: its files still have their hashes, and every graph has enough questions
//     of each kind, with gold keys that are nodes of the graph;
//   - text: text search alone, figures logged by kind, and the set's floor held;
//   - hybrid: text fused with the thesaurus stand-in model (WordNet and FreeDict),
//     holding the recorded figures: a win stays a win, a tie never becomes a loss, no
//     hybrid MRR falls.
//
// Then, over the dev set and the first six held-out sets, the fake server's hashed bag
// of words (where paraphrases do not land close) must leave the ranking near text
// alone: fusion weighs the vector side by how clearly it means a node.
func TestEval(t *testing.T) {
	sets := evaltest.LoadManifest(t, "testdata/manifest.json")
	if len(sets) < 18 {
		t.Fatalf("the manifest lists %d sets", len(sets))
	}
	t.Run("sets", func(t *testing.T) {
		for _, s := range sets {
			t.Run(filepath.Base(s.Dir), func(t *testing.T) {
				t.Parallel()
				t.Logf("%s: %s", s.Dir, s.About)
				if len(s.Files) > 0 {
					evaltest.CheckFrozen(t, s)
				}
				if s.PerKind > 0 {
					evaltest.CheckWellFormed(t, s)
				}
				text := evaltest.Text(t, s)
				if s.Tuning {
					for _, o := range text {
						if o.Rank != 1 {
							t.Logf("  rank %d: %s → %v", o.Rank, o.Q, o.Top)
						}
					}
				}
				if m := evaltest.Log(t, "text", text); m.MRR < s.TextFloorMRR {
					t.Errorf("text MRR %.3f under the floor %.2f", m.MRR, s.TextFloorMRR)
				}
				model := thesaurustest.ForTest(t)
				srv := llmtest.Start(t)
				srv.SetEmbed(model.Embed)
				text, hybrid := evaltest.Hybrid(t, srv, s)
				evaltest.CheckFigures(t, text, hybrid, s.Hybrid)
				if s.Tuning {
					for i := range hybrid {
						if text[i].Rank != hybrid[i].Rank || hybrid[i].Rank != 1 {
							t.Logf("  %-10s rank %d → %d  %s → %v", hybrid[i].Cat, text[i].Rank, hybrid[i].Rank, hybrid[i].Q, hybrid[i].Top)
						}
					}
				}
			})
		}
	})
	t.Run("bag-of-words", func(t *testing.T) {
		srv := llmtest.Start(t)
		srv.SetEmbed(func(s string) []float32 { return llmtest.Vector(s, 64) })
		var text, hybrid []evaluate.Outcome
		for _, s := range sets[:7] {
			tr, hr := evaltest.Hybrid(t, srv, s)
			text, hybrid = append(text, tr...), append(hybrid, hr...)
		}
		for _, cat := range append(evaltest.Kinds, "all") {
			tm, hm := evaltest.MetricsOf(text, cat), evaltest.MetricsOf(hybrid, cat)
			t.Logf("%-10s MRR text %.3f hybrid %.3f", cat, tm.MRR, hm.MRR)
			if limit := 0.02; hm.MRR < tm.MRR-limit {
				t.Errorf("%s: hybrid MRR %.3f, more than %.2f under text alone %.3f", cat, hm.MRR, limit, tm.MRR)
			}
		}
	})
}
