package evaluate

import (
	"strings"
	"testing"
)

func TestScoreAndSummarize(t *testing.T) {
	t.Parallel()
	q := func(gold ...string) Question { return Question{Q: "q", Gold: gold} }
	outs := []Outcome{
		Score(q("a"), []string{"a", "b"}, []string{"a"}),                     // rank 1
		Score(q("x", "c"), []string{"a", "c", "x"}, []string{"b"}),           // rank 2 (first gold), not in context
		Score(q("f"), []string{"a", "b", "c", "d", "e", "f"}, []string{"f"}), // rank 6, in context
		Score(q("z"), []string{"a"}, nil),                                    // absent
	}
	if outs[1].Rank != 2 || outs[1].InContext || outs[2].Rank != 6 || outs[3].Rank != 0 {
		t.Fatalf("outcomes %+v", outs)
	}
	m := Summarize(outs)
	want := Metrics{N: 4, Hit1: 0.25, Hit5: 0.5, MRR: (1 + 0.5 + 1.0/6) / 4, ContextRecall: 0.5}
	if m != want {
		t.Fatalf("got %+v, want %+v", m, want)
	}
	if z := Summarize(nil); z != (Metrics{}) {
		t.Fatalf("empty: %+v", z)
	}
}

func TestLoadRejectsBadEntries(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`[{"q":"", "gold":["a"]}]`, `[{"q":"a","gold":[]}]`, `[{"q":"a","gold":["a"],"extra":1}]`, `{}`, `[]`} {
		if _, err := Load(strings.NewReader(body)); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
	qs, err := Load(strings.NewReader(`[{"q":"a","gold":["k"],"cat":"code"}]`))
	if err != nil || len(qs) != 1 || qs[0].Cat != "code" {
		t.Fatalf("%v %+v", err, qs)
	}
}
