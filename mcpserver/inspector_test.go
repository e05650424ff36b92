package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/datasource/demo"
)

// TestInspectorCLI drives the built binary with a third-party client, the MCP
// Inspector's command-line mode (npm @modelcontextprotocol/inspector): tools/list and
// tools/call over stdio, and over streamable HTTP with the token, without it and with
// a wrong one. Tests never reach the network, so the inspector is installed by
// mcpserver/inspector-test.sh, which runs this test with
// NODIUS_AI_TEST_INSPECTOR set to the installed mcp-inspector; without it the test
// is skipped.
func TestInspectorCLI(t *testing.T) {
	inspector := os.Getenv("NODIUS_AI_TEST_INSPECTOR")
	if inspector == "" {
		t.Skip("NODIUS_AI_TEST_INSPECTOR is not set: run mcpserver/inspector-test.sh (installs the MCP Inspector from npm)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the MCP Inspector needs it")
	}
	bin := binary(t)
	dir := t.TempDir()
	graph := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(graph, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "threads.db")
	env := isolatedEnv(t)
	serverArgs := []string{"mcp", "--source", "file:" + graph, "--db", db}

	// inspect runs the inspector's CLI mode; the JSON it prints is decoded into out.
	inspect := func(t *testing.T, args ...string) (string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, inspector, append([]string{"--cli"}, args...)...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	decode := func(t *testing.T, out string, into any) {
		t.Helper()
		start := strings.IndexByte(out, '{')
		if start < 0 || json.Unmarshal([]byte(out[start:]), into) != nil {
			t.Fatalf("inspector output is not the JSON expected:\n%s", out)
		}
	}
	type toolList struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	type callResult struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	checkList := func(t *testing.T, out string) {
		t.Helper()
		var l toolList
		decode(t, out, &l)
		names := map[string]bool{}
		for _, tl := range l.Tools {
			names[tl.Name] = true
		}
		for _, want := range append(append([]string{"graph_context"}, readTools...), writeTools...) {
			if !names[want] {
				t.Errorf("tools/list lacks %s: %v", want, names)
			}
		}
	}

	t.Run("stdio", func(t *testing.T) {
		stdio := append([]string{bin}, serverArgs...)
		out, err := inspect(t, append(stdio, "--method", "tools/list")...)
		if err != nil {
			t.Fatalf("tools/list: %v\n%s", err, out)
		}
		checkList(t, out)

		out, err = inspect(t, append(stdio, "--method", "tools/call", "--tool-name", "read_node_detail", "--tool-arg", "nodeKey=fetch-api")...)
		var res callResult
		if decode(t, out, &res); err != nil || res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "key: fetch-api") {
			t.Fatalf("read_node_detail: %v\n%s", err, out)
		}
		out, err = inspect(t, append(stdio, "--method", "tools/call", "--tool-name", "read_node_detail")...)
		res = callResult{}
		if decode(t, out, &res); err != nil || !res.IsError || !strings.Contains(res.Content[0].Text, `missing required argument "nodeKey"`) {
			t.Fatalf("read_node_detail without arguments: %v\n%s", err, out)
		}
		out, err = inspect(t, append(stdio, "--method", "tools/call", "--tool-name", "propose_move_node",
			"--tool-arg", "nodeKey=root", "--tool-arg", "posX=10", "--tool-arg", "posY=20", "--tool-arg", "reason=tidy")...)
		res = callResult{}
		if decode(t, out, &res); err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "not applied") {
			t.Fatalf("propose_move_node: %v\n%s", err, out)
		}
		if m := regexp.MustCompile(`nodius-ai approve (ai_\S+)`).FindStringSubmatch(res.Content[0].Text); m == nil {
			t.Errorf("no approve command in %s", res.Content[0].Text)
		}
		if n := fileNodes(t, graph)["root"]; n["posX"] == 10.0 {
			t.Error("the proposal was applied without approval")
		}
	})

	t.Run("http", func(t *testing.T) {
		srv := exec.Command(bin, append(serverArgs, "--http", "127.0.0.1:0")...)
		srv.Env = env
		stderr, err := srv.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		lines := make(chan string, 10)
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
			done <- srv.Wait()
		}()
		t.Cleanup(func() { _ = srv.Process.Kill() })
		var url, token string
		timeout := time.After(30 * time.Second)
		for url == "" || token == "" {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("the server ended before printing its address and token")
				}
				if m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+/mcp)`).FindStringSubmatch(l); m != nil {
					url = m[1]
				}
				if v, ok := strings.CutPrefix(l, "nodius-ai: bearer token: "); ok {
					token = v
				}
			case <-timeout:
				t.Fatal("no address and token on stderr within 30 s")
			}
		}
		go func() {
			for range lines { // keep the server's stderr flowing
			}
		}()
		auth := []string{"--header", "Authorization: Bearer " + token}
		out, err := inspect(t, append([]string{url, "--transport", "http", "--method", "tools/list"}, auth...)...)
		if err != nil {
			t.Fatalf("tools/list with the token: %v\n%s", err, out)
		}
		checkList(t, out)
		out, err = inspect(t, append([]string{url, "--transport", "http", "--method", "tools/call", "--tool-name", "graph_context",
			"--tool-arg", "question=what happens when the API call fails?"}, auth...)...)
		var res callResult
		if decode(t, out, &res); err != nil || res.IsError || !strings.Contains(res.Content[0].Text, "error-handler") {
			t.Fatalf("graph_context with the token: %v\n%s", err, out)
		}
		for name, args := range map[string][]string{
			"without the token": {url, "--transport", "http", "--method", "tools/list"},
			"with a wrong one":  {url, "--transport", "http", "--method", "tools/call", "--tool-name", "read_node_detail", "--tool-arg", "nodeKey=fetch-api", "--header", "Authorization: Bearer wrong"},
		} {
			out, err := inspect(t, args...)
			if err == nil || strings.Contains(out, "key: fetch-api") || !strings.Contains(out, "bearer token") {
				t.Errorf("%s: err %v, output:\n%s", name, err, out)
			}
		}
		_ = srv.Process.Signal(syscall.SIGINT)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server exit after SIGINT: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server still running 10 s after SIGINT")
		}
	})
}
