package graphdraw

import (
	"strings"

	"github.com/mattn/go-runewidth"
)

// Line directions a cell connects to. A cell's glyph is chosen from the set of
// directions every line through it adds, so lines that meet or cross join cleanly.
const (
	up uint8 = 1 << iota
	down
	left
	right
)

// style of a cell, turned into colour (or nothing) by render.
type style uint8

const (
	plain style = iota
	styleKey
	styleDim
	styleFocus
	styleAdded
	styleRemoved
	styleChanged
)

// sgr is the escape sequence that starts each style (basic ANSI colours, so the
// terminal's own palette decides the exact shade).
var sgr = [...]string{
	plain:        "",
	styleKey:     "\x1b[1m",
	styleDim:     "\x1b[2m",
	styleFocus:   "\x1b[1;36m",
	styleAdded:   "\x1b[1;32m",
	styleRemoved: "\x1b[31m",
	styleChanged: "\x1b[33m",
}

type cell struct {
	r      rune  // explicit glyph; 0 means "draw from bits" (or blank)
	bits   uint8 // line directions
	dashed bool  // a removed edge passes: dashed glyph when the line is straight
	st     style
	cont   bool // right half of a wide rune: render nothing
}

// canvas is a grid of cells that lines and text are drawn onto.
type canvas struct {
	w, h  int
	cells []cell
	glyph *glyphs
}

func newCanvas(w, h int, g *glyphs) *canvas {
	return &canvas{w: w, h: h, cells: make([]cell, w*h), glyph: g}
}

func (c *canvas) at(x, y int) *cell {
	if x < 0 || y < 0 || x >= c.w || y >= c.h {
		return nil
	}
	return &c.cells[y*c.w+x]
}

// hline adds a horizontal line on row y from x1 to x2 (either order).
func (c *canvas) hline(y, x1, x2 int, st style, dashed bool) {
	if x1 > x2 {
		x1, x2 = x2, x1
	}
	for x := x1; x <= x2; x++ {
		cl := c.at(x, y)
		if cl == nil {
			continue
		}
		if x > x1 {
			cl.bits |= left
		}
		if x < x2 {
			cl.bits |= right
		}
		if x1 == x2 {
			cl.bits |= left | right
		}
		c.paint(cl, st, dashed)
	}
}

// vline adds a vertical line on column x from y1 to y2 (either order).
func (c *canvas) vline(x, y1, y2 int, st style, dashed bool) {
	if y1 > y2 {
		y1, y2 = y2, y1
	}
	for y := y1; y <= y2; y++ {
		cl := c.at(x, y)
		if cl == nil {
			continue
		}
		if y > y1 {
			cl.bits |= up
		}
		if y < y2 {
			cl.bits |= down
		}
		c.paint(cl, st, dashed)
	}
}

// paint sets a line cell's style: a marked edge (added, removed) wins over an
// unmarked one sharing the cell, so a change is never hidden by a neighbour.
func (c *canvas) paint(cl *cell, st style, dashed bool) {
	if st != plain || cl.st == plain {
		cl.st = st
	}
	cl.dashed = cl.dashed || dashed
}

// put writes one explicit glyph.
func (c *canvas) put(x, y int, r rune, st style) {
	if cl := c.at(x, y); cl != nil {
		*cl = cell{r: r, st: st}
	}
}

// text writes s from x, at most max columns wide; wide runes take two cells.
// It returns the column after the last one written.
func (c *canvas) text(x, y int, s string, max int, st style) int {
	end := x + max
	for _, r := range s {
		w := runewidth.RuneWidth(r)
		if w == 0 {
			continue
		}
		if x+w > end {
			break
		}
		c.put(x, y, r, st)
		if w == 2 {
			if cl := c.at(x+1, y); cl != nil {
				*cl = cell{cont: true}
			}
		}
		x += w
	}
	return x
}

