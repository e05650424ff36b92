package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

// TestChatTmuxEndToEnd builds the binary, runs `chat --graph demo` in tmux against
// the fake provider, asks a question, waits for the answer on screen, approves the
// proposal of a second question with `a`, and checks the screen and the thread.
func TestChatTmuxEndToEnd(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	dir := t.TempDir()
	bin := nodiusBinary(t)
	srv := llmtest.Start(t,
		llmtest.Turn{Text: "fetch-api calls the NBA stats endpoint and hands the games to the filter."},
		llmtest.Turn{ToolCalls: []llmtest.ToolCall{{Name: "propose_delete_node",
			Arguments: `{"nodeKey":"fetch-api","reason":"it is no longer used"}`}}},
		llmtest.Turn{Text: "Done: fetch-api was deleted."},
	)
	db := filepath.Join(dir, "threads.db")
	env := []string{"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
		"NODIUS_AI_DB=" + db, "NODIUS_AI_SOURCE=demo", "NO_COLOR=1", "TERM=xterm-256color",
		"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "HOME=" + dir}
	term := tmuxtest.Start(t, 100, 32, dir, env, bin, "chat", "--graph", "demo")

	term.Wait("New conversation")
	term.Type("what does fetch-api do?")
	term.Keys("Enter")
	t.Logf("answer:\n%s", term.Wait("hands the games to the filter"))

	term.Type("delete @fetch-api ") // the space closes the completion menu
	term.Keys("Enter")
	t.Logf("proposal dialog:\n%s", term.Wait("Proposed change"))
	time.Sleep(500 * time.Millisecond) // past the dialog's key guard
	term.Keys("a")
	// The answer can show a frame before the decision line turns from "approving"
	// to "approved": wait for both.
	term.Wait("fetch-api was deleted", "✓ approved and applied: delete node")
	term.Keys("C-c")
	term.Wait("EXITED") // the process exited and closed the database

	// The thread holds the whole exchange.
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

// TestChatShowsWhatAnExportLacks: a Nodius export opened in the chat says on the
// welcome what it said on stderr before the screen took over — read-only, and which
// node types' code is unknown — and a question about one of its nodes is answered.
func TestChatShowsWhatAnExportLacks(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	dir := t.TempDir()
	bin := nodiusBinary(t)
	data, err := os.ReadFile(filepath.Join("..", "..", "datasource", "ndex", "testdata", "07-export-graph.ndex"))
	if err != nil {
		t.Fatal(err)
	}
	export := filepath.Join(dir, "team.ndex")
	if err := os.WriteFile(export, data, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := llmtest.Start(t, llmtest.Turn{Text: "fetch_api calls the sportsdata API."})
	env := []string{"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
		"NODIUS_AI_DB=" + filepath.Join(dir, "threads.db"), "NODIUS_AI_SOURCE=file:" + export, "NO_COLOR=1", "TERM=xterm-256color",
		"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "HOME=" + dir}
	term := tmuxtest.Start(t, 110, 32, dir, env, bin, "chat")
	term.Wait("New conversation", "read-only", `"api-call"`, "code of their nodes is unknown")
	term.Type("what does fetch_api do?")
	term.Keys("Enter")
	term.Wait("calls the sportsdata API")
	term.Keys("C-c")
	term.Wait("EXITED")
}
