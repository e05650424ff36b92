package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/datasource/demo"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

// longRewrite is a propose_update_node rewriting fetch-api's ~40 lines of code,
// with its last line and its reason easy to find on screen.
func longRewrite(t *testing.T) string {
	t.Helper()
	var code []string
	code = append(code, "// Fetch season averages, v2 API.")
	for i := 1; i <= 38; i++ {
		code = append(code, fmt.Sprintf("const step%d = await stage(%d, { retries: 3 }); // stage %d of the v2 fetch", i, i, i))
	}
	code = append(code, "next(0, step38); // LASTLINE of the new code")
	args, err := json.Marshal(map[string]any{"mode": "update", "typeKey": "api-call", "displayName": "API Call",
		"process": strings.Join(code, "\n"), "reason": "REASONTEXT the stats API moved to v2"})
	if err != nil {
		t.Fatal(err)
	}
	return string(args)
}

// A long code change, asked on a file source and reviewed with `chat --thread ID`
// while the configured source is the demo graph, at 40×18 and 80×24: the header
// and the dialog name the thread's file, the Reason and the last line are reached
// by scrolling (j held down types nothing), and a approves: the file gets the code.
func TestChatLongChangeOnTheThreadsSource(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	bin := nodiusBinary(t)
	for _, sz := range [][2]int{{40, 18}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			graph := filepath.Join(dir, "players.json")
			if err := os.WriteFile(graph, demo.JSON(), 0o644); err != nil {
				t.Fatal(err)
			}
			srv := llmtest.Start(t,
				llmtest.Turn{ToolCalls: []llmtest.ToolCall{{ID: "u1", Name: "propose_configure_node_type", Arguments: longRewrite(t)}}},
				llmtest.Turn{Text: "Updated fetch-api."})
			env := []string{"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
				"NODIUS_AI_DB=" + filepath.Join(dir, "threads.db"), "NO_COLOR=1", "TERM=xterm-256color",
				"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_STATE_HOME=" + dir, "HOME=" + dir}
			ask := exec.Command(bin, "ask", "--source", "file:"+graph, "--graph", "demo", "move fetch-api to v2")
			ask.Env = append(os.Environ(), env...)
			out, _ := ask.CombinedOutput()
			id := regexp.MustCompile(`nodius-ai approve (\S+)`).FindStringSubmatch(string(out))
			if ask.ProcessState.ExitCode() != 3 || id == nil {
				t.Fatalf("ask: exit %d\n%s", ask.ProcessState.ExitCode(), out)
			}

			term := tmuxtest.Start(t, sz[0], sz[1], dir, env, bin, "chat", "--thread", id[1])
			term.Wait("ctrl+p to")
			term.Keys("C-p")
			s := term.Until("the proposal on the thread's file", func(s string) bool {
				return strings.Contains(s, "Proposed change") && strings.Contains(dialogText(s), "players.json")
			})
			if !strings.Contains(s, "Stats Workflow") {
				t.Fatalf("not the thread's graph:\n%s", s)
			}
			t.Logf("%dx%d, opened:\n%s", sz[0], sz[1], s)
			seen, prev, same := s, "", 0
			for range 400 {
				term.Type("j")
				if s = term.Settle(); s == prev {
					if same++; same == 3 {
						break // the end: j moves nothing any more
					}
					continue
				}
				same = 0
				if !strings.Contains(dialogText(s), "players.json") {
					t.Fatalf("the source is off screen while deciding:\n%s", s)
				}
				seen, prev = seen+s, s
			}
			t.Logf("%dx%d, at the end:\n%s", sz[0], sz[1], s)
			for _, want := range []string{"REASONTEXT", "LASTLINE", "stage 20 of", "~ changed"} {
				if !strings.Contains(seen, want) {
					t.Errorf("%q never shown", want)
				}
			}
			if strings.Contains(s, "more line") {
				t.Fatalf("the end of the change is not reachable:\n%s", s)
			}
			if strings.Contains(s, "┃ j") || strings.Contains(s, "┃ jj") {
				t.Fatalf("scrolling typed into the input:\n%s", s)
			}
			time.Sleep(600 * time.Millisecond) // past the dialog's key guard
			term.Keys("a")
			term.Wait("Updated fetch-api.")
			if b, _ := os.ReadFile(graph); !strings.Contains(string(b), "LASTLINE of the new code") {
				t.Fatal("the thread's file did not get the new code")
			}
		})
	}
}

// dialogText is the text inside the dialog's frame, its lines joined, so that a
// path wrapped over two lines reads whole.
func dialogText(screen string) string {
	var b strings.Builder
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "│") && strings.HasSuffix(l, "│") {
			b.WriteString(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, "│"), "│")))
		}
	}
	return b.String()
}
