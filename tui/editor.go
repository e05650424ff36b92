package tui

import (
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// editorDoneMsg carries what was written in $EDITOR.
type editorDoneMsg struct {
	text string
	err  error
}

// openEditor writes the current input to a temporary file, opens it in $VISUAL or
// $EDITOR (vi when neither is set), and hands back what was saved for the input,
// where it is read over before enter sends it: the TUI gives up the terminal for
// as long as the editor runs.
func openEditor(current string, getenv func(string) string) tea.Cmd {
	f, err := os.CreateTemp("", "nodius-ai-*.md")
	if err != nil {
		return emit(editorDoneMsg{err: err})
	}
	path := f.Name()
	_, werr := f.WriteString(current)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return emit(editorDoneMsg{err: werr})
	}
	editor := strings.TrimSpace(getenv("VISUAL"))
	if editor == "" {
		editor = strings.TrimSpace(getenv("EDITOR"))
	}
	if editor == "" {
		editor = "vi"
	}
	// The editor setting may carry arguments ("code --wait"): let the shell split it.
	cmd := exec.Command("sh", "-c", editor+` "$1"`, "editor", path)
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{err: err}
		}
		b, rerr := os.ReadFile(path)
		return editorDoneMsg{text: strings.TrimRight(string(b), "\n"), err: rerr}
	})
}
