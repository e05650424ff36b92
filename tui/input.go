package tui

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// input is the multi-line question editor: Enter sends, Alt+Enter or Ctrl+J adds a
// line, Up/Down recall earlier questions while it is empty, and `@` opens node-key
// completion. It uses the terminal's own cursor, so nothing blinks on a timer.
type input struct {
	ta      textarea.Model
	history []string
	histPos int    // len(history) when not browsing
	draft   string // what was typed before browsing history

	// home is home mode (no graph open, graph key "home"): the questions are about
	// the user's graphs, and there are no nodes to mention.
	home bool

	nodes   *completion
	menu    []NodeRef // completion candidates, empty when closed
	menuSel int
	menuQ   string
	// spaced: the last key accepted a mention and put a space after it, so a
	// space typed next (from habit) is not a second one.
	spaced bool

	// view is the editor as last drawn at viewW. Every change to ta sets stale: the
	// screen is redrawn on every token batch, and the editor rarely changes then.
	view  string
	viewW int
	stale bool
}

const maxInputLines = 6

const placeholder = "Ask about the graph…  (@ to mention a node)"

// placeholderFor is the empty editor's hint at width, in home mode or on a graph.
func placeholderFor(home bool, width int) string {
	switch {
	case home && width < 50:
		return "Ask about your graphs…"
	case home:
		return "Ask about your graphs, or for a new one…"
	case width < 50:
		return "Ask about the graph…"
	}
	return placeholder
}

func newInput(th theme, home bool) *input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Prompt = "┃ "
	ta.Placeholder = placeholderFor(home, 80)
	ta.SetVirtualCursor(false)
	ta.CharLimit = 0
	ta.MaxHeight = maxInputLines
	ta.DynamicHeight = true
	km := textarea.DefaultKeyMap()
	km.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"))
	km.TransposeCharacterBackward = key.NewBinding(key.WithDisabled()) // Ctrl+T opens threads
	km.PageUp = key.NewBinding(key.WithDisabled())                     // PgUp/PgDn scroll the transcript
	km.PageDown = key.NewBinding(key.WithDisabled())
	km.InputEnd = key.NewBinding(key.WithKeys("alt+>"))
	ta.KeyMap = km
	st := textarea.DefaultStyles(th.dark)
	if th.noColor {
		st = textarea.Styles{}
	}
	st.Focused.CursorLine = st.Focused.Text
	ta.SetStyles(st)
	ta.Focus()
	return &input{ta: ta, home: home, stale: true}
}

// setNodes takes the graph's nodes for completion (see newCompletion).
func (in *input) setNodes(c *completion) { in.nodes = c }

func (in *input) value() string { return in.ta.Value() }
func (in *input) empty() bool   { return in.ta.Value() == "" }

func (in *input) setWidth(w int) { in.ta.SetWidth(max(10, w)) }

func (in *input) reset() {
	in.ta.Reset()
	in.stale = true
	in.histPos = len(in.history)
	in.draft = ""
	in.menu = nil
}

func (in *input) remember(q string) {
	if q == "" || (len(in.history) > 0 && in.history[len(in.history)-1] == q) {
		in.histPos = len(in.history)
		return
	}
	in.history = append(in.history, q)
	in.histPos = len(in.history)
}

// recall walks the history: dir -1 older, +1 newer. It only starts from an empty
// input, and keeps going while the shown text is an unedited history entry.
func (in *input) recall(dir int) bool {
	browsing := in.histPos < len(in.history) && in.ta.Value() == in.history[in.histPos]
	if !in.empty() && !browsing {
		return false
	}
	if !browsing {
		in.histPos = len(in.history)
	}
	in.stale = true
	pos := in.histPos + dir
	switch {
	case pos < 0 || len(in.history) == 0:
		return true
	case pos >= len(in.history):
		in.histPos = len(in.history)
		in.ta.Reset()
		return true
	}
	in.histPos = pos
	in.ta.SetValue(in.history[pos])
	return true
}

// update feeds a key to the editor (and the completion menu when open). It reports
// handled=false for keys the model should see instead.
func (in *input) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	in.stale = true
	in.refreshMenu()
	return cmd
}

