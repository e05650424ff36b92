package main_test

// The commands as a new user meets them: --version, numeric flags, a
// wrong --graph, configuration errors, stdin joined to the arguments, error
// wording, shell completion and the config command — all through the built binary.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sub := e.run("", "version")
	for _, flag := range []string{"--version", "-v"} {
		r := e.run("", flag)
		if r.code != 0 || r.stdout != sub.stdout || !strings.HasPrefix(r.stdout, "nodius-ai ") {
			t.Errorf("%s: code %d stdout %q (version prints %q) stderr %q", flag, r.code, r.stdout, sub.stdout, r.stderr)
		}
	}
}

func TestNumericFlagsAreValidated(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"threads", "list", "--limit", "-1"}, "--limit cannot be negative"},
		{[]string{"threads", "list", "--limit", "many"}, `--limit takes a whole number (got "many")`},
		{[]string{"threads", "search", "--limit", "0", "fetch"}, "--limit must be at least 1"},
		{[]string{"embed", "--batch", "0"}, "--batch must be at least 1"},
		{[]string{"embed", "--delay", "soon"}, "--delay takes a duration"},
		{[]string{"inspect", "toon", "--indent", "-3"}, "--indent must be between 1 and 16"},
	}
	for _, tt := range tests {
		r := e.run("{}", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "panic") {
			t.Errorf("%v: code %d stderr %q, want exit 2 and %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

func TestWrongGraphListsTheSourceGraphs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{
		{"ask", "--graph", "nope", "hi"},
		{"chat", "--graph", "nope", "hi"}, // not a terminal: behaves like ask
		{"inspect", "context", "--graph", "nope", "fetch"},
		{"inspect", "prompt", "--graph", "nope", "fetch"},
	} {
		r := e.run("", args...)
		if r.code != 2 || !strings.Contains(r.stderr, `no graph "nope"`) || !strings.Contains(r.stderr, "its graphs: demo") {
			t.Errorf("%v: code %d stderr %q", args, r.code, r.stderr)
		}
	}
	if reqs := e.srv.ChatRequests(); len(reqs) != 0 {
		t.Errorf("a question about a missing graph reached the provider")
	}
}

func TestConfigErrorsExit2InEveryCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	bad := [][]string{
		{"--source", "file:" + filepath.Join(e.dir, "missing.json")},
		{"--role", "superuser"},
		{"--config", filepath.Join(e.dir, "missing.toml")},
	}
	cmds := [][]string{
		{"ask", "--graph", "demo", "hi"},
		{"chat", "--graph", "demo", "hi"},
		{"inspect", "context", "--graph", "demo", "fetch"},
		{"inspect", "prompt", "--graph", "demo", "fetch"},
		{"threads", "list"},
		{"embed", "--graph", "demo"},
		{"config"},
	}
	for _, b := range bad {
		for _, c := range cmds {
			if b[0] == "--source" && (c[0] == "threads" || c[0] == "config") {
				continue // they never open the source
			}
			args := append(append([]string{}, c...), b...)
			r := e.run("", args...)
			if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
				t.Errorf("%v: code %d (want 2) stderr %q", args, r.code, r.stderr)
			}
			if strings.Contains(r.stderr, "lstat ") || strings.Contains(r.stderr, ": not found") {
				t.Errorf("%v: system call text leaked: %q", args, r.stderr)
			}
		}
	}
}

func TestAskJoinsArgumentsAndStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "A summary."})
	r := e.run("line one of the notes\nline two\n", "ask", "--graph", "demo", "summarise", "this")
	if r.code != 0 || r.stdout != "A summary.\n" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	msgs := e.srv.ChatRequests()[0].Messages
	if got := msgs[len(msgs)-1].Content; got != "summarise this\n\nline one of the notes\nline two" {
		t.Fatalf("question sent = %q", got)
	}
}

