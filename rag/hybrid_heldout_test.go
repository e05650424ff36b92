package rag_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/rag/evaluate"
)

// evalHybridSet is evalHybrid over every graph of a set, the outcomes put together.
func evalHybridSet(t *testing.T, srv *llmtest.Server, dir string, graphs []string) (text, hybrid []evaluate.Outcome) {
	t.Helper()
	for _, g := range graphs {
		tr, hr := evalHybrid(t, srv, dir, g)
		text = append(text, tr.Outcomes...)
		hybrid = append(hybrid, hr.Outcomes...)
	}
	return text, hybrid
}

// evalHybrid embeds a copy of a held-out graph through the fake embeddings server
// (embedding.Run, the `embed` command's code, over the real client), then runs the
// graph's questions with text ranking alone and fused with vector similarity.
func evalHybrid(t *testing.T, srv *llmtest.Server, dir, graph string) (text, hybrid evaluate.Report) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(filepath.Join("testdata", dir, graph+".json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), graph+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := file.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	emb := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.OpenAIURL(), APIKey: "test", Model: "stand-in"})
	sum, err := embedding.Run(ctx, src, graph, emb, embedding.Options{})
	if err != nil || sum.Failed != 0 || sum.Embedded != sum.Total {
		t.Fatalf("embedding.Run = %+v, %v", sum, err)
	}
	f, err := os.Open(filepath.Join("testdata", dir, graph+".questions.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	qs, err := evaluate.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	opts := rag.DefaultOptions()
	opts.CacheTTL = 0
	if text, err = evaluate.Run(ctx, rag.New(src, opts, nil), graph, qs); err != nil {
		t.Fatal(err)
	}
	if hybrid, err = evaluate.Run(ctx, rag.New(src, opts, emb), graph, qs); err != nil {
		t.Fatal(err)
	}
	return text, hybrid
}

// TestHybridBeatsTextOnHeldOut holds this set's figures with the thesaurus stand-in model (go
// test -v -run Hybrid ./rag): a win must stay a win, a tie must not become a
// loss, a loss must not deepen, and no figure may fall.
//
// The first held-out set (hr-onboarding, fleet-telemetry), looked at while the
// first fusion was designed.
// MRR:
//
//	kind        text    hybrid
//	paraphrase  0.463   0.517   win
//	French      0.793   0.851   win
//	code        1.000   1.000   tie
//	relational  0.771   0.786   win
//	all         0.740   0.773   win
func TestHybridBeatsTextOnHeldOut(t *testing.T) {
	t.Parallel()
	checkHybrid(t, "heldout", heldOutGraphs, map[string]hybridFigure{
		"paraphrase": {wins, 0.517}, "french": {wins, 0.851}, "code": {ties, 1.000},
		"relational": {wins, 0.786}, "all": {wins, 0.773},
	})
}

// TestHybridWithBagOfWordsStaysNearText: with the fake server's own embedding, a
// hashed bag of words in 64 dimensions where paraphrases do not land close, the
// fused ranking must not fall far below text alone — fusion weighs the vector
// ranking by how clearly it means a node (vectorConfidence). Over the dev set and
// the six held-out sets (632 questions), MRR text → hybrid: paraphrase 0.471 →
// 0.480, French 0.617 → 0.604, code 0.995 → 0.988, relational 0.735 → 0.746, all
// 0.706 → 0.707 (at full weight, with the relational ranking of an earlier round:
// 0.415, 0.495, 0.937, 0.672 and 0.633, text alone being 0.699 overall).
func TestHybridWithBagOfWordsStaysNearText(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	srv.SetEmbed(func(s string) []float32 { return llmtest.Vector(s, 64) })
	sets := append([]heldOutSet{{dir: "dev", graphs: devGraphs}}, heldOutSets[:6]...) // the dev set and the first six held-out sets
	var text, hybrid []evaluate.Outcome
	for _, s := range sets {
		tr, hr := evalHybridSet(t, srv, s.dir, s.graphs)
		text = append(text, tr...)
		hybrid = append(hybrid, hr...)
	}
	for _, cat := range []string{"paraphrase", "french", "code", "relational", "all"} {
		tm, hm := metricsOf(text, cat), metricsOf(hybrid, cat)
		t.Logf("%-10s MRR text %.3f hybrid %.3f", cat, tm.MRR, hm.MRR)
		if limit := 0.02; hm.MRR < tm.MRR-limit {
			t.Errorf("%s: hybrid MRR %.3f, more than %.2f under text alone %.3f", cat, hm.MRR, limit, tm.MRR)
		}
	}
}
