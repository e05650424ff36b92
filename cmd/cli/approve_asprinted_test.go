package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nodius/nodius-ai/agent/convo"
	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/threads"
)

// proposeLog is a model turn that proposes one node.
var proposeLog = llmtest.Turn{Text: "I suggest a log node.", ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "propose_create_node",
	Arguments: `{"nodeKey":"log-result","typeKey":"log-node","sheet":"0","posX":900,"posY":100,"reason":"log the rendered table"}`}}}

// decideLine returns the approve command of a "Decide with:" line, split into
// arguments (the printed command holds no quoted value here).
func decideLine(t *testing.T, stderr string) []string {
	t.Helper()
	m := regexp.MustCompile(`Decide with: (nodius-ai approve .*?)   or   `).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no decide command printed:\n%s", stderr)
	}
	args := strings.Fields(m[1])
	return args[1:]
}

func graphCopy(t *testing.T) string {
	t.Helper()
	g := filepath.Join(t.TempDir(), "graph.json")
	if err := os.WriteFile(g, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	return g
}

func hasNode(t *testing.T, graph, key string) bool {
	t.Helper()
	b, err := os.ReadFile(graph)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), `"`+key+`"`)
}

// The command `ask` prints to decide, run as printed in the same environment,
// applies and continues (exit 0), though the model was chosen with flags; run again,
// it says the approval landed and exits 0.
func TestApproveRunsAsPrinted(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, proposeLog, llmtest.Turn{Text: "Created log-result."})
	graph := graphCopy(t)
	db := filepath.Join(t.TempDir(), "threads.db")
	_, stderr, code := runCLI(t, "", nil, "ask", "--db", db, "--source", "file:"+graph, "--graph", "demo",
		"--base-url", srv.OpenAIURL(), "--model", "fake", "log the rendered table")
	if code != ExitProposal {
		t.Fatalf("ask: exit %d, want 3:\n%s", code, stderr)
	}
	approve := decideLine(t, stderr)
	stdout, stderr, code := runCLI(t, "", nil, approve...)
	if code != 0 || !strings.Contains(stdout, "Created log-result.") || !hasNode(t, graph, "log-result") {
		t.Fatalf("%v: exit %d, want 0 with the change applied and the answer:\n%s%s", approve, code, stdout, stderr)
	}
	stdout, stderr, code = runCLI(t, "", nil, approve...)
	if code != 0 || !strings.Contains(stderr, "already approved and applied") || stdout != "" {
		t.Fatalf("%v again: exit %d, want 0 saying it had landed:\n%s%s", approve, code, stdout, stderr)
	}
}

// A thread remembers the endpoint it ran with: approve with no model configured at
// all goes on with it; with flags, environment or a config file naming one, that one wins.
func TestApproveContinuesWithTheThreadsModel(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, proposeLog, llmtest.Turn{Text: "Created log-result."})
	graph := graphCopy(t)
	env := map[string]string{"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db")}
	_, stderr, code := runCLI(t, "", env, "ask", "--source", "file:"+graph, "--graph", "demo",
		"--base-url", srv.OpenAIURL(), "--model", "fake", "log the rendered table")
	if code != ExitProposal {
		t.Fatalf("ask: exit %d:\n%s", code, stderr)
	}
	id := decideLine(t, stderr)[1]
	s, err := threads.Open(context.Background(), env["NODIUS_AI_DB"], threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.ThreadLLM(context.Background(), id)
	_ = s.Close()
	if err != nil || l != (threads.LLM{Provider: "custom", Model: "fake", BaseURL: srv.OpenAIURL()}) {
		t.Fatalf("the thread records %+v, %v", l, err)
	}
	short := strings.TrimPrefix(id, "ai_")[:threads.MinPrefix]
	stdout, stderr, code := runCLI(t, "", env, "approve", short)
	if code != 0 || !strings.Contains(stdout, "Created log-result.") || !hasNode(t, graph, "log-result") {
		t.Fatalf("approve %s: exit %d, want 0:\n%s%s", short, code, stdout, stderr)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("the fake model got %d requests, want 2 (the question, the turn after the approval)", n)
	}
}

