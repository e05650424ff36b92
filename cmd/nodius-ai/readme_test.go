package main_test

// The README's first five minutes and its scripting section run as written from the
// root of a clone: the offline commands, the shipped example graph, the proposal
// walk-through, asking from scripts and deciding (against the fake provider instead
// of a cloud key).

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
)

// readmeSteps returns the shell lines of each code block of the README section.
func readmeSteps(t *testing.T, section string) [][]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## "+section)
	if i < 0 {
		t.Fatalf("README has no section %q", section)
	}
	s = s[i+3:]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	var blocks [][]string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(s, -1) {
		var lines []string
		for _, l := range strings.Split(m[1], "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
				lines = append(lines, l)
			}
		}
		blocks = append(blocks, lines)
	}
	return blocks
}

// sh runs one README line in the repository root with the built binary on PATH.
func (e *env) sh(line string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = "../.."
	cmd.Env = append(slicesWithout(e.vars, "PATH"), "PATH="+filepath.Dir(binary)+":"+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("%s: %v", line, err)
	}
	return result{out.String(), errb.String(), code}
}

func TestReadmeFirstFiveMinutes(t *testing.T) {
	t.Parallel()
	// The example file is the demo graph under the key nba.
	file, err := os.ReadFile("../../examples/nba.json")
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Replace(demo.JSON(), []byte(`"_key": "demo"`), []byte(`"_key": "nba"`), 1); !bytes.Equal(file, want) {
		t.Error("examples/nba.json is no longer the demo graph under the key nba")
	}

	steps := readmeSteps(t, "The first five minutes")
	if len(steps) < 5 {
		t.Fatalf("found %d code blocks", len(steps))
	}
	// 1. Offline: no provider at all.
	off := newEnv(t)
	off.vars = slicesWithout(off.vars, "NODIUS_AI_BASE_URL", "NODIUS_AI_API_KEY", "NODIUS_AI_MODEL", "NODIUS_AI_SOURCE")
	for _, line := range steps[0] {
		r := off.sh(line)
		if r.code != 0 {
			t.Errorf("step 1: %s: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
		}
		if strings.HasPrefix(line, "nodius-ai inspect context") && !strings.Contains(r.stdout, "fetch-api") {
			t.Errorf("step 1: %s printed no fetch-api:\n%s", line, r.stdout)
		}
	}

	// 4. The proposal walk-through, in a temporary directory instead of /tmp.
	e := newEnv(t, proposeNode("p1"), llmtest.Turn{Text: "Created log-result."})
	e.vars = slicesWithout(e.vars, "NODIUS_AI_SOURCE")
	var thread string
	for _, line := range steps[3] {
		line = strings.ReplaceAll(line, "/tmp/", e.dir+"/")
		if strings.HasPrefix(line, "nodius-ai approve") {
			line = regexp.MustCompile(`ai_\S+`).ReplaceAllString(line, thread)
		}
		r := e.sh(line)
		switch {
		case strings.HasPrefix(line, "nodius-ai ask"):
			m := regexp.MustCompile(`nodius-ai approve (ai_\S+)`).FindStringSubmatch(r.stderr)
			if r.code != 3 || m == nil {
				t.Fatalf("step 4: %s: exit %d (want 3)\n%s", line, r.code, r.stderr)
			}
			thread = m[1]
		case r.code != 0:
			t.Fatalf("step 4: %s: exit %d\n%s", line, r.code, r.stderr)
		}
	}
	// 5. A Nodius server: log in, chat, the server's threads. They need a server:
	// their flags are checked (the login default itself is tried end to end in
	// login_default_e2e_test.go).
	var server []string
	for _, line := range steps[4] {
		off.checkFlags(line)
		f := strings.Fields(line)
		server = append(server, strings.Join(f[:min(3, len(f))], " "))
	}
	if want := "nodius-ai auth login|nodius-ai chat --graph|nodius-ai threads list"; strings.Join(server, "|") != want {
		t.Errorf("step 5 runs %q, want %q", server, want)
	}

	var doc struct {
		Nodes []struct {
			Key string `json:"_key"`
		} `json:"nodes"`
	}
	b, _ := os.ReadFile(filepath.Join(e.dir, "nba.json"))
	if err := json.Unmarshal(b, &doc); err != nil || !strings.Contains(string(b), `"log-result"`) {
		t.Errorf("the approved node is not in the copy of the example (%v)", err)
	}
}

// checkFlags checks a README line that needs a server (not run, as the lines that
// need a cloud key are not): its command exists and has every flag the line uses.
func (e *env) checkFlags(line string) {
	e.t.Helper()
	words := strings.Fields(line)
	for i, w := range words {
		if w == "<" || w == "|" || strings.HasPrefix(w, "#") {
			words = words[:i]
			break
		}
	}
	var path []string
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") || strings.ContainsAny(w, `"'`) {
			break
		}
		path = append(path, w)
	}
	r := e.run("", append(path, "--help")...)
	if r.code != 0 {
		e.t.Errorf("%s: nodius-ai %s --help: exit %d\n%s", line, strings.Join(path, " "), r.code, r.stderr)
		return
	}
	for _, w := range words {
		if name, _, _ := strings.Cut(w, "="); strings.HasPrefix(name, "--") && !strings.Contains(r.stdout, name+" ") {
			e.t.Errorf("%s: nodius-ai %s has no flag %s", line, strings.Join(path, " "), name)
		}
	}
}