func TestErrorWording(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "ok"})
	if r := e.run("", "ask", "--graph", "demo", "hi"); r.code != 0 {
		t.Fatalf("ask: %d %s", r.code, r.stderr)
	}
	var list []map[string]any
	_ = json.Unmarshal([]byte(e.run("", "threads", "list", "--format", "json").stdout), &list)
	id := list[0]["id"].(string)
	doc := filepath.Join(e.dir, "doc.json")
	os.WriteFile(doc, []byte(e.run("", "threads", "export", id).stdout), 0o644)
	bad := filepath.Join(e.dir, "bad.json")
	os.WriteFile(bad, []byte(`{"x":1}`), 0o644)

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"threads", "show", "zzzz"}, `no thread "zzzz"`},
		{[]string{"threads", "rename", id}, "'threads rename' needs ID TITLE — type: nodius-ai threads rename ID TITLE"},
		{[]string{"threads", "show"}, "'threads show' needs ID"},
		{[]string{"threads", "show", "a", "b"}, "'threads show' takes ID, not 2 arguments"},
		{[]string{"threads", "rename", id, "   "}, "title"},
		{[]string{"threads", "import", doc}, "already in the threads database"},
		{[]string{"threads", "import", bad}, "must be 1 to 254 bytes"},
		{[]string{"version", "extra"}, "'version' takes no arguments"},
		{[]string{"threads", "frob"}, `"frob" is not a command of 'threads'`},
		{[]string{"ask", "--frob"}, "'ask' has no flag --frob"},
		{[]string{"ask", "--graph"}, "--graph needs a value"},
		{[]string{"--source", "file:" + filepath.Join(e.dir, "none.json"), "ask", "hi"}, "does not exist"},
	}
	for _, tt := range tests {
		r := e.run("", tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("%v: code %d stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
		for _, leak := range []string{": not found", ": invalid input", ": thread already exists", "lstat ", "arg(s)", "only received"} {
			if strings.Contains(r.stderr, leak) {
				t.Errorf("%v: %q leaked in %q", tt.args, leak, r.stderr)
			}
		}
	}
}

func TestShellCompletion(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "ok"})
	e.run("", "ask", "--graph", "demo", "what does fetch-api do?")
	var list []map[string]any
	_ = json.Unmarshal([]byte(e.run("", "threads", "list", "--format", "json").stdout), &list)
	id := list[0]["id"].(string)
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"threads", "show", ""}, []string{id + "\tdemo: "}},
		{[]string{"threads", "show", id[:6]}, []string{id + "\t"}},
		{[]string{"ask", "--thread", ""}, []string{id + "\t"}},
		{[]string{"ask", "--graph", ""}, []string{"demo\n"}},
		{[]string{"ask", "--format", ""}, []string{"text\nmarkdown\njson\n"}},
		{[]string{"threads", "list", "--format", ""}, []string{"table\njson\n"}},
		{[]string{"inspect", "context", "--format", ""}, []string{"toon\njson\n"}},
		{[]string{"ask", "--on-proposal", ""}, []string{"pending\nreject\napprove\n"}},
		{[]string{"ask", "--source", ""}, []string{"demo\nfile:\narango://"}},
		{[]string{"ask", "--provider", ""}, []string{"deepseek\n", "ollama\n"}},
		{[]string{"ask", "--role", ""}, []string{"viewer\neditor\nadmin\n"}},
	}
	for _, tt := range tests {
		r := e.run("", append([]string{"__complete"}, tt.args...)...)
		for _, w := range tt.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("complete %v = %q, want %q", tt.args, r.stdout, w)
			}
		}
	}
	// The scripts themselves are generated.
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if r := e.run("", "completion", sh); r.code != 0 || len(r.stdout) < 100 {
			t.Errorf("completion %s: code %d", sh, r.code)
		}
	}
}

func TestConfigCommand(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.writeConfig("role = \"viewer\"\nsync = \"arango://root:hunter2@db:8529/nodius\"\n")
	r := e.run("", "config", "--workspace", "acme", "--format", "json")
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "hunter2") {
		t.Fatalf("a password was printed: %s", r.stdout)
	}
	var rep struct {
		Settings []struct{ Name, Value, Origin string }
		Paths    []struct{ Name, Value, Origin string }
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	for _, s := range append(rep.Settings, rep.Paths...) {
		got[s.Name] = [2]string{s.Value, s.Origin}
	}
	want := map[string][2]string{
		"model":       {"fake-model", "NODIUS_AI_MODEL"},
		"workspace":   {"acme", "--workspace"},
		"role":        {"viewer", "the config file"},
		"api-key":     {"**** (set, hidden)", "NODIUS_AI_API_KEY"},
		"sync":        {"arango://root:***@db:8529/nodius", "the config file"},
		"config file": {filepath.Join(e.dir, "config", "nodius-ai", "config.toml"), "read"},
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
	table := e.run("", "config")
	if table.code != 0 || !strings.Contains(table.stdout, "threads database") || !strings.Contains(table.stdout, "NODIUS_AI_MODEL") {
		t.Errorf("table: %d %s", table.code, table.stdout)
	}
}
