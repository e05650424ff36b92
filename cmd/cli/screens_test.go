package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nodius/nodius-ai/agent/llm/llmtest"
	"github.com/nodius/nodius-ai/internal/tmuxtest"
)

// longAnswer is a markdown answer with what narrow terminals get wrong: a long
// paragraph, an indented code block with long lines, and a table.
const longAnswer = "## What fetch-api does\n\n" +
	"fetch-api calls the NBA stats endpoint with the season from the entry form, parses the JSON and hands the list of games to filter-active; on an HTTP error it goes to error-handler instead.\n\n" +
	"```python\ndef handler(event):\n    for player in event['players']:\n        if player['active'] and player['points_per_game'] > 20 and player['minutes'] > 30:\n            yield player\n```\n\n" +
	"| node | type | what it does |\n|---|---|---|\n| fetch-api | api-call | calls the stats endpoint |\n| filter-active | filter | keeps the active players |\n| display-html | html | renders the table |\n\n" +
	"That is the whole main sheet. LASTLINEMARK"

// TestChatScreensAtWidths runs the built binary in tmux at 40, 80 and 160 columns
// and captures the main screens — a long markdown answer, the proposal dialog, the
// thread picker, the help — checking that no line is cut or overflows, that boxes
// are whole, and that each screen shows what it must. NODIUS_AI_CAPTURES=DIR keeps
// the captures as files.
func TestChatScreensAtWidths(t *testing.T) {
	tmuxtest.Skip(t)
	t.Parallel()
	dir := t.TempDir()
	bin := nodiusBinary(t)
	editor := filepath.Join(dir, "editor.sh")
	os.WriteFile(editor, []byte("#!/bin/sh\nprintf 'written in the editor: what calls filter-active?' > \"$1\"\n"), 0o755)
	for _, size := range [][2]int{{40, 30}, {80, 30}, {160, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			screens(t, bin, editor, size[0], size[1])
		})
	}
}

func screens(t *testing.T, bin, editor string, w, h int) {
	dir := t.TempDir()
	srv := llmtest.Start(t,
		llmtest.Turn{Reasoning: "The user asks about fetch-api.", Text: longAnswer, ChunkWords: 5},
		llmtest.Turn{Text: "EDITOR-ANSWER: parse-games calls it."},
		llmtest.Turn{Text: "I suggest removing it.", ToolCalls: []llmtest.ToolCall{{Name: "propose_delete_node",
			Arguments: `{"nodeKey":"fetch-api","reason":"it is no longer used"}`}}},
	)
	env := []string{"NODIUS_AI_BASE_URL=" + srv.OpenAIURL(), "NODIUS_AI_API_KEY=test", "NODIUS_AI_MODEL=fake",
		"NODIUS_AI_DB=" + filepath.Join(dir, "threads.db"), "NODIUS_AI_SOURCE=demo", "NO_COLOR=1", "TERM=xterm-256color",
		"XDG_CONFIG_HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_STATE_HOME=" + dir, "HOME=" + dir, "EDITOR=" + editor}
	term := tmuxtest.Start(t, w, h, dir, env, bin, "chat", "--graph", "demo")
	keys := func(k ...string) {
		term.Keys(k...)
		time.Sleep(100 * time.Millisecond) // an Escape followed at once by a letter reads as alt+letter
	}
	text := term.Type
	wait := func(name string, want ...string) string {
		t.Helper()
		term.Wait(want...)
		s := term.Settle() // a frame being drawn is not checked half-way
		checkCapture(t, name, s, w, h)
		if d := os.Getenv("NODIUS_AI_CAPTURES"); d != "" {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("%03d-%s.txt", w, name)), []byte(s), 0o644)
		}
		return s
	}

	wait("welcome", "New conversation")
	text("what does fetch-api do?")
	keys("Enter")
	s := wait("answer", "LASTLINEMARK", "idle")
	for _, want := range []string{"thought for 5 words", "↪"} {
		if w < 80 && !strings.Contains(s+scrolledUp(term, keys), want) {
			t.Errorf("answer at %d columns lacks %q", w, want)
		}
	}
	keys("C-y")
	wait("copied", "copied the last answer")

	keys("?")
	wait("help", "Keys", "Writing")
	keys("Escape")
	wait("help-closed", "LASTLINEMARK")

	keys("C-o") // $EDITOR writes the question, which comes back to the input
	term.Wait("enter sends it")
	keys("Enter")
	wait("editor", "EDITOR-ANSWER")

	keys("C-t")
	wait("picker", "Threads", "ctrl+n new")
	keys("Escape")
	// An Escape and the next letter read together are alt+letter (a terminal cannot
	// tell them apart): on a loaded machine "d" would then never reach the input.
	term.Until("the picker closed", func(s string) bool { return !strings.Contains(s, "ctrl+n new") })

	text("delete @fetch-api ")
	keys("Enter")
	s = wait("dialog", "Proposed change", "later")
	if h >= 24 && !strings.Contains(s, "I suggest removing it") {
		t.Errorf("the dialog hides the explanation at %dx%d:\n%s", w, h, s)
	}
	time.Sleep(500 * time.Millisecond)
	keys("Escape")
	wait("pending", "proposal is waiting")
	keys("C-c")
}

// scrolledUp pages up once and returns the screen (then follows the end again).
func scrolledUp(term *tmuxtest.Term, keys func(...string)) string {
	keys("PPage")
	s := term.Settle()
	keys("End")
	return s
}

// checkCapture fails on a screen with a line wider than the terminal, a box whose
// sides do not line up, or a line cut mid-way by an ellipsis inside a box.
func checkCapture(t *testing.T, name, s string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > h {
		t.Errorf("%s at %d: %d lines for %d rows", name, w, len(lines), h)
	}
	left, right := -1, -1
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("%s at %d: line %d has %d columns: %q", name, w, i, n, l)
		}
		r := []rune(l)
		for j, c := range r {
			if c == '┌' {
				left = j
				for k := j; k < len(r); k++ {
					if r[k] == '┐' {
						right = k
					}
				}
			}
		}
		if left >= 0 && right > left && len(r) > left && r[left] == '│' {
			if len(r) <= right || r[right] != '│' {
				t.Errorf("%s at %d: line %d breaks the box (sides at %d and %d):\n%s", name, w, i, left, right, s)
				return
			}
		}
		if strings.Contains(l, "└") {
			left, right = -1, -1
		}
	}
}
