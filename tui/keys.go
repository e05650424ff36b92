package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// keyMap lists the chat's keys, for the help overlay and the README.
type keyMap struct {
	Send, Newline, History, Mention      key.Binding
	Stop, Quit, Retry, Threads, Proposal key.Binding
	ScrollUp, ScrollDown, Bottom, Badge  key.Binding
	Help                                 key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Send:       key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "send")),
		Newline:    key.NewBinding(key.WithKeys("alt+enter", "ctrl+j"), key.WithHelp("alt+enter/ctrl+j", "new line")),
		History:    key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓", "earlier questions (empty input)")),
		Mention:    key.NewBinding(key.WithKeys("@"), key.WithHelp("@", "mention a node (tab accepts)")),
		Stop:       key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "stop the answer")),
		Quit:       key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		Retry:      key.NewBinding(key.WithKeys("ctrl+r"), key.WithHelp("ctrl+r", "retry after an error")),
		Threads:    key.NewBinding(key.WithKeys("ctrl+t"), key.WithHelp("ctrl+t", "threads")),
		Proposal:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "reopen the pending proposal")),
		ScrollUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "scroll up")),
		ScrollDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "scroll down")),
		Bottom:     key.NewBinding(key.WithKeys("ctrl+end", "end"), key.WithHelp("end", "follow the end")),
		Badge:      key.NewBinding(key.WithKeys("tab", "shift+tab"), key.WithHelp("tab", "expand a tool call")),
		Help:       key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	}
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Send, k.Stop, k.Threads, k.Help}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Send, k.Newline, k.History, k.Mention},
		{k.Stop, k.Retry, k.Quit, k.Threads, k.Proposal},
		{k.ScrollUp, k.ScrollDown, k.Bottom, k.Badge, k.Help},
	}
}

// helpDialog is the `?` overlay; any key closes it.
type helpDialog struct {
	lk *look
	km keyMap
}

func (h *helpDialog) Update(msg tea.Msg, _ time.Time) (bool, tea.Cmd) {
	_, ok := msg.(tea.KeyPressMsg)
	return ok, nil
}

func (h *helpDialog) Render(width, height int) string {
	hm := help.New()
	hm.Styles = help.DefaultStyles(h.lk.th.dark)
	if h.lk.th.noColor {
		hm.Styles = help.Styles{}
	}
	w := min(width, 100) - 4
	hm.SetWidth(w)
	var body string
	if w >= 90 {
		body = hm.FullHelpView(h.km.FullHelp())
	} else { // narrow: one column of every key
		var lines []string
		for _, g := range h.km.FullHelp() {
			lines = append(lines, hm.FullHelpView([][]key.Binding{g}), "")
		}
		body = strings.TrimRight(strings.Join(lines, "\n"), "\n")
	}
	body += "\n\n" + h.lk.th.dim.Render("Proposal dialog: a approve · r reject · f reject with feedback · A approve and always for this kind · esc later") +
		"\n" + h.lk.th.dim.Render("Threads: type to filter · enter open · n new · r rename · d delete") +
		"\n\n" + h.lk.th.dim.Render("any key closes")
	return boxed(h.lk.th, "Keys", body, min(width, 100), height)
}
