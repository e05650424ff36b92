// Package evaltest measures retrieval over question sets on disk, for the tests: the
// small floor rag's own tests keep on every machine, and the full evaluation of the
// held-out sets (rag/eval, behind the eval build tag). A set is a folder of graph
// files NAME.json, each beside NAME.questions.json (the format inspect eval reads).
package evaltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// Kinds are the four kinds of question every held-out set has.
var Kinds = []string{"paraphrase", "french", "code", "relational"}

// Set is one question set and what it holds.
type Set struct {
	Dir    string   `json:"dir"`    // folder of the graph and question files
	About  string   `json:"about"`  // its domains, for the logs and docs/retrieval.md
	Graphs []string `json:"graphs"` // graph keys: Dir/KEY.json and Dir/KEY.questions.json
	// PerKind is how many questions of each kind every graph has at least (0: not checked).
	PerKind int `json:"per_kind"`
	// TextFloorMRR is the overall MRR text search alone must keep (0: none). It sits
	// under the measured figure: a floor, not a target.
	TextFloorMRR float64 `json:"text_floor_mrr"`
	// Files are the sha256 each file was frozen with: a held-out set is written once
	// and never tuned against, and the hash makes an edit to a question visible.
	Files map[string]string `json:"files"`
	// Tuning marks the set changes are tuned against, which may be read question by
	// question: its misses are logged.
	Tuning bool `json:"tuning"`
	// Hybrid holds the figures measured with the thesaurus stand-in model, by kind and "all".
	Hybrid map[string]Figure `json:"hybrid"`
}

// Figure is what a set showed for one kind, hybrid against text alone: "wins" (hybrid
// MRR above text's, Hit@1 not below), "ties" (hybrid MRR at least text's) or "loses"
// (hybrid under text), and the hybrid MRR measured, which must not fall.
type Figure struct {
	Verdict string  `json:"verdict"`
	MRR     float64 `json:"mrr"`
}

