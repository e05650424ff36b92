package rag_test

import (
	"bufio"
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kljensen/snowball/english"
	"github.com/kljensen/snowball/french"

	"github.com/nodius/nodius-ai/agent/llm"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/embedding"
	"github.com/nodius/nodius-ai/datasource/file"
	"github.com/nodius/nodius-ai/datasource/search"
	"github.com/nodius/nodius-ai/rag"
	"github.com/nodius/nodius-ai/rag/evaluate"
)

// conceptModel stands in for a real embedding model in tests, where none can run: a
// text's vector is a bag of its words (Snowball stems) and of the concepts those
// words belong to, hashed into conceptDim buckets. Words of one meaning — synonyms,
// a French word and its English translation — share a concept, so a paraphrase or a
// French question lands close to the node it means even when they share no word,
// which is what a real multilingual model does and plain text ranking cannot.
//
// The concepts come from general vocabulary only: the lines of the search package's
// bilingual programming and workflow lexicon (datasource/search/lexicon.txt, one
// concept a line), read as they are. Nothing here was written for, or tuned on, the
// held-out questions or graphs: the model knows no node key and no question.
type conceptModel struct {
	concepts map[string][]int // stem → concept ids
}

const conceptDim = 1024

func loadConceptModel(t testing.TB) *conceptModel {
	t.Helper()
	m, err := readConcepts()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func readConcepts() (*conceptModel, error) {
	f, err := os.Open(filepath.Join("..", "datasource", "search", "lexicon.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m := &conceptModel{concepts: map[string][]int{}}
	sc := bufio.NewScanner(f)
	for id := 0; sc.Scan(); id++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "~")
		for _, w := range search.Tokens(strings.ReplaceAll(line, "=", ",")) {
			for _, s := range stems(w) {
				if ids := m.concepts[s]; len(ids) == 0 || ids[len(ids)-1] != id {
					m.concepts[s] = append(ids, id)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m.concepts) < 500 {
		return nil, fmt.Errorf("only %d words in the concept dictionary", len(m.concepts))
	}
	return m, nil
}

// stems are the English and French Snowball stems of a folded word.
func stems(w string) []string {
	if len(w) <= 3 {
		return []string{w}
	}
	en, fr := english.Stem(w, false), french.Stem(w, false)
	if en == fr {
		return []string{en}
	}
	return []string{en, fr}
}

// Embed is the model: word and concept features, hashed with a sign, each counted
// with a square root (a word said ten times in code is not ten times the meaning),
// L2-normalised.
func (m *conceptModel) Embed(text string) []float32 {
	counts := map[string]float64{}
	for _, w := range search.Tokens(text) {
		if len(w) < 2 || search.IsStopWord(w) {
			continue
		}
		ss := stems(w)
		counts["w:"+ss[0]]++
		seen := map[int]bool{}
		for _, s := range ss {
			for _, id := range m.concepts[s] {
				if !seen[id] {
					seen[id] = true
					counts["c:"+itoa(id)]++
				}
			}
		}
	}
	v := make([]float64, conceptDim)
	for feat, n := range counts {
		h := fnv.New64a()
		h.Write([]byte(feat))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%conceptDim] += sign * math.Sqrt(n)
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, conceptDim)
	if norm == 0 {
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		i /= 10
		if i == 0 {
			return string(b[n:])
		}
	}
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
	emb := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.OpenAIURL(), APIKey: "test", Model: "concepts"})
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

// TestHybridBeatsTextOnHeldOut: with embeddings, the fused ranking must do at least
// as well as text alone on every kind of held-out question, and better on
// paraphrase, French and overall (MRR; Hit@1 never lower). Figures are logged (go
// test -v -run HybridBeats ./rag) and reported in the README. MRR text → hybrid:
// paraphrase 0.53 → 0.60, French 0.79 → 0.86, code 0.97 → 0.97 (it was 1.00 with
// the fusion divided by the best score), relational 0.80 → 0.80, all 0.76 → 0.80.
func TestHybridBeatsTextOnHeldOut(t *testing.T) {
	t.Parallel()
	model := loadConceptModel(t)
	srv := llmtest.Start(t)
	srv.SetEmbed(model.Embed)
	var text, hybrid []evaluate.Outcome
	for _, g := range []string{"hr-onboarding", "fleet-telemetry"} {
		tr, hr := evalHybrid(t, srv, "heldout", g)
		text = append(text, tr.Outcomes...)
		hybrid = append(hybrid, hr.Outcomes...)
	}
	byCat := func(outs []evaluate.Outcome) map[string][]evaluate.Outcome {
		m := map[string][]evaluate.Outcome{}
		for _, o := range outs {
			m[o.Cat] = append(m[o.Cat], o)
		}
		return m
	}
	tc, hc := byCat(text), byCat(hybrid)
	// Where hybrid wins, it must keep winning; code and relational tie.
	wins := map[string]bool{"paraphrase": true, "french": true, "all": true}
	for _, cat := range []string{"paraphrase", "french", "code", "relational", ""} {
		var tm, hm evaluate.Metrics
		if cat == "" {
			cat = "all"
			tm, hm = evaluate.Summarize(text), evaluate.Summarize(hybrid)
		} else {
			tm, hm = evaluate.Summarize(tc[cat]), evaluate.Summarize(hc[cat])
		}
		t.Logf("%-10s n=%2d  text Hit@1 %.2f Hit@5 %.2f MRR %.3f ctx %3.0f%%  |  hybrid Hit@1 %.2f Hit@5 %.2f MRR %.3f ctx %3.0f%%",
			cat, tm.N, tm.Hit1, tm.Hit5, tm.MRR, 100*tm.ContextRecall, hm.Hit1, hm.Hit5, hm.MRR, 100*hm.ContextRecall)
		if hm.MRR < tm.MRR || hm.Hit1 < tm.Hit1 {
			t.Errorf("%s: hybrid (Hit@1 %.3f, MRR %.3f) loses to text alone (Hit@1 %.3f, MRR %.3f)", cat, hm.Hit1, hm.MRR, tm.Hit1, tm.MRR)
		}
		if wins[cat] && hm.MRR <= tm.MRR {
			t.Errorf("%s: hybrid MRR %.3f does not beat text alone %.3f", cat, hm.MRR, tm.MRR)
		}
	}
	for i := range hybrid {
		if text[i].Rank != hybrid[i].Rank {
			t.Logf("  %-10s rank %d → %d  %s", hybrid[i].Cat, text[i].Rank, hybrid[i].Rank, hybrid[i].Q)
		}
	}
}

// TestHybridOnDevSet logs text against hybrid on the dev set (testdata/dev), the one
// fusion may be tuned against.
func TestHybridOnDevSet(t *testing.T) {
	t.Parallel()
	model := loadConceptModel(t)
	srv := llmtest.Start(t)
	srv.SetEmbed(model.Embed)
	var text, hybrid []evaluate.Outcome
	for _, g := range devGraphs {
		tr, hr := evalHybrid(t, srv, "dev", g)
		text = append(text, tr.Outcomes...)
		hybrid = append(hybrid, hr.Outcomes...)
	}
	logReport(t, "dev text", text)
	logReport(t, "dev hybrid", hybrid)
	for i := range hybrid {
		if text[i].Rank != hybrid[i].Rank || hybrid[i].Rank != 1 {
			t.Logf("  %-10s rank %d → %d  %s → %v", hybrid[i].Cat, text[i].Rank, hybrid[i].Rank, hybrid[i].Q, hybrid[i].Top)
		}
	}
}
