package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/nodius/nodius-ai/agent"
)

// Undoer reverses a thread's last applied change (*agent.Agent satisfies it). The
// TUI offers undo when its Runner is one.
type Undoer interface {
	Undo(ctx context.Context, req agent.UndoRequest) (agent.UndoResult, error)
}

// undoPreviewMsg is the dry run of an undo: what it would revert, or why it cannot.
type undoPreviewMsg struct {
	res   agent.UndoResult
	err   error
	force bool
}

// undoDoneMsg is the end of an undo the person confirmed.
type undoDoneMsg struct {
	res agent.UndoResult
	err error
}

// undoNoticeMsg tells the model (the TUI's) to show an undo's outcome in the transcript.
type undoNoticeMsg struct {
	text  string
	isErr bool
}

// undoKey opens the undo confirmation of the current thread: it first asks for a
// dry run, then shows what will be reverted and waits for y.
func (m *Model) undoKey() tea.Cmd {
	u, ok := m.opts.Runner.(Undoer)
	switch {
	case !ok:
		m.st.note = "undo works on this terminal's threads only"
		return nil
	case m.threadID == "":
		m.st.note = "nothing to undo: no thread yet"
		return nil
	case m.run != nil:
		m.st.note = "wait for the answer, or esc to stop it, before undoing"
		return nil
	}
	d := &undoDialog{lk: m.lk, u: u, threadID: m.threadID, opened: m.now()}
	m.dlg = d
	return d.preview(false)
}

// onUndoNotice shows an undo's outcome in the transcript.
func (m *Model) onUndoNotice(msg undoNoticeMsg) {
	kind := nDecision
	if msg.isErr {
		kind = nError
	}
	m.tr.add(&noticeItem{lk: m.lk, kind: kind, text: msg.text})
}

// undoGuard is the quiet time after the preview appears before y is taken, so a key
// typed for the input never confirms an undo.
const undoGuard = 400 * time.Millisecond

// undoDialog confirms an undo: it shows the dry run (what will be reverted, or why
// it cannot be), then y reverts (f forces when the graph changed since), esc cancels.
type undoDialog struct {
	lk       *look
	u        Undoer
	threadID string
	opened   time.Time
	shownAt  time.Time // when the preview arrived
	shown    *undoPreviewMsg
	running  bool
	scroll   scroller
}

func (d *undoDialog) preview(force bool) tea.Cmd {
	u, id := d.u, d.threadID
	return func() tea.Msg {
		res, err := u.Undo(context.Background(), agent.UndoRequest{ThreadID: id, DryRun: true, Force: force})
		return undoPreviewMsg{res: res, err: err, force: force}
	}
}

func (d *undoDialog) confirm(force bool) tea.Cmd {
	u, id := d.u, d.threadID
	return func() tea.Msg {
		res, err := u.Undo(context.Background(), agent.UndoRequest{ThreadID: id, Force: force})
		return undoDoneMsg{res: res, err: err}
	}
}

func (d *undoDialog) Update(msg tea.Msg, now time.Time) (bool, tea.Cmd) {
	switch msg := msg.(type) {
	case undoPreviewMsg:
		d.shown, d.shownAt = &msg, now
		return false, nil
	case undoDoneMsg:
		if msg.err != nil {
			return true, emit(undoNoticeMsg{text: "Undo failed: " + firstLine(strip(msg.err.Error())), isErr: true})
		}
		text := "Undone: " + strip(msg.res.Change)
		if len(msg.res.Left) > 0 {
			text += "\nLeft as it is (the graph changed since):\n  - " + strip(strings.Join(msg.res.Left, "\n  - "))
		}
		return true, emit(undoNoticeMsg{text: text})
	case tea.KeyPressMsg:
		if d.running {
			return false, nil
		}
		switch msg.String() {
		case "esc", "n", "q":
			return true, nil
		}
		if d.scroll.scrollKey(msg) {
			return false, nil // reading is never guarded; confirming is
		}
		p := d.shown
		if p == nil || now.Sub(d.shownAt) < undoGuard {
			return false, nil
		}
		switch msg.String() {
		case "y", "enter":
			if p.err == nil {
				d.running = true
				return false, d.confirm(p.force)
			}
		case "f":
			if p.err != nil && len(p.res.Drift) > 0 && !p.force {
				d.shown = nil
				return false, d.preview(true)
			}
		}
	}
	return false, nil
}

// Render shows what the undo will revert, scrolled when long, with its keys
// always under it. Text from the change is revealed (direction controls shown).
func (d *undoDialog) Render(width, height int) string {
	th := d.lk.th
	w := max(20, width-6)
	var body []string
	add := func(st lipgloss.Style, text string) {
		for _, l := range strings.Split(wrapPlain(text, w), "\n") {
			body = append(body, st.Render(l))
		}
	}
	item := func(text string) {
		for i, l := range strings.Split(wrapPlain(text, w-4), "\n") {
			lead := "  • " // a step, not a removal: what it restores may be code with its own − and +
			if i > 0 {
				lead = "    "
			}
			body = append(body, lead+l)
		}
	}
	var foot string
	p := d.shown
	switch {
	case p == nil:
		add(th.dim, "Looking at the thread's last applied change…")
	case p.err != nil && p.res.ProposalID == "":
		add(th.errText, reveal(p.err.Error()))
		foot = th.dim.Render("esc close")
	default:
		add(lipgloss.NewStyle(), "Change: "+reveal(p.res.Change))
		if !p.res.AppliedAt.IsZero() {
			add(th.dim, "applied "+p.res.AppliedAt.Local().Format(time.DateTime))
		}
		list := func(title string, items []string) {
			if len(items) == 0 {
				return
			}
			body = append(body, "", title)
			for _, it := range items {
				item(reveal(it))
			}
		}
		list("Will revert:", p.res.Reversed)
		list("Left as it is (the graph changed since):", p.res.Left)
		switch {
		case p.err != nil:
			body = append(body, "")
			add(th.errText, reveal(p.err.Error()))
			if len(p.res.Drift) > 0 && !p.force {
				foot = th.dim.Render("f reverse only what still matches · esc cancel")
			} else {
				foot = th.dim.Render("esc close")
			}
		case d.running:
			foot = th.dim.Render("Undoing…")
		default:
			foot = th.dim.Render("y undo · esc cancel")
		}
	}
	var tail []string
	if foot != "" {
		tail = append([]string{""}, wrapStyled([]string{foot}, w)...)
	}
	room := height - 3 - len(tail)
	if room < 6 && len(tail) > 0 {
		tail = tail[1:]
		room++
	}
	view := d.scroll.view(th, body, room)
	return boxed(th, "Undo the last applied change", strings.Join(append(view, tail...), "\n"), width, height)
}
