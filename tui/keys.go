package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// keyMap is the chat's keys: Model.key dispatches on them with key.Matches, and
// the help screen (helpSections) is drawn from them, so what help says is what the
// keys do. A binding with no help text is a second half of one help line
// (pgdn of "pgup pgdn").
type keyMap struct {
	Send, Newline, HistoryUp, HistoryDown, Mention, Editor key.Binding
	Stop, Retry, QuitEmpty, Quit                           key.Binding
	ScrollUp, ScrollDown, Bottom, BadgeNext, BadgePrev     key.Binding
	Reasoning, CopyAnswer, CopyCode, Select                key.Binding
	Threads, Proposal, Undo, Help                          key.Binding
	// LimitContinue and LimitSummary answer the tool-round limit (the web client's
	// banner): keys no one types as text, so a word in the input never decides it.
	LimitContinue, LimitSummary key.Binding
}

func newKeyMap() keyMap {
	b := func(keys []string, k, what string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(k, what))
	}
	ks := func(k ...string) []string { return k }
	return keyMap{
		Send:          b(ks("enter"), "enter", "send the question"),
		Newline:       b(ks("alt+enter", "ctrl+j"), "alt+enter, ctrl+j", "new line"), // the input's own binding
		HistoryUp:     b(ks("up"), "↑ ↓", "earlier questions (empty input)"),
		HistoryDown:   key.NewBinding(key.WithKeys("down")),
		Mention:       b(ks("@"), "@", "mention a node (tab accepts)"), // the input's completion
		Editor:        b(ks("ctrl+o"), "ctrl+o", "write the question in $EDITOR"),
		Stop:          b(ks("esc"), "esc", "stop the answer; clear the input"),
		Retry:         b(ks("ctrl+r"), "ctrl+r", "retry after an error"),
		QuitEmpty:     b(ks("ctrl+d"), "ctrl+d", "quit (empty input)"),
		Quit:          b(ks("ctrl+c"), "ctrl+c", "quit (asks while an answer streams)"),
		ScrollUp:      b(ks("pgup"), "pgup pgdn, wheel", "scroll the conversation"),
		ScrollDown:    key.NewBinding(key.WithKeys("pgdown")),
		Bottom:        b(ks("ctrl+end", "end"), "end", "follow the end again"),
		BadgeNext:     b(ks("tab"), "tab shift+tab", "focus a tool call; enter shows its whole result"),
		BadgePrev:     key.NewBinding(key.WithKeys("shift+tab")),
		Reasoning:     b(ks("ctrl+x"), "ctrl+x", "show or hide the reasoning"),
		CopyAnswer:    b(ks("ctrl+y"), "ctrl+y", "copy the last answer"),
		CopyCode:      b(ks("alt+y"), "alt+y", "copy the last code block"),
		Select:        b(nil, "shift+drag", "select text with the mouse"), // the terminal's own
		Threads:       b(ks("ctrl+t"), "ctrl+t", "threads of this graph"),
		Proposal:      b(ks("ctrl+p"), "ctrl+p", "review the pending proposal"),
		Undo:          b(ks("ctrl+z"), "ctrl+z", "undo the last applied change (asks first)"),
		Help:          b(ks("f1", "?"), "? f1", "this help (? on an empty input)"),
		LimitContinue: b(ks("alt+c", "ctrl+g"), "alt+c ctrl+g", "tool-round limit: let the assistant continue"),
		LimitSummary:  b(ks("alt+s", "ctrl+s"), "alt+s ctrl+s", "tool-round limit: ask for its answer now"),
	}
}

// helpEntry is one key of the help screen.
type helpEntry struct{ key, what string }

// helpSection is one block of the help screen.
type helpSection struct {
	title   string
	entries []helpEntry
}

// helpSections are every key of the chat, its dialogs and the picker, as the help
// screen lists them, drawn from the keymaps.
func helpSections(k keyMap) []helpSection {
	return []helpSection{
		{"Writing", helpOf(k.Send, k.Newline, k.HistoryUp, k.Mention, k.Editor, k.Stop, k.Retry, k.QuitEmpty, k.Quit)},
		{"Reading", helpOf(k.ScrollUp, k.Bottom, k.BadgeNext, k.Reasoning, k.CopyAnswer, k.CopyCode, k.Select,
			k.Threads, k.Proposal, k.Undo, k.Help, k.LimitContinue, k.LimitSummary)},
		{"Proposal dialog", append(helpOf(proposalKeys.decisionBindings()...),
			helpEntry{"↑ ↓ j k pgup pgdn home end", "scroll the change (at once: only deciding waits for a pause)"},
			helpEntry{"", "a and A approve once every line of the change has been on screen"})},
		{"Threads (ctrl+t)", []helpEntry{
			{"type", "filter by title or id"},
			{"↑ ↓", "select"},
			{"enter", "open"},
			{"ctrl+n", "new thread"},
			{"ctrl+r", "rename"},
			{"ctrl+d", "delete (asks y/n)"},
			{"esc", "clear the filter, close"},
		}},
	}
}

// insertTextMsg types text into the input (the help's "?" types a question mark).
type insertTextMsg struct{ text string }

// helpDialog is the `?` screen: every key, in as many columns as the width allows
// and never cut (a narrow terminal gets one column and scrolls). ↑/↓ scroll, ? types
// a question mark, any other key closes.
type helpDialog struct {
	lk     *look
	km     keyMap
	scroll scroller
}

