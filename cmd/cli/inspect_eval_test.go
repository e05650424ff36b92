package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// TestInspectEvalFixedFile runs `inspect eval` on a fixed questions file over the
// demo graph whose outcome is certain: three questions name their node (rank 1) and
// one names a node that does not exist (never found). Both formats must give
// exactly those figures.
func TestInspectEvalFixedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "eval_demo.json")
	out, errOut, code := runCLI(t, "", nil, "inspect", "eval", "--graph", "demo", "--format", "json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	type metrics struct {
		N             int     `json:"n"`
		Hit1          float64 `json:"hit1"`
		Hit5          float64 `json:"hit5"`
		MRR           float64 `json:"mrr"`
		ContextRecall float64 `json:"context_recall"`
	}
	var rep struct {
		Graph     string             `json:"graph"`
		Overall   metrics            `json:"overall"`
		ByCat     map[string]metrics `json:"by_cat"`
		Questions []struct {
			Q         string   `json:"q"`
			Gold      []string `json:"gold"`
			Cat       string   `json:"cat"`
			Rank      int      `json:"rank"`
			InContext bool     `json:"in_context"`
			Top       []string `json:"top"`
		} `json:"questions"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Graph != "demo" || len(rep.Questions) != 4 {
		t.Fatalf("graph %q, %d questions", rep.Graph, len(rep.Questions))
	}
	want := map[string]metrics{
		"":       {N: 4, Hit1: 0.75, Hit5: 0.75, MRR: 0.75, ContextRecall: 0.75},
		"named":  {N: 3, Hit1: 1, Hit5: 1, MRR: 1, ContextRecall: 1},
		"absent": {N: 1},
	}
	if rep.Overall != want[""] {
		t.Errorf("overall %+v, want %+v", rep.Overall, want[""])
	}
	for cat, m := range want {
		if cat != "" && rep.ByCat[cat] != m {
			t.Errorf("%s: %+v, want %+v", cat, rep.ByCat[cat], m)
		}
	}

	table, errOut, code := runCLI(t, "", nil, "inspect", "eval", "--graph", "demo", path)
	if code != 0 {
		t.Fatalf("table: exit %d: %s", code, errOut)
	}
	for _, line := range []string{
		"absent              1  0.000  0.000  0.000     0.0%",
		"named               3  1.000  1.000  1.000   100.0%",
		"all                 4  0.750  0.750  0.750    75.0%",
		"which node is called no-such-node-here",
	} {
		if !strings.Contains(table, line) {
			t.Errorf("table lacks %q:\n%s", line, table)
		}
	}
}

func TestInspectEvalBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, format, want string
	}{
		{"missing file", filepath.Join(dir, "nope.json"), "table", "cannot read the questions file"},
		{"not json", write("bad.json", "{"), "table", "not a JSON array"},
		{"no gold", write("nogold.json", `[{"q":"x"}]`), "table", `has no "gold"`},
		{"empty", write("empty.json", `[]`), "table", "no question"},
		{"bad format", filepath.Join("testdata", "eval_demo.json"), "csv", "--format must be table or json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code := runCLI(t, "", nil, "inspect", "eval", "--graph", "demo", "--format", tc.format, tc.path)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
}

// TestInspectEvalWithExpansion: with retrieval.expand = "llm" in the config, `inspect
// eval` measures with the chat model's search terms (a question sharing no word with
// its node is found) and says what the expansion cost; without it, no call is made.
func TestInspectEvalWithExpansion(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	srv.SetScript(llmtest.Script{Loop: true, Turns: []llmtest.Turn{{Text: "html display, page web", Usage: &llmtest.Usage{PromptTokens: 70, CompletionTokens: 6}}}})
	dir := t.TempDir()
	qs := filepath.Join(dir, "q.json")
	if err := os.WriteFile(qs, []byte(`[{"q": "zorglub quux", "gold": ["display-html"]}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"NODIUS_AI_BASE_URL": srv.OpenAIURL(), "NODIUS_AI_API_KEY": "k", "NODIUS_AI_MODEL": "m",
		"XDG_CONFIG_HOME": filepath.Join(dir, "cfg"), "XDG_CACHE_HOME": filepath.Join(dir, "cache")}
	rank := func(out string) int {
		var rep struct {
			Questions []struct{ Rank int } `json:"questions"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Questions) != 1 {
			t.Fatalf("%v: %s", err, out)
		}
		return rep.Questions[0].Rank
	}

	out, errOut, code := runCLI(t, "", env, "inspect", "eval", "--graph", "demo", "--format", "json", qs)
	if code != 0 || rank(out) != 0 || len(srv.ChatRequests()) != 0 || strings.Contains(errOut, "expansion") {
		t.Fatalf("expansion off: exit %d, rank %d, %d calls, stderr %q", code, rank(out), len(srv.ChatRequests()), errOut)
	}

	cfg := filepath.Join(dir, "cfg", "nodius-ai", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("[retrieval]\nexpand = \"llm\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, "", env, "inspect", "eval", "--graph", "demo", "--format", "json", qs)
	if code != 0 || rank(out) != 1 {
		t.Fatalf("expansion on: exit %d, rank %d, stderr %q", code, rank(out), errOut)
	}
	if !strings.Contains(errOut, "query expansion: 1 calls (70 prompt + 6 completion tokens), 0 questions searched without it") {
		t.Errorf("stderr %q", errOut)
	}
}

// TestInspectEvalSaysWhichRankingAnswered: with an embedding model configured, the
// evaluation says on standard error how many questions were ranked with vector
// similarity (none before `embed`, all after), and --text-only leaves the
// embeddings out to compare.
func TestInspectEvalSaysWhichRankingAnswered(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t)
	path := copyGraph(t, "testdata/embed_graph.json", 0o600)
	qs := filepath.Join(t.TempDir(), "q.json")
	if err := os.WriteFile(qs, []byte(`[{"q": "which node fetches the scores", "gold": ["a"]}, {"q": "what does b do", "gold": ["b"]}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	eval := func(extra ...string) string {
		t.Helper()
		args := append([]string{"inspect", "eval", "--source", "file:" + path, "--graph", "g1",
			"--embedding-model", "fake-embed", "--base-url", srv.OpenAIURL(), "--api-key", "test"}, extra...)
		_, errOut, code := runCLI(t, "", nil, append(args, qs)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		return errOut
	}
	if got := eval(); !strings.Contains(got, "ranking: text fused with vector similarity for 0 of 2 questions") || !strings.Contains(got, "run embed") {
		t.Errorf("before embed: %q", got)
	}
	embedFile(t, path, srv.OpenAIURL())
	if got := eval(); !strings.Contains(got, "ranking: text fused with vector similarity for 2 of 2 questions\n") {
		t.Errorf("after embed: %q", got)
	}
	if got := eval("--text-only"); !strings.Contains(got, "ranking: text search alone") {
		t.Errorf("--text-only: %q", got)
	}
}