// With no model it could go on with, approve refuses before applying (exit 2,
// nothing applied, the proposal still pending); it never applies and then fails.
func TestApproveWithoutModelRefusesBeforeApplying(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, proposeLog, llmtest.Turn{Text: "Created log-result."})
	graph := graphCopy(t)
	env := map[string]string{"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db")}
	_, stderr, code := runCLI(t, "", mergeEnv(env, "OPENAI_API_KEY", "sk-test"), "ask", "--source", "file:"+graph, "--graph", "demo",
		"--provider", "openai", "--base-url", srv.OpenAIURL(), "--model", "fake", "log the rendered table")
	if code != ExitProposal {
		t.Fatalf("ask: exit %d:\n%s", code, stderr)
	}
	id := decideLine(t, stderr)[1]
	_, stderr, code = runCLI(t, "", env, "approve", id) // no OPENAI_API_KEY now
	if code != ExitUsage || !strings.Contains(stderr, "nothing was decided") || hasNode(t, graph, "log-result") {
		t.Fatalf("approve without a key: exit %d, want 2 with nothing applied:\n%s", code, stderr)
	}
	s, err := threads.Open(context.Background(), env["NODIUS_AI_DB"], threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p, err := s.PendingProposal(context.Background(), id); err != nil || p == nil {
		t.Fatalf("the proposal is no longer pending: %v, %v", p, err)
	}
}

// When the change landed but the assistant cannot answer after it, approve says
// "applied", how to let it go on, and exits 0.
func TestApproveAppliedThoughTheModelFails(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, proposeLog, llmtest.Turn{Status: 401})
	graph := graphCopy(t)
	db := filepath.Join(t.TempDir(), "threads.db")
	_, stderr, code := runCLI(t, "", nil, "ask", "--db", db, "--source", "file:"+graph, "--graph", "demo",
		"--base-url", srv.OpenAIURL(), "--model", "fake", "log the rendered table")
	if code != ExitProposal {
		t.Fatalf("ask: exit %d:\n%s", code, stderr)
	}
	approve := decideLine(t, stderr)
	_, stderr, code = runCLI(t, "", nil, approve...)
	if code != 0 || !hasNode(t, graph, "log-result") || !strings.Contains(stderr, "nodius-ai: applied create node log-result") ||
		!strings.Contains(stderr, "nodius-ai ask --thread "+approve[1]+" --db "+db) {
		t.Fatalf("approve with a failing model: exit %d, want 0 saying applied and how to go on:\n%s", code, stderr)
	}
	th := approve[1]
	s, err := threads.Open(context.Background(), db, threads.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if p, err := s.Proposal(context.Background(), th, "call_1"); err != nil || p.Decision != convo.Approved {
		t.Fatalf("proposal: %+v, %v", p, err)
	}
}

// threads search finds a proposal by the words of its reason.
func TestThreadsSearchFindsAReason(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "call_1", Name: "propose_create_node",
		Arguments: `{"nodeKey":"log-result","typeKey":"log-node","sheet":"0","reason":"un journaliste écrit le tableau"}`}}})
	env := map[string]string{"NODIUS_AI_DB": filepath.Join(t.TempDir(), "threads.db")}
	_, stderr, code := runCLI(t, "", env, "ask", "--source", "file:"+graphCopy(t), "--graph", "demo",
		"--base-url", srv.OpenAIURL(), "--model", "fake", "log the rendered table")
	if code != ExitProposal {
		t.Fatalf("ask: exit %d:\n%s", code, stderr)
	}
	stdout, stderr, code := runCLI(t, "", env, "threads", "search", "journaliste")
	if code != 0 || !strings.Contains(stdout, "proposal call_1: un journaliste écrit le tableau") {
		t.Fatalf("threads search: exit %d:\n%s%s", code, stdout, stderr)
	}
}

// The agent's own hint, when a thread still waits on a decision, names the flags
// the person typed: the approve it says to run reaches the same database and graph.
func TestPendingHintRunsAsPrinted(t *testing.T) {
	t.Parallel()
	srv := llmtest.Start(t, proposeLog, llmtest.Turn{Text: "Created log-result."})
	graph := graphCopy(t)
	db := filepath.Join(t.TempDir(), "threads.db")
	common := []string{"--db", db, "--source", "file:" + graph, "--base-url", srv.OpenAIURL(), "--model", "fake"}
	_, stderr, code := runCLI(t, "", nil, append([]string{"ask", "--graph", "demo", "log the rendered table"}, common...)...)
	if code != ExitProposal {
		t.Fatalf("ask: exit %d:\n%s", code, stderr)
	}
	id := decideLine(t, stderr)[1]
	_, stderr, code = runCLI(t, "", nil, append([]string{"ask", "--graph", "demo", "--thread", id, "and then?"}, common...)...)
	m := regexp.MustCompile(`run '(nodius-ai approve [^']*)'`).FindStringSubmatch(stderr)
	if code == 0 || m == nil {
		t.Fatalf("ask on a pending thread: exit %d, no approve command:\n%s", code, stderr)
	}
	args := strings.Fields(m[1])[1:]
	stdout, stderr, code := runCLI(t, "", nil, args...)
	if code != 0 || !hasNode(t, graph, "log-result") {
		t.Fatalf("%v: exit %d, want 0 with the change applied:\n%s%s", args, code, stdout, stderr)
	}
}
