package main_test

// End-to-end tests of the built binary: ask, approve and reject against the fake
// OpenAI-compatible server (agent/llm/llmtest) on loopback, with a real SQLite
// threads database and a real graph file.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/internal/testbin"
)

var binary string

func TestMain(m *testing.M) {
	var cleanup func()
	var err error
	binary, cleanup, err = testbin.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// env is one isolated user: its own config, data and state dirs, threads database
// and graph file, pointed at a fake provider.
type env struct {
	t     *testing.T
	dir   string
	graph string
	srv   *llmtest.Server
	vars  []string
	bin   string               // the binary to run (default: the package's build)
	sys   *syscall.SysProcAttr // how to run it (another user, for one)
}

func newEnv(t *testing.T, turns ...llmtest.Turn) *env {
	t.Helper()
	dir := t.TempDir()
	graph := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(graph, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.Start(t, turns...)
	e := &env{t: t, dir: dir, graph: graph, srv: srv}
	e.vars = []string{
		"HOME=" + dir,
		"PATH=" + os.Getenv("PATH"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"XDG_DATA_HOME=" + filepath.Join(dir, "data"),
		"XDG_STATE_HOME=" + filepath.Join(dir, "state"),
		"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(),
		"NODIUS_AI_API_KEY=sk-test-secret-key",
		"NODIUS_AI_MODEL=fake-model",
		"NODIUS_AI_SOURCE=file:" + graph,
	}
	return e
}

type result struct {
	stdout, stderr string
	code           int
}

func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bin := binary
	if e.bin != "" {
		bin = e.bin
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.vars
	cmd.SysProcAttr = e.sys
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("run %v: %v", args, err)
	}
	r := result{out.String(), errb.String(), code}
	if strings.Contains(r.stdout+r.stderr, "sk-test-secret-key") {
		e.t.Fatalf("the API key was printed:\n%s\n%s", r.stdout, r.stderr)
	}
	return r
}

func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not NDJSON: %q: %v", sc.Text(), err)
		}
		evs = append(evs, m)
	}
	return evs
}

func types(evs []map[string]any) string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e["type"].(string))
	}
	return strings.Join(ts, ",")
}

func TestAskTextFromArgsAndStdin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "fetch-api calls the stats API."}, llmtest.Turn{Text: "Second answer."})
	r := e.run("", "ask", "--graph", "demo", "what", "does", "fetch-api", "do?")
	if r.code != 0 || r.stdout != "fetch-api calls the stats API.\n" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("and then?\n", "ask", "--continue", "--graph", "demo")
	if r.code != 0 || r.stdout != "Second answer.\n" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := reqs[1].Messages
	if last[len(last)-1].Content != "and then?" || len(last) != 6 {
		t.Fatalf("continued thread sent %d messages, last %+v", len(last), last[len(last)-1])
	}
	if !reqs[0].Stream || !reqs[0].IncludeUsage || !reqs[0].Auth {
		t.Fatalf("request = %+v", reqs[0])
	}
}

func TestAskJSONEvents(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "read_node_detail", Arguments: `{"nodeKey":"fetch-api"}`}}},
		llmtest.Turn{Text: "It calls the API.", Usage: &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 50, CachedTokens: 200}})
	r := e.run("", "ask", "--graph", "demo", "--format", "json", "fetch-api?")
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	evs := events(t, r.stdout)
	want := "thread,usage,tool_start,tool_result,token,token,token,token,usage,complete"
	if got := types(evs); got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if evs[0]["graph"] != "demo" || !strings.HasPrefix(evs[0]["thread_id"].(string), "ai_") {
		t.Fatalf("thread event %v", evs[0])
	}
	if evs[2]["name"] != "read_node_detail" || evs[2]["args"].(map[string]any)["nodeKey"] != "fetch-api" {
		t.Fatalf("tool_start %v", evs[2])
	}
	if evs[3]["error"] != "" || !strings.Contains(evs[3]["result"].(string), "fetch-api") {
		t.Fatalf("tool_result %v", evs[3])
	}
	u := evs[8]
	if _, priced := u["cost_usd"].(float64); u["prompt_tokens"] != 1000.0 || u["cached_tokens"] != 200.0 || !priced {
		t.Fatalf("usage %v", u)
	}
	if last := evs[len(evs)-1]; last["text"] != "It calls the API." || last["thread_id"] != evs[0]["thread_id"] {
		t.Fatalf("complete %v", last)
	}
	// The tool result went back under the call's id.
	msgs := e.srv.ChatRequests()[1].Messages
	if m := msgs[len(msgs)-1]; m.Role != "tool" || m.ToolCallID != "c1" {
		t.Fatalf("tool message %+v", m)
	}
}

func proposeNode(id string) llmtest.Turn {
	return llmtest.Turn{Text: "I suggest a log node.", ToolCalls: []llmtest.ToolCall{{ID: id, Name: "propose_create_node",
		Arguments: `{"nodeKey":"log-result","typeKey":"log-node","sheet":"0","posX":900,"posY":100,"reason":"log the rendered table"}`}}}
}

func TestProposalApproveWritesGraphFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeNode("p1"), llmtest.Turn{Text: "Created log-result."})
	r := e.run("", "ask", "--graph", "demo", "--format", "json", "add a log node")
	if r.code != 3 {
		t.Fatalf("code %d (want 3) stderr %s", r.code, r.stderr)
	}
	evs := events(t, r.stdout)
	last := evs[len(evs)-1]
	if last["type"] != "proposal" || last["tool"] != "propose_create_node" || last["action"].(map[string]any)["type"] != "create_node" {
		t.Fatalf("last event %v", last)
	}
	thread := evs[0]["thread_id"].(string)
	before, _ := os.ReadFile(e.graph)
	if bytes.Contains(before, []byte("log-result")) {
		t.Fatal("graph changed before approval")
	}
	r = e.run("", "approve", thread[:len("ai_")+4]) // the short form
	if r.code != 0 || r.stdout != "Created log-result.\n" {
		t.Fatalf("approve: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	after, _ := os.ReadFile(e.graph)
	if !bytes.Contains(after, []byte(`"log-result"`)) {
		t.Fatal("approved node not written to the graph file")
	}
	msgs := e.srv.ChatRequests()[1].Messages
	if m := msgs[len(msgs)-1]; m.ToolCallID != "p1" || !strings.Contains(m.Content, "approved") {
		t.Fatalf("decision sent as %+v", m)
	}
	// Nothing left to decide.
	if r := e.run("", "approve", thread); r.code == 0 {
		t.Fatal("approving twice must fail")
	}
}

func TestProposalRejectAndOnProposal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, proposeNode("p1"), llmtest.Turn{Text: "Fine."}, proposeNode("p2"), llmtest.Turn{Text: "Made it."})
	r := e.run("", "ask", "--graph", "demo", "add a log node")
	if r.code != 3 || r.stdout != "I suggest a log node.\n" || !strings.Contains(r.stderr, "nodius-ai approve") ||
		!strings.Contains(r.stderr, "create node log-result (log-node) on sheet 0 at (900, 100)") {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "threads", "list", "--format", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("threads list: %v %q", err, r.stdout)
	}
	thread := list[0]["id"].(string)
	r = e.run("", "reject", thread, "--feedback", "not now")
	if r.code != 0 || r.stdout != "Fine.\n" {
		t.Fatalf("reject: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	msgs := e.srv.ChatRequests()[1].Messages
	if m := msgs[len(msgs)-1]; !strings.Contains(m.Content, "rejected") || !strings.Contains(m.Content, "not now") {
		t.Fatalf("decision sent as %+v", m)
	}
	graph, _ := os.ReadFile(e.graph)
	if bytes.Contains(graph, []byte("log-result")) {
		t.Fatal("rejected node written")
	}
	r = e.run("", "ask", "--graph", "demo", "--on-proposal", "approve", "add it anyway")
	if r.code != 0 || !strings.Contains(r.stdout, "Made it.") {
		t.Fatalf("on-proposal approve: code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	graph, _ = os.ReadFile(e.graph)
	if !bytes.Contains(graph, []byte("log-result")) {
		t.Fatal("--on-proposal approve did not apply")
	}
}

func TestExitCodesAndErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Status: 401, ErrorMessage: "invalid api key"})
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"auth error", []string{"ask", "--graph", "demo", "hi"}, 1, "auth_error"},
		{"bad format", []string{"ask", "--graph", "demo", "--format", "xml", "hi"}, 2, "--format"},
		{"unknown command", []string{"frobnicate"}, 2, `"frobnicate" is not a command`},
		{"no question", []string{"ask", "--graph", "demo"}, 2, "no question"},
		{"unknown graph", []string{"ask", "--graph", "nope", "hi"}, 2, "nope"},
	}
	for _, tt := range tests {
		r := e.run("", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.stderr) {
			t.Errorf("%s: code %d (want %d) stderr %q", tt.name, r.code, tt.code, r.stderr)
		}
	}
}

func TestNoProviderIsConfigError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.vars = []string{"HOME=" + e.dir, "PATH=" + os.Getenv("PATH"), "XDG_DATA_HOME=" + e.dir, "XDG_CONFIG_HOME=" + e.dir, "XDG_STATE_HOME=" + e.dir}
	r := e.run("", "ask", "--graph", "demo", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "DEEPSEEK_API_KEY") {
		t.Fatalf("code %d stderr %q", r.code, r.stderr)
	}
	// Offline commands need no provider.
	if r := e.run("", "inspect", "context", "--graph", "demo", "fetch api"); r.code != 0 || !strings.Contains(r.stdout, "fetch-api") {
		t.Fatalf("inspect: code %d stderr %q", r.code, r.stderr)
	}
}

func TestInterruptExits130AndKeepsPartial(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "one two three four five six seven eight", Delay: 150 * time.Millisecond})
	cmd := exec.Command(binary, "ask", "--graph", "demo", "hi")
	cmd.Env = e.vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	go func() {
		var got []byte
		signalled := false
		buf := make([]byte, 256)
		for {
			n, err := stdout.Read(buf)
			got = append(got, buf[:n]...)
			if !signalled && bytes.Contains(got, []byte("two")) {
				close(seen)
				signalled = true
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-seen:
	case <-time.After(20 * time.Second):
		t.Fatal("no token arrived")
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v", err)
	}
	r := e.run("", "threads", "list", "--format", "json")
	var list []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil || len(list) != 1 {
		t.Fatalf("threads: %v %q", err, r.stdout)
	}
	r = e.run("", "threads", "show", list[0]["id"].(string), "--format", "json")
	if !strings.Contains(r.stdout, "interrupted") || !strings.Contains(r.stdout, "one two") {
		t.Fatalf("partial answer not kept: %s", r.stdout)
	}
}
