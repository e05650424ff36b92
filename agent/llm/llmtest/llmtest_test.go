package llmtest_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

func TestWords(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"fetchApi":       "fetch api",
		"fetch-api":      "fetch api",
		"fetch_api v2":   "fetch api v2",
		"HTML page":      "html page",
		"  ":             "",
		"Données brutes": "données brutes",
	}
	for in, want := range tests {
		if got := strings.Join(llmtest.Words(in), " "); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	a, b := llmtest.Vector("fetch api", 32), llmtest.Vector("fetchApi", 32)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("vectors differ at %d", i)
		}
	}
}

// TestProcess runs fakellm as a process, as end-to-end tests do.
func TestProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakellm")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/fakellm").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	script := filepath.Join(dir, "s.json")
	if err := os.WriteFile(script, []byte(`[{"text":"hello from the process"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--script", script, "--record", filepath.Join(dir, "req.ndjson"))
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSpace(line)
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Post(base+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		body.WriteString(sc.Text() + "\n")
	}
	resp.Body.Close()
	if !strings.Contains(body.String(), `"content":"process"`) || !strings.HasSuffix(body.String(), "data: [DONE]\n\n") {
		t.Errorf("stream:\n%s", body.String())
	}
	resp, err = cl.Get(base + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	var reqs []llmtest.Request
	_ = json.NewDecoder(resp.Body).Decode(&reqs)
	resp.Body.Close()
	if len(reqs) != 1 || reqs[0].Messages[0].Content != "hi" || reqs[0].Turn != 0 {
		t.Errorf("requests %+v", reqs)
	}
	rec, _ := os.ReadFile(filepath.Join(dir, "req.ndjson"))
	if !strings.Contains(string(rec), `"content":"hi"`) {
		t.Errorf("record file: %s", rec)
	}
}
