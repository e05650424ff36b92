package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/internal/termtext"
)

// reveal is strip for text a person decides on (a proposed change, an undo):
// Unicode direction controls are shown as ⟨U+202E⟩ rather than removed, so code
// built to read differently from what it does gives itself away.
func reveal(s string) string { return termtext.Reveal(s) }

// scroller is the scroll position of a dialog's body. The dialog may be drawn
// at several heights in one frame (the layout measures it, then draws it), so
// drawing never moves the position: it clamps a copy, and remembers the last
// bottom so that the keys stop there.
type scroller struct {
	offset int
	last   int // the highest offset of the last drawing
}

// scrollKey moves the position for a scroll key of proposalKeys and reports
// whether k was one. Scroll keys decide nothing, so no keystroke guard ever holds
// them back.
func (s *scroller) scrollKey(k tea.KeyPressMsg) bool {
	km := proposalKeys
	switch {
	case key.Matches(k, km.Up):
		s.offset--
	case key.Matches(k, km.Down):
		s.offset++
	case key.Matches(k, km.PageUp):
		s.offset -= 10
	case key.Matches(k, km.PageDown):
		s.offset += 10
	case key.Matches(k, km.Home):
		s.offset = 0
	case key.Matches(k, km.End):
		s.offset = s.last
	default:
		return false
	}
	s.offset = max(0, min(s.offset, s.last))
	return true
}

// isScrollKey reports the keys scrollKey takes.
func isScrollKey(k tea.KeyPressMsg) bool {
	return key.Matches(k, proposalKeys.scrollBindings()...)
}

// view is the part of body shown in room lines, saying what is above and below.
// Every line is reachable: the line an indicator covers is shown one step away.
func (s *scroller) view(th theme, body []string, room int) []string {
	room = max(1, room)
	s.last = max(0, len(body)-room)
	off := min(s.offset, s.last)
	view := body[off:]
	if len(view) > room {
		more := len(body) - off - room + 1
		view = append(view[:room-1:room-1], th.dim.Render("  ↓ "+plural(more, "more line")+" (↓/j scrolls)"))
	}
	if off > 0 && len(view) > 2 {
		view = append([]string{th.dim.Render("  ↑ " + plural(off+1, "line") + " above (↑/k)")}, view[1:]...)
	}
	return view
}
