package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
)

// TestChatTmuxEndToEnd builds the binary, runs `chat --graph demo` in tmux against
// the fake provider, asks a question, waits for the answer on screen, approves the
// proposal of a second question with `a`, and checks the screen and the thread.
func TestChatTmuxEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it); skipping the end-to-end chat test")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "nodius-ai") // not under XDG dirs: $XDG_CONFIG_HOME/nodius-ai is a directory
	build := exec.Command("go", "build", "-o", bin, "../nodius-ai")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	srv := llmtest.Start(t,
		llmtest.Turn{Text: "fetch-api calls the NBA stats endpoint and hands the games to the filter."},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{Name: "propose_delete_node",
			Arguments: `{"nodeKey":"fetch-api","reason":"it is no longer used"}`}}},
		llmtest.Turn{Text: "Done: fetch-api was deleted."},
	)
	db := filepath.Join(dir, "threads.db")
	session := fmt.Sprintf("nodius-e2e-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))
	env := []string{"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
		"NODIUS_AI_DB=" + db, "NODIUS_AI_SOURCE=demo", "NO_COLOR=1", "TERM=xterm-256color",
		"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "HOME=" + dir}
	// The pane outlives the program so a crash stays readable in the failure output.
	shell := "env " + strings.Join(env, " ") + " " + bin + " chat --graph demo 2>" + filepath.Join(dir, "stderr") + "; echo EXITED $?; sleep 60"
	tmux := func(args ...string) string {
		out, err := exec.Command("tmux", append([]string{"-L", session}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-s", session, "-x", "100", "-y", "32", shell)
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", session, "kill-server").Run() })

	screen := func() string { return tmux("capture-pane", "-p", "-t", session) }
	waitScreen := func(want string) string {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			s := screen()
			if strings.Contains(s, want) {
				return s
			}
			if time.Now().After(deadline) {
				stderr, _ := os.ReadFile(filepath.Join(dir, "stderr"))
				t.Fatalf("screen never showed %q:\n%s\nstderr: %s", want, s, stderr)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	waitScreen("New conversation")
	tmux("send-keys", "-t", session, "-l", "what does fetch-api do?")
	tmux("send-keys", "-t", session, "Enter")
	t.Logf("answer:\n%s", waitScreen("hands the games to the filter"))

	tmux("send-keys", "-t", session, "-l", "delete @fetch-api ") // the space closes the completion menu
	tmux("send-keys", "-t", session, "Enter")
	t.Logf("proposal dialog:\n%s", waitScreen("Proposed change"))
	time.Sleep(500 * time.Millisecond) // past the dialog's key guard
	tmux("send-keys", "-t", session, "a")
	s := waitScreen("fetch-api was deleted")
	if !strings.Contains(s, "✓ approved and applied: delete node") {
		t.Errorf("no decision line on screen:\n%s", s)
	}
	tmux("send-keys", "-t", session, "C-c")

	// The thread holds the whole exchange.
	time.Sleep(300 * time.Millisecond) // let the process exit and close the database
	cmd := exec.Command(bin, "threads", "list", "--graph", "demo", "--format", "json")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("threads list: %v\n%s", err, out)
	}
	var list []struct {
		ID       string `json:"id"`
		Messages int    `json:"messages"`
	}
	if err := json.Unmarshal(out, &list); err != nil || len(list) != 1 || list[0].Messages < 4 {
		t.Fatalf("threads list = %s (%v)", out, err)
	}
}