// render turns the grid into text, one line per row, trailing blanks trimmed, with
// colour escape sequences when color is set.
func (c *canvas) render(color bool) string {
	var b strings.Builder
	b.Grow(c.w*c.h + c.h)
	for y := 0; y < c.h; y++ {
		var line strings.Builder
		cur := plain
		lastVisible := 0 // length of line up to the last non-blank cell
		for x := 0; x < c.w; x++ {
			cl := &c.cells[y*c.w+x]
			if cl.cont {
				continue
			}
			r := cl.r
			if r == 0 {
				r = c.glyph.line(cl.bits, cl.dashed)
			}
			if color && r != ' ' && cl.st != cur {
				if cur != plain {
					line.WriteString("\x1b[0m")
				}
				line.WriteString(sgr[cl.st])
				cur = cl.st
			}
			line.WriteRune(r)
			if r != ' ' {
				lastVisible = line.Len()
			}
		}
		s := line.String()[:lastVisible]
		b.WriteString(s)
		if color && cur != plain && strings.Contains(s, "\x1b[") {
			b.WriteString("\x1b[0m")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// glyphs is a character set: box drawing, or plain ASCII for terminals and pipes
// that cannot show it.
type glyphs struct {
	lines                          [16]rune
	dashH, dashV                   rune
	arrowR, arrowL                 rune
	attachR, attachL               rune // border cell where a line leaves or enters a box
	ellipsis                       string
	sep                            string // between a node's type and label
	loop                           string
	added, removed, changed, focus string
	box                            [4]boxSet // plain, focus, added, removed
}

// boxSet is the border of one kind of box.
type boxSet struct{ tl, tr, bl, br, h, v rune }

const (
	boxPlain = iota
	boxFocus
	boxAdded
	boxRemoved
)

func (g *glyphs) line(bits uint8, dashed bool) rune {
	if dashed {
		switch bits {
		case left, right, left | right:
			return g.dashH
		case up, down, up | down:
			return g.dashV
		}
	}
	return g.lines[bits]
}

// lineRunes is the table of line pieces by the directions they join, built from
// one style's horizontal and vertical runes, its corners (┌ ┐ └ ┘), its tees
// (├ ┤ ┬ ┴) and its cross.
func lineRunes(h, v rune, corners, tees [4]rune, cross rune) [16]rune {
	var t [16]rune
	t[0] = ' '
	t[up], t[down], t[up|down] = v, v, v
	t[left], t[right], t[left|right] = h, h, h
	t[down|right], t[down|left], t[up|right], t[up|left] = corners[0], corners[1], corners[2], corners[3]
	t[up|down|right], t[up|down|left], t[left|right|down], t[left|right|up] = tees[0], tees[1], tees[2], tees[3]
	t[up|down|left|right] = cross
	return t
}

var unicodeGlyphs = glyphs{
	lines: lineRunes('─', '│', [4]rune{'┌', '┐', '└', '┘'}, [4]rune{'├', '┤', '┬', '┴'}, '┼'),
	dashH: '╌', dashV: '╎',
	arrowR: '▶', arrowL: '◀',
	attachR: '├', attachL: '┤',
	ellipsis: "…",
	sep:      " · ",
	loop:     "↺",
	added:    "+", removed: "−", changed: "~", focus: "",
	box: [4]boxSet{
		boxPlain:   {'┌', '┐', '└', '┘', '─', '│'},
		boxFocus:   {'┏', '┓', '┗', '┛', '━', '┃'},
		boxAdded:   {'╔', '╗', '╚', '╝', '═', '║'},
		boxRemoved: {'┌', '┐', '└', '┘', '╌', '╎'},
	},
}

var asciiGlyphs = glyphs{
	lines: lineRunes('-', '|', [4]rune{'+', '+', '+', '+'}, [4]rune{'+', '+', '+', '+'}, '+'),
	dashH: '.', dashV: ':',
	arrowR: '>', arrowL: '<',
	attachR: '+', attachL: '+',
	ellipsis: "~",
	sep:      ": ",
	loop:     "(loop)",
	added:    "+", removed: "-", changed: "~", focus: "",
	box: [4]boxSet{
		boxPlain:   {'+', '+', '+', '+', '-', '|'},
		boxFocus:   {'#', '#', '#', '#', '=', '#'},
		boxAdded:   {'+', '+', '+', '+', '=', '|'},
		boxRemoved: {'+', '+', '+', '+', '.', ':'},
	},
}
