package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

// TestChatTypingNeverDecidesInATerminal runs the built binary in tmux with a
// deletion left pending (esc), types words full of decision letters at 30, 80, 150
// and 250 ms per key, and checks that every character lands in the input and that
// nothing was decided: the graph file keeps fetch-api and the proposal stays pending.
// Then ctrl+p reopens it and, after a pause, r rejects it: the screen says so with
// no success mark.
func TestChatTypingNeverDecidesInATerminal(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	dir := t.TempDir()
	bin := nodiusBinary(t)
	graph := filepath.Join(dir, "graph.json")
	if err := os.WriteFile(graph, demo.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.Start(t,
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "d1", Name: "propose_delete_node", Arguments: `{"nodeKey":"fetch-api","reason":"it is no longer used"}`}}},
		llmtest.Turn{Text: "Kept fetch-api."})
	env := []string{"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
		"NODIUS_AI_DB=" + filepath.Join(dir, "threads.db"), "NODIUS_AI_SOURCE=file:" + graph, "NO_COLOR=1", "TERM=xterm-256color",
		"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_STATE_HOME=" + dir, "HOME=" + dir}
	term := tmuxtest.Start(t, 100, 32, dir, env, bin, "chat", "--graph", "demo")
	term.Wait("New conversation")
	term.Type("remove fetch-api")
	term.Keys("Enter")
	term.Wait("Proposed change")
	time.Sleep(600 * time.Millisecond) // past the dialog's key guard
	term.Keys("Escape")
	term.Wait("press ctrl+p to review")

	inputLine := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "┃") {
				return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "┃"))
			}
		}
		return ""
	}
	for _, every := range []time.Duration{30, 80, 150, 250} {
		for _, word := range []string{"print all", "reject all", "approve", "a", "yes"} {
			for _, r := range word {
				term.Type(string(r))
				time.Sleep(every * time.Millisecond)
			}
			// Wait for the word in the input (not just anywhere on screen: "a" is
			// everywhere) or for the dialog, then for the last frame to be drawn.
			decided := func(s string) bool {
				return strings.Contains(s, "Proposed change") || strings.Contains(s, "approved") || strings.Contains(s, "rejected")
			}
			term.Until(fmt.Sprintf("%q in the input", word), func(s string) bool { return inputLine(s) == word || decided(s) })
			s := term.Settle()
			if got := inputLine(s); got != word {
				t.Fatalf("typing %q at %d ms per key: the input holds %q:\n%s", word, every, got, s)
			}
			if decided(s) {
				t.Fatalf("typing %q at %d ms per key reached the proposal:\n%s", word, every, s)
			}
			term.Keys("Escape") // clears the input
			term.Until("an empty input", func(s string) bool { return strings.HasPrefix(inputLine(s), "Ask about the graph") })
		}
	}
	if b, _ := os.ReadFile(graph); !bytes.Contains(b, []byte(`"fetch-api"`)) {
		t.Fatal("fetch-api was deleted by typing")
	}
	cmd := exec.Command(bin, "threads", "list", "--format", "json")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("threads list: %v", err)
	}
	var list []struct{ ID string }
	if err := json.Unmarshal(out, &list); err != nil || len(list) != 1 {
		t.Fatalf("threads: %s", out)
	}
	cmd = exec.Command(bin, "threads", "show", list[0].ID, "--format", "json")
	cmd.Env = append(os.Environ(), env...)
	out, _ = cmd.Output()
	if !bytes.Contains(out, []byte(`"decision": "pending"`)) && !bytes.Contains(out, []byte(`"decision":"pending"`)) {
		t.Fatalf("the proposal is no longer pending:\n%s", out)
	}

	// ctrl+p reopens it; after a pause, r rejects it: no ✓ on the rejected call.
	term.Keys("C-p")
	term.Wait("Proposed change")
	time.Sleep(600 * time.Millisecond)
	term.Keys("r")
	s := term.Wait("Kept fetch-api.")
	if !strings.Contains(s, "× rejected delete node") || strings.Contains(s, "✓ propose_delete_node") || strings.Contains(s, "waiting for your decision") {
		t.Fatalf("after the rejection:\n%s", s)
	}
}
