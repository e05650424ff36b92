package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// textViewer shows a long text whole (a tool call's arguments and full result),
// wrapped to the width and scrolled with ↑/↓, PgUp/PgDn, Home/End; esc or q closes.
type textViewer struct {
	lk     *look
	title  string
	text   string
	scroll scroller

	lines  []string // text wrapped at linesW
	linesW int
}

// newResultViewer opens the whole of a finished tool call.
func newResultViewer(lk *look, b *badgeItem) *textViewer {
	label, res := "result", b.result
	if b.state == bErr {
		label, res = "error", b.errText
	}
	text := "arguments:\n" + prettyJSON(b.args) + "\n\n" + label + ":\n" + prettyJSON(res)
	return &textViewer{lk: lk, title: "Tool call · " + b.name, text: text}
}

func (v *textViewer) Update(msg tea.Msg, _ time.Time) (bool, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return false, nil
	}
	switch k.String() {
	case "esc", "q", "enter":
		return true, nil
	case "b":
		v.scroll.pageUp()
	case "space", "f":
		v.scroll.pageDown()
	case "g":
		v.scroll.offset = 0
	case "G":
		v.scroll.offset = v.scroll.last
	default:
		v.scroll.scrollKey(k)
	}
	v.scroll.offset = max(0, min(v.scroll.offset, v.scroll.last))
	return false, nil
}

func (v *textViewer) Render(width, height int) string {
	th := v.lk.th
	inner := max(20, width-4)
	if v.lines == nil || v.linesW != inner {
		v.lines, v.linesW = strings.Split(wrapPlain(v.text, inner), "\n"), inner
	}
	room := max(1, height-4)
	view := v.scroll.view(th, v.lines, room)
	first, end := v.scroll.shown()
	pos := fmt.Sprintf("lines %d–%d of %d", first+1, end, len(v.lines))
	foot := th.dim.Render(pos + " · ↑/↓ pgup/pgdn scroll · esc close")
	return boxed(th, v.title, strings.Join(append(view, foot), "\n"), width, height)
}
