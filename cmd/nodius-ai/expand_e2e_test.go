package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// writeConfig writes the environment's config file (config.toml) with text.
func (e *env) writeConfig(text string) {
	e.t.Helper()
	p := filepath.Join(e.dir, "config", "nodius-ai", "config.toml")
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// withExpansion writes a config file turning on retrieval.expand = "llm".
func (e *env) withExpansion() {
	e.t.Helper()
	e.writeConfig("[retrieval]\nexpand = \"llm\"\n")
}

// TestAskExpansion: with retrieval.expand = "llm", a new question first makes one
// small non-streamed call; its tokens are a usage event of their own and count in
// the thread's totals; the same question asked again (a new process) makes no call.
func TestAskExpansion(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Turn{Text: "html, web page, display, afficher, page", Usage: &llmtest.Usage{PromptTokens: 80, CompletionTokens: 20}},
		llmtest.Turn{Text: "display-html renders it.", Usage: &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 50}},
		llmtest.Turn{Text: "Again.", Usage: &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 50}})
	e.withExpansion()
	const q = "which step shows the result to people"
	r := e.run("", "ask", "--graph", "demo", "--format", "json", q)
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	evs := events(t, r.stdout)
	if got, want := types(evs), "thread,usage,token,token,token,usage,complete"; got != want {
		t.Fatalf("events %s, want %s", got, want)
	}
	if evs[1]["prompt_tokens"] != 80.0 || evs[1]["completion_tokens"] != 20.0 {
		t.Errorf("expansion usage %v", evs[1])
	}
	reqs := e.srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests, want 2", len(reqs))
	}
	if x := reqs[0]; x.Stream || len(x.Tools) != 0 || x.MaxTokens <= 0 || x.MaxTokens > 200 || x.Messages[len(x.Messages)-1].Content != q {
		t.Errorf("expansion request: stream %v, tools %v, max_tokens %d, messages %+v", x.Stream, x.Tools, x.MaxTokens, x.Messages)
	}
	// The expansion found the node the question means: it is in the context sent.
	if ctx := reqs[1].Messages[1].Content; !strings.Contains(ctx, "display-html") {
		t.Errorf("context sent without display-html:\n%s", ctx)
	}

	list := e.run("", "threads", "list", "--format", "json")
	if !strings.Contains(list.stdout, `"prompt_tokens": 1080`) && !strings.Contains(list.stdout, `"prompt_tokens":1080`) {
		t.Errorf("thread totals do not count the expansion:\n%s", list.stdout)
	}

	r = e.run("", "ask", "--graph", "demo", "--format", "json", q)
	if r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	if got, want := types(events(t, r.stdout)), "thread,token,usage,complete"; got != want {
		t.Errorf("second ask events %s, want %s (no expansion call)", got, want)
	}
	if n := len(e.srv.ChatRequests()); n != 3 {
		t.Errorf("%d chat requests after the same question again, want 3", n)
	}
}

// TestAskExpansionFailureFallsBack: the expansion call fails; the question is
// answered anyway, searched as asked, with a warning on stderr.
func TestAskExpansionFailureFallsBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Status: 500}, llmtest.Turn{Text: "fetch-api calls the API."})
	e.withExpansion()
	r := e.run("", "ask", "--graph", "demo", "what does fetch-api do?")
	if r.code != 0 || r.stdout != "fetch-api calls the API.\n" {
		t.Fatalf("code %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: the question was searched without expansion") {
		t.Errorf("stderr %q lacks the warning", r.stderr)
	}
	if reqs := e.srv.ChatRequests(); len(reqs) != 2 || !reqs[1].Stream {
		t.Errorf("%d requests", len(reqs))
	}
}

// TestAskWithoutExpansionByDefault: no config, no expansion call.
func TestAskWithoutExpansionByDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, llmtest.Turn{Text: "ok"})
	if r := e.run("", "ask", "--graph", "demo", "which step shows the result"); r.code != 0 {
		t.Fatalf("code %d stderr %s", r.code, r.stderr)
	}
	if reqs := e.srv.ChatRequests(); len(reqs) != 1 || !reqs[0].Stream {
		t.Errorf("requests %+v, want one streamed call", reqs)
	}
	cfg := e.run("", "config")
	if !strings.Contains(cfg.stdout, "retrieval.expand") || !strings.Contains(cfg.stdout, "off") {
		t.Errorf("config does not list retrieval.expand:\n%s", cfg.stdout)
	}
}

// TestMCPGraphContextIsNotExpanded: with retrieval.expand = "llm", the MCP server's
// graph_context searches the question as the client's agent worded it, with no model
// call (its tokens would be counted nowhere), while ask, configured the same, still
// expands and counts the call.
func TestMCPGraphContextIsNotExpanded(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		llmtest.Turn{Text: "html, web page, display, afficher, page", Usage: &llmtest.Usage{PromptTokens: 80, CompletionTokens: 20}},
		llmtest.Turn{Text: "display-html renders it.", Usage: &llmtest.Usage{PromptTokens: 1000, CompletionTokens: 50}})
	e.withExpansion()
	const q = "which step shows the result to people"

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "mcp", "--graph", "demo")
	cmd.Env = e.vars
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "expansion-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	for _, question := range []string{q, "what handles errors"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "graph_context", Arguments: map[string]any{"question": question}})
		if err != nil || res.IsError {
			t.Fatalf("graph_context: %v %+v\n%s", err, res, stderr.String())
		}
	}
	cs.Close()
	if n := len(e.srv.ChatRequests()); n != 0 {
		t.Fatalf("graph_context made %d model calls, want none", n)
	}

	r := e.run("", "ask", "--graph", "demo", "--format", "json", q)
	if r.code != 0 {
		t.Fatalf("ask: code %d stderr %s", r.code, r.stderr)
	}
	if got, want := types(events(t, r.stdout)), "thread,usage,token,token,token,usage,complete"; got != want {
		t.Fatalf("ask events %s, want %s (the expansion's usage first)", got, want)
	}
	if reqs := e.srv.ChatRequests(); len(reqs) != 2 || reqs[0].Stream {
		t.Fatalf("ask made %d model calls, want the expansion then the answer", len(reqs))
	}
}
