package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nodius/nodius-ai/agent/convo"
)

// Messages between the picker, the store commands and the model.
type (
	threadsLoadedMsg struct {
		list []convo.Thread
		err  error
	}
	previewLoadedMsg struct {
		id   string
		msgs []convo.Message
		err  error
	}
	// openThreadMsg asks the model to load and show a thread ("" = a new one).
	openThreadMsg struct{ id string }
	threadOpMsg   struct {
		deleted string
		err     error
	}
)

// storeTimeout bounds one store call made for the UI.
const storeTimeout = 10 * time.Second

// graphLoadTimeout bounds loading the graph for @ completion: a large graph read
// for the first time is parsed and indexed (seconds, more on a busy machine).
const graphLoadTimeout = 5 * time.Minute

func loadThreads(ts Threads, graph string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		list, err := ts.List(ctx, graph)
		return threadsLoadedMsg{list: list, err: err}
	}
}

func loadPreview(ts Threads, id string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		msgs, err := ts.History(ctx, id)
		return previewLoadedMsg{id: id, msgs: msgs, err: err}
	}
}

type pickerMode int

const (
	pmList pickerMode = iota
	pmRename
	pmDelete
)

// picker lists the graph's threads: every typed character filters; the commands are
// on keys that are not text (ctrl+n new, ctrl+r rename, ctrl+d delete after a y/n
// confirmation), so a filter may start with any letter.
type picker struct {
	lk      *look
	ts      Threads
	graph   string
	current string

	all      []convo.Thread
	err      error
	loading  bool
	filter   string
	sel      int
	mode     pickerMode
	rename   textinput.Model
	previews map[string][]convo.Message
}

func newPicker(lk *look, ts Threads, graph, current string) (*picker, tea.Cmd) {
	p := &picker{lk: lk, ts: ts, graph: graph, current: current, previews: map[string][]convo.Message{}, loading: true}
	if ts == nil {
		p.loading = false
		p.err = fmt.Errorf("the thread store is not available")
		return p, nil
	}
	return p, loadThreads(ts, graph)
}

func (p *picker) visible() []convo.Thread {
	if p.filter == "" {
		return p.all
	}
	f := strings.ToLower(p.filter)
	var out []convo.Thread
	for _, t := range p.all {
		if strings.Contains(strings.ToLower(t.Title), f) || strings.HasPrefix(strings.ToLower(t.ID), f) {
			out = append(out, t)
		}
	}
	return out
}

func (p *picker) selected() (convo.Thread, bool) {
	v := p.visible()
	if p.sel < 0 || p.sel >= len(v) {
		return convo.Thread{}, false
	}
	return v[p.sel], true
}

// previewCmd loads the selected thread's messages once.
func (p *picker) previewCmd() tea.Cmd {
	t, ok := p.selected()
	if !ok || p.ts == nil {
		return nil
	}
	if _, have := p.previews[t.ID]; have {
		return nil
	}
	p.previews[t.ID] = nil // loading
	return loadPreview(p.ts, t.ID)
}

func (p *picker) Update(msg tea.Msg, _ time.Time) (bool, tea.Cmd) {
	switch msg := msg.(type) {
	case threadsLoadedMsg:
		p.all = make([]convo.Thread, len(msg.list))
		for i, t := range msg.list {
			t.Title = strings.TrimSpace(strip(t.Title)) // once, here: the list redraws on every key
			p.all[i] = t
		}
		p.loading, p.err = false, msg.err
		p.sel = min(p.sel, max(0, len(p.visible())-1))
		return false, p.previewCmd()
	case previewLoadedMsg:
		msgs := make([]convo.Message, len(msg.msgs))
		for i, m := range msg.msgs {
			m.Content = strip(m.Content)
			msgs[i] = m
		}
		p.previews[msg.id] = msgs
		return false, nil
	case threadOpMsg:
		if msg.err != nil {
			p.err = msg.err
			return false, nil
		}
		p.loading = true
		return false, loadThreads(p.ts, p.graph)
	case tea.KeyPressMsg:
		return p.key(msg)
	}
	return false, nil
}

func (p *picker) key(k tea.KeyPressMsg) (bool, tea.Cmd) {
	switch p.mode {
	case pmRename:
		switch k.String() {
		case "enter":
			t, ok := p.selected()
			p.mode = pmList
			title := strings.TrimSpace(p.rename.Value())
			if !ok || title == "" {
				return false, nil
			}
			ts, id := p.ts, t.ID
			return false, func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
				defer cancel()
				return threadOpMsg{err: ts.Rename(ctx, id, title)}
			}
		case "esc":
			p.mode = pmList
			return false, nil
		}
		var cmd tea.Cmd
		p.rename, cmd = p.rename.Update(k)
		return false, cmd
	case pmDelete:
		p.mode = pmList
		if k.String() != "y" && k.String() != "Y" {
			return false, nil
		}
		t, ok := p.selected()
		if !ok {
			return false, nil
		}
		ts, id := p.ts, t.ID
		delete(p.previews, id)
		return false, func() tea.Msg {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			return threadOpMsg{deleted: id, err: ts.Delete(ctx, id)}
		}
	}
	s := k.String()
	cmdKey := func(c string) bool { return s == "ctrl+"+c }
	switch {
	case s == "esc":
		if p.filter != "" {
			p.filter, p.sel = "", 0
			return false, p.previewCmd()
		}
		return true, nil
	case s == "enter":
		if t, ok := p.selected(); ok {
			return true, emit(openThreadMsg{id: t.ID})
		}
		return false, nil
	case cmdKey("n"):
		return true, emit(openThreadMsg{id: ""})
	case cmdKey("r"):
		if t, ok := p.selected(); ok && p.ts != nil {
			p.mode = pmRename
			p.rename = textinput.New()
			p.rename.Prompt = "title> "
			p.rename.SetVirtualCursor(true)
			p.rename.SetValue(t.Title)
			p.rename.Focus()
		}
		return false, nil
	case cmdKey("d"):
		if _, ok := p.selected(); ok && p.ts != nil {
			p.mode = pmDelete
		}
		return false, nil
	case s == "up" || s == "ctrl+p":
		p.sel = max(0, p.sel-1)
		return false, p.previewCmd()
	case s == "down":
		p.sel = min(max(0, len(p.visible())-1), p.sel+1)
		return false, p.previewCmd()
	case s == "backspace":
		if p.filter != "" {
			_, n := lastRune(p.filter)
			p.filter = p.filter[:len(p.filter)-n]
			p.sel = 0
			return false, p.previewCmd()
		}
		return false, nil
	}
	if k.Text != "" && k.Mod&^tea.ModShift == 0 {
		p.filter += k.Text
		p.sel = 0
		return false, p.previewCmd()
	}
	return false, nil
}