// LoadManifest reads a list of sets ({"sets": [...]}); each Dir is made relative to
// the manifest's folder.
func LoadManifest(tb testing.TB, path string) []Set {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var m struct {
		Sets []Set `json:"sets"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	for i := range m.Sets {
		m.Sets[i].Dir = filepath.Join(filepath.Dir(path), m.Sets[i].Dir)
	}
	return m.Sets
}

// CheckFrozen fails when a file of the set no longer has the sha256 it was frozen
// with, or when a graph or its questions are not hashed.
func CheckFrozen(tb testing.TB, s Set) {
	tb.Helper()
	if len(s.Files) != 2*len(s.Graphs) {
		tb.Errorf("%s: %d hashed files for %d graphs: each graph and its questions are frozen", s.Dir, len(s.Files), len(s.Graphs))
	}
	for name, want := range s.Files {
		b, err := os.ReadFile(filepath.Join(s.Dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != want {
			tb.Errorf("%s changed (sha256 %s): the held-out set is frozen", name, got)
		}
	}
}

// CheckWellFormed checks a set's structure, not any ranking: each graph loads, has at
// least PerKind questions of each of the four kinds and no other, and every gold key
// is a node of its graph.
func CheckWellFormed(tb testing.TB, s Set) {
	tb.Helper()
	ctx := context.Background()
	for _, g := range s.Graphs {
		src, qs := open(tb, s.Dir, g)
		byCat := map[string]int{}
		for _, q := range qs {
			byCat[q.Cat]++
			if len(q.Gold) == 0 {
				tb.Errorf("%s: %q has no gold", g, q.Q)
			}
			for _, k := range q.Gold {
				if _, err := src.Node(ctx, g, k); err != nil {
					tb.Errorf("%s: gold %q of %q: %v", g, k, q.Q, err)
				}
			}
		}
		for _, cat := range Kinds {
			if byCat[cat] < s.PerKind {
				tb.Errorf("%s: %d %s questions, want at least %d", g, byCat[cat], cat, s.PerKind)
			}
		}
		if len(byCat) != len(Kinds) {
			tb.Errorf("%s: kinds %v, want the four", g, byCat)
		}
	}
}

// open reads a graph file and its questions.
func open(tb testing.TB, dir, graph string) (*file.Source, []evaluate.Question) {
	tb.Helper()
	src, err := file.Open(context.Background(), filepath.Join(dir, graph+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, graph+".questions.json"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	qs, err := evaluate.Load(f)
	if err != nil {
		tb.Fatalf("%s: %v", graph, err)
	}
	return src, qs
}

// Text runs every question of the set with text search alone.
func Text(tb testing.TB, s Set) []evaluate.Outcome {
	tb.Helper()
	var all []evaluate.Outcome
	for _, g := range s.Graphs {
		src, qs := open(tb, s.Dir, g)
		rep, err := evaluate.Run(context.Background(), rag.New(src, options(), nil), g, qs)
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, rep.Outcomes...)
	}
	return all
}

// Hybrid embeds a copy of each graph of the set through the fake embeddings server
// (embedding.Run, the embed command's code, over the real client), then runs its
// questions with text ranking alone and fused with vector similarity.
func Hybrid(tb testing.TB, srv *llmtest.Server, s Set) (text, hybrid []evaluate.Outcome) {
	tb.Helper()
	ctx := context.Background()
	emb := llm.NewEmbedder(llm.EmbedderOptions{BaseURL: srv.OpenAIURL(), APIKey: "test", Model: "stand-in"})
	for _, g := range s.Graphs {
		b, err := os.ReadFile(filepath.Join(s.Dir, g+".json"))
		if err != nil {
			tb.Fatal(err)
		}
		dir := tb.TempDir()
		if err := os.WriteFile(filepath.Join(dir, g+".json"), b, 0o644); err != nil {
			tb.Fatal(err)
		}
		q, err := os.ReadFile(filepath.Join(s.Dir, g+".questions.json"))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, g+".questions.json"), q, 0o644); err != nil {
			tb.Fatal(err)
		}
		src, qs := open(tb, dir, g)
		sum, err := embedding.Run(ctx, src, g, emb, embedding.Options{})
		if err != nil || sum.Failed != 0 || sum.Embedded != sum.Total {
			tb.Fatalf("embedding.Run = %+v, %v", sum, err)
		}
		tr, err := evaluate.Run(ctx, rag.New(src, options(), nil), g, qs)
		if err != nil {
			tb.Fatal(err)
		}
		hr, err := evaluate.Run(ctx, rag.New(src, options(), emb), g, qs)
		if err != nil {
			tb.Fatal(err)
		}
		text = append(text, tr.Outcomes...)
		hybrid = append(hybrid, hr.Outcomes...)
	}
	return text, hybrid
}

// options are the product's retrieval options without the cache, so that every
// question is ranked afresh.
func options() rag.Options {
	opts := rag.DefaultOptions()
	opts.CacheTTL = 0
	return opts
}

// MetricsOf summarises the outcomes of one kind of question, or of all of them ("all").
func MetricsOf(outs []evaluate.Outcome, cat string) evaluate.Metrics {
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

// Log logs the figures by kind and overall, never question by question (so that a
// run does not show which held-out questions a change should aim at), and returns
// the overall figures.
func Log(tb testing.TB, name string, outs []evaluate.Outcome) evaluate.Metrics {
	tb.Helper()
	for _, cat := range append(Kinds, "all") {
		m := MetricsOf(outs, cat)
		tb.Logf("%-9s %-10s n=%3d Hit@1 %.2f Hit@5 %.2f MRR %.3f context %3.0f%%", name, cat, m.N, m.Hit1, m.Hit5, m.MRR, 100*m.ContextRecall)
	}
	return MetricsOf(outs, "all")
}

// CheckFigures holds what was measured: a win must stay a win, a tie must not become
// a loss, and no hybrid MRR may fall under its recorded figure. A kind that starts to
// win is logged, to be recorded as a win.
func CheckFigures(tb testing.TB, text, hybrid []evaluate.Outcome, want map[string]Figure) {
	tb.Helper()
	for _, cat := range append(Kinds, "all") {
		tm, hm := MetricsOf(text, cat), MetricsOf(hybrid, cat)
		tb.Logf("%-10s n=%3d  text Hit@1 %.3f Hit@5 %.3f MRR %.3f ctx %3.0f%%  |  hybrid Hit@1 %.3f Hit@5 %.3f MRR %.3f ctx %3.0f%%",
			cat, tm.N, tm.Hit1, tm.Hit5, tm.MRR, 100*tm.ContextRecall, hm.Hit1, hm.Hit5, hm.MRR, 100*hm.ContextRecall)
		w, ok := want[cat]
		if !ok {
			tb.Errorf("no figure recorded for %s", cat)
			continue
		}
		if hm.MRR < w.MRR-0.0005 {
			tb.Errorf("%s: hybrid MRR %.3f, under the %.3f measured (text %.3f)", cat, hm.MRR, w.MRR, tm.MRR)
		}
		switch w.Verdict {
		case "wins":
			if hm.MRR <= tm.MRR || hm.Hit1 < tm.Hit1 {
				tb.Errorf("%s: hybrid (Hit@1 %.3f, MRR %.3f) no longer beats text alone (Hit@1 %.3f, MRR %.3f)", cat, hm.Hit1, hm.MRR, tm.Hit1, tm.MRR)
			}
		case "ties":
			if hm.MRR < tm.MRR-0.0005 {
				tb.Errorf("%s: hybrid MRR %.3f loses to text alone %.3f", cat, hm.MRR, tm.MRR)
			}
		case "loses":
		default:
			tb.Errorf("%s: verdict %q is none of wins, ties, loses", cat, w.Verdict)
		}
		if w.Verdict != "wins" && hm.MRR > tm.MRR+0.005 && hm.Hit1 >= tm.Hit1 {
			tb.Logf("%s: hybrid MRR %.3f now beats text %.3f: record it as a win", cat, hm.MRR, tm.MRR)
		}
	}
}
