package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/nodius/nodius-ai/internal/termtext"
)

// reveal is strip for text a person decides on (a proposed change, an undo):
// Unicode direction controls, zero-width and other invisible characters are shown
// as ⟨U+202E⟩ rather than removed, so text built to read differently from what it
// is gives itself away.
func reveal(s string) string { return termtext.Reveal(s) }

// scroller is the scroll position of a dialog's body. The dialog may be drawn
// at several heights in one frame (the layout measures it, then draws it), so
// drawing never moves the position: it clamps a copy, and remembers what the
// last drawing showed, so that the keys stop at the bottom and a page moves by
// what was on screen.
type scroller struct {
	offset int
	last   int // the highest offset of the last drawing
	room   int // the lines of the last drawing (0: never drawn)
	n      int // the body lines of the last drawing
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
		s.pageUp()
	case key.Matches(k, km.PageDown):
		s.pageDown()
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

// pageDown moves so that the last line on screen becomes the first: a page is
// what is visible less one line of overlap, whatever the height, so no line is
// ever skipped (an indicator line covers no text that a page jumps over).
func (s *scroller) pageDown() {
	if s.room == 0 {
		s.offset++
		return
	}
	cur := min(s.offset, s.last)
	_, end := span(cur, s.n, s.room)
	next := cur + 1
	for o := next + 1; o <= s.last; o++ {
		if first, _ := span(o, s.n, s.room); first > end-1 {
			break
		}
		next = o
	}
	s.offset = next
}

// pageUp moves so that the first line on screen becomes the last.
func (s *scroller) pageUp() {
	if s.room == 0 {
		s.offset--
		return
	}
	cur := min(s.offset, s.last)
	first, _ := span(cur, s.n, s.room)
	prev := cur - 1
	for o := prev - 1; o >= 0; o-- {
		if _, end := span(o, s.n, s.room); end-1 < first {
			break
		}
		prev = o
	}
	s.offset = max(0, prev)
}

// isScrollKey reports the keys scrollKey takes.
func isScrollKey(k tea.KeyPressMsg) bool {
	return key.Matches(k, proposalKeys.scrollBindings()...)
}

// span is which body lines [first, end) a drawing of n lines at offset off in
// room lines shows: from 3 lines of room up, the first line is covered by "↑ …
// above" when there is text above, and the last by "↓ … more" when there is
// text below.
func span(off, n, room int) (first, end int) {
	room = max(1, room)
	off = max(0, min(off, n-room))
	end = min(n, off+room)
	if room < 3 {
		return off, end
	}
	if n-off > room {
		end--
	}
	first = off
	if off > 0 {
		first++
	}
	return first, end
}

// view is the part of body shown in room lines, saying what is above and below.
// Every line is reachable: the line an indicator covers is shown one step away.
func (s *scroller) view(th theme, body []string, room int) []string {
	room = max(1, room)
	s.last, s.room, s.n = max(0, len(body)-room), room, len(body)
	off := min(s.offset, s.last)
	first, end := span(off, len(body), room)
	view := make([]string, 0, room)
	if first > off {
		view = append(view, th.dim.Render("  ↑ "+plural(first, "line")+" above (↑/k)"))
	}
	view = append(view, body[first:end]...)
	if end < len(body) && len(view) < room {
		view = append(view, th.dim.Render("  ↓ "+plural(len(body)-end, "more line")+" (↓/j scrolls)"))
	}
	return view
}

// shown is the body lines [first, end) of the last drawing.
func (s *scroller) shown() (first, end int) {
	if s.room == 0 {
		return 0, 0
	}
	return span(min(s.offset, s.last), s.n, s.room)
}