// menuKey handles keys while the completion menu is open; ok=false lets them through.
func (in *input) menuKey(k tea.KeyPressMsg) bool {
	if len(in.menu) == 0 {
		return false
	}
	switch k.String() {
	case "up", "ctrl+p":
		in.menuSel = (in.menuSel + len(in.menu) - 1) % len(in.menu)
	case "down", "ctrl+n":
		in.menuSel = (in.menuSel + 1) % len(in.menu)
	case "tab", "enter":
		in.accept(in.menu[in.menuSel])
	case "esc":
		in.menu = nil
	default:
		return false
	}
	return true
}

// currentMention returns the `@word` being typed just before the cursor.
func (in *input) currentMention() (string, bool) {
	lines := strings.Split(in.ta.Value(), "\n")
	row := in.ta.Line()
	if row >= len(lines) {
		return "", false
	}
	r := []rune(lines[row])
	col := min(in.ta.Column(), len(r))
	start := col
	for start > 0 && isKeyRune(r[start-1]) {
		start--
	}
	if start == 0 || r[start-1] != '@' {
		return "", false
	}
	if start >= 2 && !isSpaceRune(r[start-2]) {
		return "", false // an e-mail address, not a mention
	}
	return string(r[start:col]), true
}

func (in *input) refreshMenu() {
	q, ok := in.currentMention()
	if !ok || in.nodes.len() == 0 {
		in.menu = nil
		return
	}
	if q == in.menuQ && in.menu != nil {
		return
	}
	in.menuQ = q
	in.menu = in.nodes.find(q, 6)
	in.menuSel = 0
}

// accept replaces the `@partial` before the cursor with `@key` and one space
// after it: none is added when a blank already follows, and a space typed right
// after is not a second one.
func (in *input) accept(n NodeRef) {
	q, _ := in.currentMention()
	for range utf8.RuneCountInString(q) {
		in.ta, _ = in.ta.Update(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	in.ta.InsertString(n.Key)
	if !in.blankAfterCursor() {
		in.ta.InsertString(" ")
		in.spaced = true
	}
	in.menu = nil
	in.stale = true
}

// blankAfterCursor reports whether a space or tab follows the cursor on its line.
func (in *input) blankAfterCursor() bool {
	lines := strings.Split(in.ta.Value(), "\n")
	if row := in.ta.Line(); row < len(lines) {
		r := []rune(lines[row])
		if col := in.ta.Column(); col < len(r) {
			return r[col] == ' ' || r[col] == '\t'
		}
	}
	return false
}

// mentions returns the known node keys named with @ in text, in order, once each.
func (in *input) mentions(text string) []string {
	var known map[string]bool
	if in.nodes != nil {
		known = in.nodes.known
	}
	var out []string
	seen := map[string]bool{}
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		k := strings.TrimRight(m[1], ".")
		if seen[k] || (len(known) > 0 && !known[k]) {
			continue
		}
		seen[k] = true
		out = append(out, k)
	}
	return out
}

var mentionRE = regexp.MustCompile(`(?:^|\s)@([A-Za-z0-9_.:-]+)`)

func isKeyRune(r rune) bool {
	return r == '-' || r == '_' || r == '.' || r == ':' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
}

func isSpaceRune(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }

// Render draws the completion menu (when open) above the editor.
func (in *input) Render(width int, th theme) string {
	if in.stale || in.viewW != width {
		in.setWidth(width)
		in.ta.Placeholder = placeholderFor(in.home, width)
		in.view, in.viewW, in.stale = in.ta.View(), width, false
	}
	view := in.view
	if len(in.menu) == 0 {
		return view
	}
	var b strings.Builder
	for i, n := range in.menu {
		line := "  @" + n.Key
		if n.Type != "" {
			line += "  " + th.dim.Render(n.Type)
		}
		line = ansi.Truncate(line, width, "…")
		if i == in.menuSel {
			line = th.selected.Render(ansi.Strip(line))
		}
		b.WriteString(line + "\n")
	}
	return b.String() + view
}

// menuHeight is how many lines the menu adds above the editor.
func (in *input) menuHeight() int { return len(in.menu) }
