package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// copiedMsg reports a copy to the status bar.
type copiedMsg struct {
	what string
	via  string
}

// clipboardTools are the system clipboards tried besides OSC 52 (which works over
// SSH when the terminal allows it, and says nothing when it does not).
var clipboardTools = [][]string{
	{"wl-copy"}, {"xclip", "-selection", "clipboard"}, {"xsel", "--clipboard", "--input"}, {"pbcopy"}, {"clip.exe"},
}

// copyText sends text to the terminal's clipboard (OSC 52) and to the first system
// clipboard tool found, in a command: Update never runs a process itself.
func copyText(text, what string) tea.Cmd {
	system := func() tea.Msg {
		via := "OSC 52"
		if os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != "" || os.Getenv("TERM_PROGRAM") == "Apple_Terminal" || fileExists("/usr/bin/pbcopy") {
			for _, tool := range clipboardTools {
				path, err := exec.LookPath(tool[0])
				if err != nil {
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				cmd := exec.CommandContext(ctx, path, tool[1:]...)
				cmd.Stdin = strings.NewReader(text)
				err = cmd.Run()
				cancel()
				if err == nil {
					via += " and " + tool[0]
					break
				}
			}
		}
		return copiedMsg{what: what, via: via}
	}
	return tea.Batch(tea.SetClipboard(text), system)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// lastAnswer is the text of the most recent answer, as the model wrote it.
func (t *transcript) lastAnswer() string {
	for i := len(t.entries) - 1; i >= 0; i-- {
		if a, ok := t.entries[i].it.(*assistantItem); ok && strings.TrimSpace(a.text.String()) != "" {
			return strip(a.text.String())
		}
	}
	return ""
}

var fenceRe = regexp.MustCompile("(?ms)^[ \\t]*(```|~~~)[^\\n]*\\n(.*?)^[ \\t]*(```|~~~)[ \\t]*$")

// lastCodeBlock is the content of the last fenced code block of the answers.
func (t *transcript) lastCodeBlock() string {
	for i := len(t.entries) - 1; i >= 0; i-- {
		a, ok := t.entries[i].it.(*assistantItem)
		if !ok {
			continue
		}
		if all := fenceRe.FindAllStringSubmatch(a.text.String(), -1); len(all) > 0 {
			return strip(strings.TrimRight(all[len(all)-1][2], "\n"))
		}
	}
	return ""
}

func describeCopy(msg copiedMsg) string {
	return fmt.Sprintf("copied the %s (%s)", msg.what, msg.via)
}