func (h *helpDialog) Update(msg tea.Msg, _ time.Time) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, nil
	}
	switch {
	case k.String() == "space":
		h.scroll.pageDown()
		h.scroll.offset = min(h.scroll.offset, h.scroll.last)
		return false, nil
	case h.scroll.scrollKey(k):
		return false, nil
	case k.String() == "?":
		return true, emit(insertTextMsg{"?"})
	}
	return true, nil
}

// helpWidth is the widest the help box grows.
const helpWidth = 150

func (h *helpDialog) Render(width, height int) string {
	th := h.lk.th
	boxW := min(width, helpWidth)
	inner := max(20, boxW-4)
	lines := helpLines(th, inner, helpSections(h.km))
	foot := strings.Split(ansi.Wrap("↑/↓ pgup/pgdn scroll · ? types a question mark · any other key closes", inner, ""), "\n")
	for i := range foot {
		foot[i] = th.dim.Render(foot[i])
	}
	room := max(1, height-3-len(foot)) // borders, title, footer
	view := h.scroll.view(th, lines, room)
	return boxed(th, "Keys", strings.Join(append(view, foot...), "\n"), boxW, height)
}

// helpLines lays the sections out in columns that fit inner: one column under 80,
// two under 130, else as many as fit; descriptions wrap inside their column.
func helpLines(th theme, inner int, sections []helpSection) []string {
	const gap = 3
	cols := 1
	switch {
	case inner >= 126:
		cols = min(len(sections), (inner+gap)/(40+gap))
	case inner >= 76:
		cols = 2
	}
	colW := (inner - gap*(cols-1)) / cols
	blocks := make([][]string, len(sections))
	for i, sec := range sections {
		keyW := 0
		for _, e := range sec.entries {
			keyW = max(keyW, ansi.StringWidth(e.key))
		}
		keyW = min(keyW, colW/2)
		b := []string{th.title.Render(sec.title)}
		for _, e := range sec.entries {
			k := e.key
			if ansi.StringWidth(k) > keyW { // a long key gets its own line
				b = append(b, th.statusKey.Render(k))
				k = ""
			}
			desc := strings.Split(ansi.Wrap(e.what, max(8, colW-keyW-2), ""), "\n")
			for j, d := range desc {
				if j > 0 {
					k = ""
				}
				b = append(b, th.statusKey.Render(k)+strings.Repeat(" ", keyW-ansi.StringWidth(k)+2)+th.status.Render(d))
			}
		}
		blocks[i] = b
	}
	// Fill the columns in order, each section whole, balancing their heights.
	total := 0
	for _, b := range blocks {
		total += len(b) + 1
	}
	target := (total + cols - 1) / cols
	columns := make([][]string, cols)
	c := 0
	for _, b := range blocks {
		if c < cols-1 && len(columns[c]) > 0 && len(columns[c])+len(b) > target {
			c++
		}
		if len(columns[c]) > 0 {
			columns[c] = append(columns[c], "")
		}
		columns[c] = append(columns[c], b...)
	}
	rows := 0
	for _, col := range columns {
		rows = max(rows, len(col))
	}
	out := make([]string, rows)
	for r := range rows {
		var line strings.Builder
		for ci, col := range columns {
			cell := ""
			if r < len(col) {
				cell = col[r]
			}
			if ci < cols-1 {
				cell += strings.Repeat(" ", max(0, colW-ansi.StringWidth(cell))+gap)
			}
			line.WriteString(cell)
		}
		out[r] = strings.TrimRight(line.String(), " ")
	}
	return out
}

// proposalKeyMap is the proposal dialog's keys: its Update dispatches on them with
// key.Matches, and its key line and the help screen are drawn from them, so what
// is shown is what works.
type proposalKeyMap struct {
	Approve, Always, Reject, Feedback, Later key.Binding
	Up, Down, PageUp, PageDown, Home, End    key.Binding
}

// proposalKeys is the one proposal keymap (read only).
var proposalKeys = proposalKeyMap{
	Approve:  key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "approve")),
	Always:   key.NewBinding(key.WithKeys("A"), key.WithHelp("A", "approve, and this kind always in this thread")),
	Reject:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "reject")),
	Feedback: key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "reject with feedback")),
	Later:    key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc", "decide later")),
	Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑ k", "scroll up")),
	Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓ j", "scroll down")),
	PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll a page up")),
	PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll a page down")),
	Home:     key.NewBinding(key.WithKeys("home"), key.WithHelp("home", "to the start")),
	End:      key.NewBinding(key.WithKeys("end"), key.WithHelp("end", "to the end")),
}

// scrollBindings are the keys that only move the view: never guarded.
func (k proposalKeyMap) scrollBindings() []key.Binding {
	return []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End}
}

// decisionBindings are the keys that decide, in the order the dialog lists them.
func (k proposalKeyMap) decisionBindings() []key.Binding {
	return []key.Binding{k.Approve, k.Reject, k.Feedback, k.Always, k.Later}
}

// helpOf lists bindings as help entries.
func helpOf(bs ...key.Binding) []helpEntry {
	var out []helpEntry
	for _, b := range bs {
		if h := b.Help(); h.Key != "" {
			out = append(out, helpEntry{h.Key, h.Desc})
		}
	}
	return out
}
