package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/nodius/nodius-ai/datasource/demo"
)

// TestMCPUsageErrors: bad flags are refused with one sentence and exit 2, before
// anything is served.
func TestMCPUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"network address", []string{"mcp", "--http", "0.0.0.0:8765"}, "not a loopback address"},
		{"any interface", []string{"mcp", "--http", ":8765"}, "not a loopback address"},
		{"no port", []string{"mcp", "--http", "127.0.0.1"}, "127.0.0.1:8765"},
		{"token without http", []string{"mcp", "--token", "abc"}, "--token goes with --http"},
		{"unknown graph", []string{"mcp", "--graph", "nope"}, `no graph "nope"`},
		{"stray argument", []string{"mcp", "serve"}, "takes no arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := runCLI(t, "", nil, tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) || out != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errOut, tc.want)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") > 1 {
				t.Errorf("more than a sentence: %q", errOut)
			}
		})
	}
}

// mcpEnv is one person's environment with a graph file and a threads database.
func mcpEnv(t *testing.T) (env map[string]string, graph string) {
	t.Helper()
	dir := t.TempDir()
	graph = filepath.Join(dir, "graph.json")
	if err := os.WriteFile(graph, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"HOME": dir, "XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": dir, "XDG_STATE_HOME": dir,
		"NODIUS_AI_DB": filepath.Join(dir, "threads.db")}, graph
}

// TestMCPStdioCommand: the command speaks MCP on its stdin/stdout (nothing else on
// stdout), a proposal's result names the commands that decide it on this file and
// database, and the command ends with exit 0 when the client hangs up.
func TestMCPStdioCommand(t *testing.T) {
	t.Parallel()
	env, graph := mcpEnv(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut strings.Builder
	ios := &IOStreams{In: inR, Out: outW, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }}
	done := make(chan int, 1)
	go func() {
		code := Execute(context.Background(), ios, []string{"mcp", "--source", "file:" + graph})
		outW.Close()
		done <- code
	}()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "pipe-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_node_detail", Arguments: map[string]any{"nodeKey": "fetch-api"}})
	if err != nil || res.IsError {
		t.Fatalf("read_node_detail: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "propose_move_node",
		Arguments: map[string]any{"nodeKey": "root", "posX": 5, "posY": 6, "reason": "tidy"}})
	if err != nil || res.IsError {
		t.Fatalf("propose_move_node: %v %+v", err, res)
	}
	msg := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(msg, "--source file:"+graph+" --db "+env["NODIUS_AI_DB"]) || !strings.Contains(msg, "nodius-ai approve ai_") {
		t.Errorf("decide hint does not reach this file and database: %s", msg)
	}
	if strings.Contains(msg, "demo graph, which lives in its memory") {
		t.Errorf("file source got the demo note: %s", msg)
	}
	cs.Close()
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d, stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcp did not end when the client hung up")
	}
}

// syncBuffer is a strings.Builder safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMCPHTTPCommand: --http on port 0 prints the address and a generated token;
// requests need the token; interrupting the command ends it with exit 0.
func TestMCPHTTPCommand(t *testing.T) {
	t.Parallel()
	env, graph := mcpEnv(t)
	var errOut syncBuffer
	ios := &IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- Execute(ctx, ios, []string{"mcp", "--source", "file:" + graph, "--http", "127.0.0.1:0"})
	}()

	urlRe := regexp.MustCompile(`serving MCP at (http://127\.0\.0\.1:\d+/mcp)`)
	tokRe := regexp.MustCompile(`bearer token: (\S+)`)
	var url, token string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		s := errOut.String()
		if m, k := urlRe.FindStringSubmatch(s), tokRe.FindStringSubmatch(s); m != nil && k != nil {
			url, token = m[1], k[1]
			break
		}
	}
	if url == "" || len(token) < 32 {
		t.Fatalf("no address and token on stderr: %q", errOut.String())
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(bufio.NewReader(resp.Body))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), "Authorization: Bearer") {
		t.Errorf("without the token: %d %q", resp.StatusCode, body)
	}
	hc := &http.Client{Transport: bearer{token}}
	client := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 19 {
		t.Fatalf("tools/list over HTTP: %v, %d tools", err, len(tools.Tools))
	}
	cs.Close()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after interrupt, stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("mcp --http did not stop when interrupted")
	}
}

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}