func lastRune(s string) (rune, int) {
	r := []rune(s)
	if len(r) == 0 {
		return 0, 0
	}
	return r[len(r)-1], len(string(r[len(r)-1]))
}

func (p *picker) Render(width, height int) string {
	th := p.lk.th
	w := max(20, min(width, 110)-4)
	var b strings.Builder
	b.WriteString(th.dim.Render("filter: ") + strip(p.filter) + "▏\n")
	list := p.visible()
	listW := w
	showSide := w >= 76
	if showSide {
		listW = w / 2
	}
	var rows []string
	switch {
	case p.err != nil:
		rows = append(rows, th.errText.Render("× "+strip(p.err.Error())))
	case p.loading:
		rows = append(rows, th.dim.Render("loading…"))
	case len(list) == 0:
		rows = append(rows, th.dim.Render("no threads yet — ctrl+n starts one"))
	}
	for i, t := range list {
		title := t.Title
		if title == "" {
			title = "(untitled)"
		}
		// The selected row is marked by a character, not only by reverse video
		// (which NO_COLOR removes); • marks the thread open now.
		sel, cur := " ", " "
		if i == p.sel {
			sel = "▸"
		}
		if t.ID == p.current {
			cur = "•"
		}
		mark := sel + cur + " "
		meta := fmt.Sprintf(" %d msg · %s", t.MessageCount, ago(t.UpdatedAt))
		line := mark + ansi.Truncate(title, max(5, listW-ansi.StringWidth(meta)-4), "…")
		pad := max(1, listW-ansi.StringWidth(line)-ansi.StringWidth(meta))
		line += strings.Repeat(" ", pad) + meta
		if i == p.sel {
			line = th.selected.Render(ansi.Truncate(line, listW, ""))
		}
		rows = append(rows, line)
	}
	room := max(3, height-8)
	if p.sel >= room {
		rows = rows[p.sel-room+1:]
	}
	if len(rows) > room {
		rows = rows[:room]
	}
	preview := p.previewLines(max(10, w-listW-3), room)
	if showSide {
		left := lipgloss.NewStyle().Width(listW).Render(strings.Join(rows, "\n"))
		right := strings.Join(preview, "\n")
		b.WriteString(lipgloss.JoinHorizontal(lipgloss.Top, left, " │ ", right))
	} else {
		b.WriteString(strings.Join(rows, "\n"))
	}
	b.WriteString("\n\n")
	switch p.mode {
	case pmRename:
		b.WriteString(p.rename.View() + "\n" + th.dim.Render("enter save · esc cancel"))
	case pmDelete:
		t, _ := p.selected()
		b.WriteString(th.warn.Render(fmt.Sprintf("Delete %q and all its messages? y/n", t.Title)))
	default:
		b.WriteString(keyHints(th, w, [][2]string{{"type", "filter"}, {"↑/↓", "select"}, {"enter", "open"}, {"ctrl+n", "new"}, {"ctrl+r", "rename"}, {"ctrl+d", "delete"}, {"esc", "close"}}))
	}
	return boxed(th, "Threads · "+strip(p.graph), b.String(), min(width, 110), height)
}

func (p *picker) previewLines(w, room int) []string {
	th := p.lk.th
	t, ok := p.selected()
	if !ok {
		return nil
	}
	msgs, have := p.previews[t.ID]
	if !have || msgs == nil {
		return []string{th.dim.Render("…")}
	}
	var out []string
	for _, m := range msgs {
		var who string
		switch m.Role {
		case convo.User:
			who = th.userLabel.Render("You: ")
		case convo.Assistant:
			if strings.TrimSpace(m.Content) == "" {
				continue
			}
			who = th.assistantLabel.Render("AI: ")
		default:
			continue
		}
		text := strings.Join(strings.Fields(m.Content), " ")
		out = append(out, ansi.Truncate(who+text, w, "…"))
	}
	if len(out) > room {
		out = out[len(out)-room:]
	}
	if len(out) == 0 {
		out = []string{th.dim.Render("(empty)")}
	}
	return out
}

func ago(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Format("2006-01-02")
}