func slicesWithout(vars []string, names ...string) []string {
	var out []string
next:
	for _, v := range vars {
		for _, n := range names {
			if strings.HasPrefix(v, n+"=") {
				continue next
			}
		}
		out = append(out, v)
	}
	return out
}

// TestReadmeScripting runs the README's scripting section against the fake provider:
// the three ways to ask, then deciding a proposal each way and undoing (dry run) the
// approved one, each line with the thread id a real run printed.
func TestReadmeScripting(t *testing.T) {
	t.Parallel()
	steps := readmeSteps(t, "Scripting and exit codes")
	if len(steps) != 2 {
		t.Fatalf("found %d code blocks, want the asks and the decisions", len(steps))
	}
	// 1. Three asks, each answered.
	e := newEnv(t, llmtest.Turn{Text: "It calls the stats API."}, llmtest.Turn{Text: "error-handler."}, llmtest.Turn{Text: "filter-active."})
	for _, line := range steps[0] {
		r := e.sh(line)
		if r.code != 0 || r.stdout == "" {
			t.Errorf("%s: exit %d, stdout %q\n%s", line, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(line, "--format json") && !strings.HasPrefix(r.stdout, `{"type":"thread"`) {
			t.Errorf("%s: not NDJSON:\n%s", line, r.stdout)
		}
	}

	// 2. A proposal approved, another rejected, then the approved change undone (dry run).
	d := newEnv(t, proposeNode("call_1"), llmtest.Turn{Text: "Created log-result."},
		llmtest.Turn{Text: "I suggest another.", ToolCalls: []llmtest.ToolCall{{ID: "call_2", Name: "propose_create_node",
			Arguments: `{"nodeKey":"log-table","typeKey":"log-node","sheet":"0","posX":900,"posY":300,"reason":"log it"}`}}},
		llmtest.Turn{Text: "Understood."})
	pending := func() string {
		t.Helper()
		r := d.run("", "ask", "--graph", "demo", "add a log node")
		m := regexp.MustCompile(`nodius-ai approve (ai_\S+)`).FindStringSubmatch(r.stderr)
		if r.code != 3 || m == nil {
			t.Fatalf("ask: exit %d (want 3)\n%s%s", r.code, r.stdout, r.stderr)
		}
		return m[1]
	}
	var approved string
	for _, line := range steps[1] {
		thread := approved
		if !strings.HasPrefix(line, "nodius-ai undo") {
			thread = pending()
		}
		if strings.HasPrefix(line, "nodius-ai approve") {
			approved = thread
		}
		r := d.sh(regexp.MustCompile(`ai_\d+`).ReplaceAllString(line, thread))
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
		}
		if strings.HasPrefix(line, "nodius-ai undo") && !strings.Contains(r.stdout, "log-result") {
			t.Errorf("%s does not show the change it would revert:\n%s", line, r.stdout)
		}
	}
	if b, _ := os.ReadFile(d.graph); !strings.Contains(string(b), `"log-result"`) {
		t.Error("the approved node is not in the graph file (or the dry run removed it)")
	}
}

// TestReadmeNodiusServer runs the README's Nodius server section: the lines that need
// a server are not run (as the ones that need a cloud key are not), but every flag they
// use must be one their command has; the lines that need none run as written, from
// the root of a clone, on the files examples/ ships: a Nodius export (team.ndex), a
// node type's export (api-call.ndex) and a file of the earlier format (old-graph.json).
func TestReadmeNodiusServer(t *testing.T) {
	t.Parallel()
	steps := readmeSteps(t, "Working with a Nodius server")
	if len(steps) != 3 {
		t.Fatalf("found %d code blocks, want the logins, the server runs and the graph files", len(steps))
	}
	e := newEnv(t)
	e.vars = append(slicesWithout(e.vars, "NODIUS_AI_SOURCE"), "NODIUS_AI_KEYRING=off")
	for _, line := range append(steps[0], steps[1]...) {
		if !strings.Contains(line, "://") {
			if r := e.sh(line); r.code != 0 {
				t.Errorf("%s: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
			}
			continue
		}
		e.checkFlags(line)
	}

	// The graph files: the lines run as written from the root of a clone, whose
	// examples/ holds the export, the node type's export and the earlier file;
	// here a copy of it, so that what they write stays out of the repository.
	dir := filepath.Join(e.dir, "clone")
	if err := os.MkdirAll(filepath.Join(dir, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"team.ndex", "old-graph.json", "api-call.ndex"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "examples", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, line := range steps[2] {
		r := e.sh("cd '" + dir + "' && " + line)
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s%s", line, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(line, "inspect graph") && !strings.Contains(r.stdout, "fetch_api") {
			t.Errorf("%s drew no fetch_api:\n%s", line, r.stdout)
		}
	}
	for _, name := range []string{"team.json", "graph.json", "typed.json"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !strings.Contains(string(b), `"sheetsList"`) {
			t.Errorf("%s is not a graph file in Nodius's format (%v)", name, err)
		}
		if name == "typed.json" && !strings.Contains(string(b), "await fetch(node.data.url") {
			t.Errorf("typed.json lacks the code of the api-call type given with --node-type")
		}
		if r := e.run("", "inspect", "graph", "--source", "file:"+filepath.Join(dir, name)); r.code != 0 {
			t.Errorf("the converted %s does not open: exit %d\n%s", name, r.code, r.stderr)
		}
	}
}
